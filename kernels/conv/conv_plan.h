// Phase 1 turns a ConvProblem into a ConvPlan; phase 2 only executes it.
//
// For each requested result the plan holds the implementation chosen from the ordered list of the pass
// that computes it (kernels/conv/implementations.cpp: the first entry that supports the problem wins,
// the double-precision reference is last and supports everything) and the step it planned, with every
// tile size and task count fixed, and, after the gradInput and gradWeight of an entry that
// multiplies padding, the non-finite repair (kernels/ref/conv_ref.h). One WorkspaceLedger books all
// scratch: the dense copies of inputs that the steps ask for, and each step's own regions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/plan.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

// "forward", "backward_data", "backward_weight", "bias": the pass's name in the verbose mode.
const char* pass_name(ConvPass pass);
// What the front door calls the result of `pass`: the problem's grad_input_name ("gradInput", or the
// forward operators' "output") for the forward and backward-data passes, "gradWeight", "gradBias".
const char* result_name(const ConvProblem& problem, ConvPass pass);

// The convolution operator's ordered list for one pass (kernels/conv/implementations.cpp).
const std::vector<const ConvImpl*>& convolution_implementations(ConvPass pass);

class ConvPlan {
 public:
  // Plans every requested result of `problem` with up to problem.max_threads threads. `only` is a
  // comma-separated list of entry or family names (ACLNN_CONVBWD_KERNELS): in each list the first
  // supporting entry named there wins, and a list without such an entry keeps its own order.
  // The workspace stays within workspace_budget(its size for one thread, threads): a step whose
  // per-thread scratch would take it further runs on fewer threads (the same bits on any number).
  // Returns nullptr when the workspace would not fit in 64 bits (error reported for `api`).
  static std::unique_ptr<ConvPlan> build(const ConvProblem& problem, const std::string& only, const char* api);

  uint64_t workspace_bytes() const { return ledger_.total_bytes(); }
  // Phase 2: packs the inputs the steps asked for, then runs the steps in order.
  int execute(void* workspace) const;
  // "gradInput=gemm_flipped:tasks=64:isa=avx512 gradWeight=ref:tasks=8 ...", for the verbose mode.
  std::string describe() const;
  // How each requested result's entry was chosen, for ACLNN_CONVBWD_VERBOSE=2: one line per
  // result, "<result>,<pass>,<chosen>,<refusals>,<decided>", the refusals being every entry tried before
  // it as "<entry>: <reason>" joined by "; " (reasons hold no commas), e.g.
  // "gradInput,backward_data,gemm_flipped,small_group: more than 16 channels per group; depthwise: ...,",
  // and <decided> what the chosen entry decided, with its reasons (EntryDecision::describe), or "".
  const std::vector<std::string>& choices() const { return choices_; }
  // The implementation chosen for `pass` (nullptr when not requested).
  const ConvImpl* chosen(ConvPass pass) const;
  int threads() const { return problem_.max_threads; }

 private:
  ConvPlan() = default;
  // Plans the steps of the chosen entries (`joint`: gradInput's and gradWeight's in one), then the
  // repairs, then books the inputs' dense copies; step i (in that order) on threads_for(i) threads.
  // Returns each step's bytes in the step area.
  std::vector<uint64_t> plan_steps(const ConvImpl* const chosen[3], bool joint,
                                   const std::function<int(size_t)>& threads_for);
  // The threads of each step that keep the workspace within its budget (see build()); empty for one
  // thread.
  std::vector<int> threads_within_budget(const ConvImpl* const chosen[3], bool joint) const;

  struct Chosen {
    const ConvImpl* impl;
    std::unique_ptr<ConvStep> step;  // null where the gradInput step computes this result too
    int threads;                     // it runs on (fewer than the plan's where its scratch is capped)
  };
  // Where one input comes from at phase 2.
  struct Staging {
    const float* f32_in_place = nullptr;
    WorkspaceLedger::Handle f32 = -1;  // a packed copy
  };

  ConvProblem problem_;
  CpuFeatures cpu_;  // detected once, when the plan is built
  // What each chosen entry decided (gradInput's, gradWeight's, gradBias's), handed to its plan().
  std::shared_ptr<const EntryDecision> decisions_[3];
  WorkspaceLedger ledger_;
  std::vector<Chosen> steps_;
  std::vector<std::unique_ptr<ConvStep>> repairs_;  // run after every step
  Staging staging_[3];                              // src, wei, dst
  std::vector<std::string> choices_;
};

// The value of ACLNN_CONVBWD_VARIANTS ("" when unset): ConvProblem::forced_choices. A name that is not
// one of named_choices() (or its no_<choice>) is warned of.
std::string forced_choices();
// Every choice an entry's decision names (take_choice), which ACLNN_CONVBWD_VARIANTS may force.
const std::vector<std::string>& named_choices();

}  // namespace aclnn_cpu
