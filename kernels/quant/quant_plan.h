// Phase 1 turns a QuantProblem into a plan (kernels/core/list_plan.h) from the operator's one ordered
// list (implementations.cpp); phase 2 only executes it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/core/list_plan.h"
#include "kernels/core/quant_problem.h"

namespace aclnn_cpu {

const std::vector<const QuantImpl*>& quant_implementations();

using QuantPlan = ListPlan<QuantImpl, QuantProblem>;
// Plans `problem`'s output on up to problem.max_threads threads; `only`: ACLNN_CONVBWD_KERNELS. nullptr
// when the workspace would not fit in 64 bits (error reported for `api`).
std::unique_ptr<QuantPlan> plan_quant(const QuantProblem& problem, const std::string& only, const char* api);

}  // namespace aclnn_cpu
