// Phase 1 turns a DeformProblem into a DeformPlan; phase 2 only executes it. For each requested
// result the plan holds the entry chosen from its pass's ordered list (implementations.cpp) and the
// step it planned; one WorkspaceLedger books all scratch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/core/cpu_isa.h"
#include "kernels/core/deform_problem.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

// "forward", "backward_data", "backward_weight", "bias".
const char* pass_name(DeformPass pass);
// The results a pass writes, as the operator names them: "out" (and deformOut), "gradInput+gradOffset",
// "gradWeight", "gradBias".
const char* result_name(DeformPass pass);
// The operator's ordered list for one pass (implementations.cpp).
const std::vector<const DeformImpl*>& deformable_implementations(DeformPass pass);

class DeformPlan {
 public:
  // Plans every result of `problem` (the forward's, or the backward's) on up to problem.max_threads
  // threads; `only`: ACLNN_CONVBWD_KERNELS (entry_list.h's choose_from). nullptr when the workspace
  // would not fit in 64 bits (error reported for `api`).
  static std::unique_ptr<DeformPlan> build(const DeformProblem& problem, const std::string& only, const char* api);

  uint64_t workspace_bytes() const { return ledger_.total_bytes(); }
  int execute(void* workspace) const;
  // "out=ref:tasks=8 ...", for the verbose mode.
  std::string describe() const;
  // One line per result, "<result>,<pass>,<chosen>,<refusals>,<decided>" (ConvPlan::choices' form).
  const std::vector<std::string>& choices() const { return choices_; }
  int threads() const { return problem_.max_threads; }

 private:
  DeformPlan() = default;
  struct Chosen {
    const DeformImpl* impl;
    std::unique_ptr<DeformStep> step;
  };
  DeformProblem problem_;
  CpuFeatures cpu_;
  WorkspaceLedger ledger_;
  std::vector<Chosen> steps_;
  std::vector<std::string> choices_;
};

}  // namespace aclnn_cpu
