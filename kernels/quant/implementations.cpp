// The quantized convolution's ordered list: the first entry whose supports() accepts the problem
// computes it (ACLNN_CONVBWD_KERNELS may name entries to ask first); the reference is last and supports
// everything. Every entry gives the same bits (kernels/core/quant_problem.h).
#include "kernels/kits/kit.h"
#include "kernels/quant/quant_entries.h"
#include "kernels/quant/quant_plan.h"
#include "kernels/ref/quant_ref.h"

namespace aclnn_cpu {

const std::vector<const QuantImpl*>& quant_implementations() {
  static const std::vector<const QuantImpl*> kList = {&kQuantDirectS8, &kQuantRef};
  return kList;
}

std::unique_ptr<QuantPlan> plan_quant(const QuantProblem& problem, const std::string& only, const char* api) {
  return QuantPlan::build(problem, cpu_features(), {{"output", "forward", &quant_implementations()}}, only, api);
}

}  // namespace aclnn_cpu
