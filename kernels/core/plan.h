// What every convolution entry plans against: the entry (ConvImpl: its pass, supports, plan), the
// step it plans (ConvStep) and what it may ask of the plan being built (PlanBuilder). The plan itself,
// which chooses the entries and runs their steps, is kernels/conv/conv_plan.h.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/entry_list.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

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
  void need_float_inputs(bool src, bool wei, bool dst) {
    float_wanted[0] |= src, float_wanted[1] |= wei, float_wanted[2] |= dst;
  }
  // What the entry being planned decided in its supports() (Support::decision), as its own Decision
  // type; null where it kept no decision of that type.
  template <class Decision>
  const Decision* decided() const {
    return dynamic_cast<const Decision*>(decision_);
  }
  void set_decision(const EntryDecision* decision) { decision_ = decision; }
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
  const EntryDecision* decision_ = nullptr;
};

// One entry of a convolution list: it implements one pass of the convolution operator.
struct ConvImpl {
  const char* name;    // what ACLNN_CONVBWD_KERNELS and the verbose mode call it ("gemm_flipped")
  const char* family;  // the entries that share its kernels ("gemm"): ACLNN_CONVBWD_KERNELS may name it
  ConvPass pass;       // the list it is in
  // Whether it computes its pass's result of this problem on this CPU (dtypes, layout, geometry, features).
  Support (*supports)(const ConvProblem& problem, const CpuFeatures& cpu);
  // Books its workspace from what supports() decided (PlanBuilder::decided); called only when supports()
  // said yes.
  std::unique_ptr<ConvStep> (*plan)(const ConvProblem& problem, PlanBuilder& builder);
  // Optional, on a forward or backward-data entry: one step that computes gradInput and gradWeight together (the
  // inputs read once for both), planned where `joint_weight` is the entry chosen for gradWeight (both
  // entries' supports() having accepted the problem, the joint step needs no check of its own); it
  // books from the gradInput entry's decision and may take gradBias too (PlanBuilder::joint_bias_*).
  // Its results are those of the separate steps, bit for bit.
  const ConvImpl* joint_weight = nullptr;
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

// The same entry in another pass's list (a kernel that computes both the forward and the backward-data
// pass: its functions tell the two apart by the problem's input_grad).
constexpr ConvImpl for_pass(ConvImpl impl, ConvPass pass) {
  impl.pass = pass;
  return impl;
}

}  // namespace aclnn_cpu
