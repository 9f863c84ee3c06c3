// Phase 1 turns a ConvProblem into a ConvPlan; phase 2 only executes it.
//
// For each requested gradient the plan holds the implementation chosen from that gradient's
// ordered list (kernels/core/implementations.cpp: the first entry that supports the problem wins, the
// double-precision reference is last and supports everything) and the step it planned, with every
// tile size and task count fixed, and, after the gradInput and gradWeight of an entry that
// multiplies padding, the non-finite repair (kernels/ref/conv_ref.h). One WorkspaceLedger books all
// scratch: the dense copies of inputs that the steps ask for, and each step's own regions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/core/conv_problem.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

enum class Gradient { kInput, kWeight, kBias };
const char* gradient_name(Gradient gradient);  // "gradInput", "gradWeight", "gradBias"

// The inputs (src, wei, dst) as dense (N, C, D, H, W) float arrays at phase 2, cubeMathType
// rounding applied; nullptr where no step asked for that input.
struct DenseInputs {
  const float* src = nullptr;
  const float* wei = nullptr;
  const float* dst = nullptr;
};
struct StepInputs {
  DenseInputs f32;
};

// A planned piece of phase-2 work.
class ConvStep {
 public:
  virtual ~ConvStep() = default;
  // Computes the step's gradient. Returns ACLNN_SUCCESS, or a status after report_error().
  virtual int run(const Workspace& workspace, const StepInputs& inputs) const = 0;
  // Parallel tasks this step offers (1 when serial); printed by the verbose mode.
  virtual int64_t tasks() const = 0;
  // More for the verbose mode ("isa=avx512"), or "".
  virtual std::string detail() const { return ""; }
};

// What an implementation's plan() may ask of the plan being built.
class PlanBuilder {
 public:
  PlanBuilder(const ConvProblem& problem, WorkspaceLedger& ledger)
      : problem_(problem), ledger_(ledger), threads_(problem.max_threads) {}
  const ConvProblem& problem() const { return problem_; }
  // The threads the step being planned runs on (and books per-thread scratch for): the problem's,
  // or fewer where its scratch would grow the workspace past its budget (ConvPlan::build).
  int threads() const { return threads_; }
  void set_threads(int threads) { threads_ = threads; }
  // Books the step's scratch: `copies` slices of `count` elements (one per thread, or one). Valid
  // while the step runs; the next step reuses the same bytes.
  WorkspaceLedger::Handle book_scratch(const char* name, uint64_t count, uint64_t element_bytes, uint64_t copies = 1) {
    return ledger_.book_step(name, count, element_bytes, copies);
  }
  // Asks for inputs as dense float arrays (read in place when they already are one and need no
  // rounding). Several steps asking for the same one share it.
  void need_float_inputs(bool src, bool wei, bool dst);

  bool float_wanted[3] = {false, false, false};  // src, wei, dst
  // For a joint step (ConvImpl::plan_joint): whether gradBias is wanted as `lanes` computes it
  // (reduce_bias), so that the step may compute it too, and whether it did (then no bias step).
  bool joint_bias_offered = false, joint_bias_taken = false;

 private:
  const ConvProblem& problem_;
  WorkspaceLedger& ledger_;
  int threads_;
};

// One entry of an implementation list.
struct ConvImpl {
  const char* name;
  Gradient gradient;
  // Whether it computes its gradient of this problem (dtypes, layout, geometry, CPU features).
  bool (*supports)(const ConvProblem& problem);
  // Books its workspace and fixes its tiling; called only when supports() said yes.
  std::unique_ptr<ConvStep> (*plan)(const ConvProblem& problem, PlanBuilder& builder);
  // Optional, on a gradInput entry: one step that computes gradInput and gradWeight together (the
  // inputs read once for both), planned where this entry's name was chosen for both gradients and
  // supports_joint() accepts the problem; it may take gradBias too (PlanBuilder::joint_bias_*). Its
  // results are those of the separate steps, bit for bit.
  bool (*supports_joint)(const ConvProblem& problem) = nullptr;
  std::unique_ptr<ConvStep> (*plan_joint)(const ConvProblem& problem, PlanBuilder& builder) = nullptr;
  // Whether its products take zeros for the padding (staged or unrolled sources), so that an Inf or
  // NaN meeting the padding gives NaN where the gradient has no term: the plan then follows its
  // gradInput or gradWeight step with the non-finite repair (kernels/ref/conv_ref.h).
  bool multiplies_padding = true;
};

// The most the workspace grows from one thread to any thread count (ConvPlan::build): this many
// times its one-thread size, or by kThreadsWorkspaceSlack bytes where that is more (a small
// problem's scratch is not worth a thread).
constexpr double kThreadsWorkspaceGrowth = 1.5;
constexpr double kThreadsWorkspaceSlack = 1 << 20;

// The ordered list for one gradient (kernels/core/implementations.cpp).
const std::vector<const ConvImpl*>& implementations(Gradient gradient);

class ConvPlan {
 public:
  // Plans every requested gradient of `problem` with up to problem.max_threads threads. `only` is a
  // comma-separated list of implementation names (ACLNN_CONVBWD_KERNELS): in each list the first
  // supporting entry named there wins, and a list without such an entry keeps its own order.
  // The workspace stays within kThreadsWorkspaceGrowth times its size for one thread (or that size
  // and kThreadsWorkspaceSlack): a step whose per-thread scratch would take it further runs on
  // fewer threads (the same bits on any number).
  // Returns nullptr when the workspace would not fit in 64 bits (error reported for `api`).
  static std::unique_ptr<ConvPlan> build(const ConvProblem& problem, const std::string& only, const char* api);

  uint64_t workspace_bytes() const { return ledger_.total_bytes(); }
  // Phase 2: packs the inputs the steps asked for, then runs the steps in order.
  int execute(void* workspace) const;
  // "gradInput=gemm:tasks=64:isa=avx512 gradWeight=ref:tasks=8 ...", for the verbose mode.
  std::string describe() const;
  // The implementation chosen for `gradient` (nullptr when not requested).
  const ConvImpl* chosen(Gradient gradient) const;
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
    std::unique_ptr<ConvStep> step;  // null where the gradInput step computes this gradient too
    int threads;                     // it runs on (fewer than the plan's where its scratch is capped)
  };
  // Where one input comes from at phase 2.
  struct Staging {
    const float* f32_in_place = nullptr;
    WorkspaceLedger::Handle f32 = -1;  // a packed copy
  };

  ConvProblem problem_;
  WorkspaceLedger ledger_;
  std::vector<Chosen> steps_;
  std::vector<std::unique_ptr<ConvStep>> repairs_;  // run after every step
  Staging staging_[3];                              // src, wei, dst
};

// The value of ACLNN_CONVBWD_KERNELS ("" when unset).
std::string implementation_filter();

// Threads a run may use: OpenMP's current maximum (1 without OpenMP).
int available_threads();

}  // namespace aclnn_cpu
