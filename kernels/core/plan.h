// Phase 1 turns a ConvProblem into a ConvPlan; phase 2 only executes it.
//
// For each requested result the plan holds the implementation chosen from the ordered list of the pass
// that computes it (kernels/core/implementations.cpp: the first entry that supports the problem wins,
// the double-precision reference is last and supports everything) and the step it planned, with every
// tile size and task count fixed, and, after the gradInput and gradWeight of an entry that
// multiplies padding, the non-finite repair (kernels/ref/conv_ref.h). One WorkspaceLedger books all
// scratch: the dense copies of inputs that the steps ask for, and each step's own regions.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/cpu_isa.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/entry_list.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

// "forward", "backward_data", "backward_weight", "bias": the pass's name in the verbose mode.
const char* pass_name(ConvPass pass);
// What the front door calls the result of `pass`: the problem's grad_input_name ("gradInput", or the
// forward operators' "output") for the forward and backward-data passes, "gradWeight", "gradBias".
const char* result_name(const ConvProblem& problem, ConvPass pass);

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
  // Computes the step's result. Returns ACLNN_SUCCESS, or a status after report_error().
  virtual int run(const Workspace& workspace, const StepInputs& inputs) const = 0;
  // Parallel tasks this step offers (1 when serial); printed by the verbose mode.
  virtual int64_t tasks() const = 0;
  // More for the verbose mode ("isa=avx512"), or "".
  virtual std::string detail() const { return ""; }
};

// What an implementation's plan() may ask of the plan being built.
class PlanBuilder {
 public:
  PlanBuilder(const ConvProblem& problem, const CpuFeatures& cpu, WorkspaceLedger& ledger)
      : problem_(problem), cpu_(cpu), ledger_(ledger), threads_(problem.max_threads) {}
  const ConvProblem& problem() const { return problem_; }
  // The CPU the plan is made for (detected once per plan): the steps' instruction set, vendor and
  // pair-product engine.
  const CpuFeatures& cpu() const { return cpu_; }
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
  // Books a region that lives through the whole execution (later steps read what a step wrote there).
  WorkspaceLedger::Handle book_shared(const char* name, uint64_t count, uint64_t element_bytes) {
    return ledger_.book(name, count, element_bytes);
  }

  // Set by a gradInput step that tests W for Inf and NaN as it packs it (LaneWeights: a byte per block of
  // 16 lanes): `count` bytes in the shared area, one per packing task, each 1 where every value that task
  // packed was finite.
  // gradInput's non-finite repair (conv_ref.h) then skips its own pass over W where all are 1.
  // `transformed`: the flags test values the step computed from W (winograd's transformed weights, where a
  // finite weight may overflow), so W's own values cannot say which channels a 0 spoils: the repair then
  // recomputes every channel.
  struct WeightsTested {
    WorkspaceLedger::Handle flags = -1;
    int64_t count = 0;
    bool transformed = false;
  };
  WeightsTested weights_tested;
  // Set by a gradInput step whose transforms carry an Inf or NaN of its source into outputs the
  // convolution does not reach from it (winograd): `count` bytes in the shared area, one per task, each 1
  // where every source value that task read was finite. gradInput's non-finite repair recomputes the
  // whole result where one is 0.
  struct SourceTested {
    WorkspaceLedger::Handle flags = -1;
    int64_t count = 0;
  };
  SourceTested source_tested;

  bool float_wanted[3] = {false, false, false};  // src, wei, dst
  // For a joint step (ConvImpl::plan_joint): whether gradBias is wanted as `lanes` computes it
  // (reduce_bias), so that the step may compute it too, and whether it did (then no bias step).
  bool joint_bias_offered = false, joint_bias_taken = false;

 private:
  const ConvProblem& problem_;
  const CpuFeatures& cpu_;
  WorkspaceLedger& ledger_;
  int threads_;
};

// One entry of a convolution list: it implements one pass of the convolution operator.
struct ConvImpl {
  const char* name;    // what ACLNN_CONVBWD_KERNELS and the verbose mode call it ("gemm_flipped")
  const char* family;  // the entries that share its kernels ("gemm"): ACLNN_CONVBWD_KERNELS may name it
  ConvPass pass;       // the list it is in
  // Whether it computes its pass's result of this problem on this CPU (dtypes, layout, geometry, features).
  Support (*supports)(const ConvProblem& problem, const CpuFeatures& cpu);
  // Books its workspace and fixes its tiling; called only when supports() said yes.
  std::unique_ptr<ConvStep> (*plan)(const ConvProblem& problem, PlanBuilder& builder);
  // Optional, on a forward or backward-data entry: one step that computes gradInput and gradWeight together (the
  // inputs read once for both), planned where `joint_weight` is the entry chosen for gradWeight and
  // supports_joint() accepts the problem; it may take gradBias too (PlanBuilder::joint_bias_*). Its
  // results are those of the separate steps, bit for bit.
  const ConvImpl* joint_weight = nullptr;
  Support (*supports_joint)(const ConvProblem& problem, const CpuFeatures& cpu) = nullptr;
  std::unique_ptr<ConvStep> (*plan_joint)(const ConvProblem& problem, PlanBuilder& builder) = nullptr;
  // Whether its products take zeros for the padding (staged or unrolled sources), so that an Inf or
  // NaN meeting the padding gives NaN where the gradient has no term: the plan then follows its
  // gradInput or gradWeight step with the non-finite repair (kernels/ref/conv_ref.h).
  bool multiplies_padding = true;
  // On a gradBias entry: whether it sums gradOutput in eight double lanes per channel, the order a
  // joint step reproduces (so that the joint step may compute gradBias in its stead).
  bool bias_in_lanes = false;
};

// The most the workspace grows from one thread to t threads (ConvPlan::build): kThreadsWorkspaceGrowth
// times its one-thread size, or by kThreadScratchBytes per thread past the first where that is more
// (a bounded per-thread scratch, about a core's share of L2: a problem whose one-thread workspace is
// small, a forward operator's tile buffers alone, still runs on every thread; so do gemm_col2im's
// column blocks of 1-2 MiB a thread: at 1 MiB the suite's stem gradInput and tconv1d forward ran on 8
// and 11 of 16 threads).
constexpr double kThreadsWorkspaceGrowth = 1.5;
constexpr double kThreadScratchBytes = 2 << 20;

// The workspace budget on `threads` threads of a plan whose one-thread workspace is `one_thread` bytes.
inline double workspace_budget(double one_thread, int threads) {
  return one_thread + std::max((kThreadsWorkspaceGrowth - 1) * one_thread, kThreadScratchBytes * (threads - 1));
}

// The convolution operator's ordered list for one pass (kernels/core/implementations.cpp).
const std::vector<const ConvImpl*>& convolution_implementations(ConvPass pass);
// The same entry in another pass's list (a kernel that computes both the forward and the backward-data
// pass: its functions tell the two apart by the problem's input_grad).
constexpr ConvImpl for_pass(ConvImpl impl, ConvPass pass) {
  impl.pass = pass;
  return impl;
}

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
  // result, "<result>,<pass>,<chosen>,<refusals>", the refusals being every entry tried before it as
  // "<entry>: <reason>" joined by "; " (reasons hold no commas), e.g.
  // "gradInput,backward_data,gemm_flipped,small_group: more than 16 channels per group; depthwise: ...".
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
  WorkspaceLedger ledger_;
  std::vector<Chosen> steps_;
  std::vector<std::unique_ptr<ConvStep>> repairs_;  // run after every step
  Staging staging_[3];                              // src, wei, dst
  std::vector<std::string> choices_;
};

// The value of ACLNN_CONVBWD_KERNELS ("" when unset).
std::string implementation_filter();

}  // namespace aclnn_cpu
