// Phase 1 turns a DeformProblem into a plan (kernels/core/list_plan.h); phase 2 only executes it. For
// each requested result the plan holds the entry chosen from its pass's ordered list
// (implementations.cpp) and the step it planned.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/core/deform_problem.h"
#include "kernels/core/list_plan.h"

namespace aclnn_cpu {

// "forward", "backward_data", "backward_weight", "bias".
const char* pass_name(DeformPass pass);
// The results a pass writes, as the operator names them: "out" (and deformOut), "gradInput+gradOffset",
// "gradWeight", "gradBias".
const char* result_name(DeformPass pass);
// The operator's ordered list for one pass (implementations.cpp).
const std::vector<const DeformImpl*>& deformable_implementations(DeformPass pass);

using DeformPlan = ListPlan<DeformImpl, DeformProblem>;
// Plans every result of `problem` (the forward's, or the backward's) that has something to write, on up
// to problem.max_threads threads; `only`: ACLNN_CONVBWD_KERNELS. nullptr when the workspace would not fit
// in 64 bits (error reported for `api`).
std::unique_ptr<DeformPlan> plan_deformable(const DeformProblem& problem, const std::string& only, const char* api);

}  // namespace aclnn_cpu
