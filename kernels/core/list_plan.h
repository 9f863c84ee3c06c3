// The plan of an operator that is not the convolution (deformable convolution, quantized
// convolution): one ordered list of entries per pass, the first entry whose supports() accepts the
// problem planning that pass's step (entry_list.h's choose_from), one WorkspaceLedger booking all
// scratch. Phase 1 builds it; phase 2 only runs its steps in order. (The convolution keeps its own
// ConvPlan: joint steps, float staging and the non-finite repair are its alone.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/entry_list.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

// A planned piece of phase-2 work.
class OperatorStep {
 public:
  virtual ~OperatorStep() = default;
  // Computes the step's results. Returns ACLNN_SUCCESS, or a status after report_error().
  virtual int run(const Workspace& workspace) const = 0;
  virtual int64_t tasks() const = 0;                 // parallel tasks it offers, for the verbose mode
  virtual std::string detail() const { return ""; }  // more for the verbose mode, or ""
};

// What an entry's plan() may ask of the plan being built.
class StepBuilder {
 public:
  StepBuilder(const CpuFeatures& cpu, WorkspaceLedger& ledger, int threads)
      : cpu_(cpu), ledger_(ledger), threads_(threads) {}
  const CpuFeatures& cpu() const { return cpu_; }
  int threads() const { return threads_; }
  // The step's scratch: `copies` slices of `count` elements (one per thread, or one), valid while it runs.
  WorkspaceLedger::Handle book_scratch(const char* name, uint64_t count, uint64_t element_bytes, uint64_t copies = 1) {
    return ledger_.book_step(name, count, element_bytes, copies);
  }

 private:
  const CpuFeatures& cpu_;
  WorkspaceLedger& ledger_;
  int threads_;
};

// One pass of an operator as its plan asks it: the results it writes ("out"), its name ("forward")
// and its ordered list (the reference last: it supports everything).
template <class Impl>
struct ListPass {
  const char* result;
  const char* name;
  const std::vector<const Impl*>* list;
};

// Impl: an entry with `name`, `family`, `supports(const Problem&, const CpuFeatures&)` and
// `plan(const Problem&, StepBuilder&)` returning a std::unique_ptr<OperatorStep>.
template <class Impl, class Problem>
class ListPlan {
 public:
  // Plans `passes` of `problem` in order for `cpu` (kernels/kits/kit.h's cpu_features(), detected at
  // phase 1), on up to problem.max_threads threads; `only`: ACLNN_CONVBWD_KERNELS. nullptr when the
  // workspace would not fit in 64 bits (error reported for `api`).
  static std::unique_ptr<ListPlan> build(const Problem& problem, const CpuFeatures& cpu,
                                         const std::vector<ListPass<Impl>>& passes, const std::string& only,
                                         const char* api) {
    std::unique_ptr<ListPlan> plan(new ListPlan());
    plan->problem_ = problem;
    plan->cpu_ = cpu;
    for (const ListPass<Impl>& pass : passes) {
      // (these entries keep no decision: the choices line's last field stays empty)
      const ListChoice<Impl> choice = choose_from(*pass.list, plan->problem_, plan->cpu_, only);
      plan->choices_.push_back(
          format("%s,%s,%s,%s,", pass.result, pass.name, choice.entry->name, choice.refusals.c_str()));
      plan->steps_.push_back({choice.entry, pass.result, nullptr});
    }
    StepBuilder builder(plan->cpu_, plan->ledger_, plan->problem_.max_threads);
    for (Chosen& chosen : plan->steps_) {
      plan->ledger_.begin_step();
      chosen.step = chosen.impl->plan(plan->problem_, builder);
    }
    if (plan->ledger_.overflowed()) {
      report_error(format("%s: the workspace this problem needs exceeds 2^64 bytes", api));
      return nullptr;
    }
    return plan;
  }

  uint64_t workspace_bytes() const { return ledger_.total_bytes(); }
  int execute(void* buffer) const {
    const Workspace workspace(ledger_, buffer);
    for (const Chosen& chosen : steps_) {
      const int status = chosen.step->run(workspace);
      if (status != ACLNN_SUCCESS) return status;
    }
    return ACLNN_SUCCESS;
  }
  // "out=ref:tasks=8 ...", for the verbose mode.
  std::string describe() const {
    std::string text;
    for (const Chosen& chosen : steps_) {
      text += format("%s%s=%s:tasks=%lld", text.empty() ? "" : " ", chosen.result, chosen.impl->name,
                     static_cast<long long>(chosen.step->tasks()));
      const std::string detail = chosen.step->detail();
      if (!detail.empty()) text += ":" + detail;
    }
    return text;
  }
  // One line per result, "<result>,<pass>,<chosen>,<refusals>,<decided>" (ConvPlan::choices' form).
  const std::vector<std::string>& choices() const { return choices_; }
  int threads() const { return problem_.max_threads; }

 private:
  ListPlan() = default;
  struct Chosen {
    const Impl* impl;
    const char* result;
    std::unique_ptr<OperatorStep> step;
  };
  Problem problem_;
  CpuFeatures cpu_;
  WorkspaceLedger ledger_;
  std::vector<Chosen> steps_;
  std::vector<std::string> choices_;
};

}  // namespace aclnn_cpu
