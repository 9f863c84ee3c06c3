#include "kernels/deform/deform_plan.h"

#include "kernels/kits/kit.h"

namespace aclnn_cpu {
namespace {

// Whether a pass has anything to write: an empty result gets no step (its sizes reach no kernel).
bool writes_something(const DeformProblem& p, DeformPass pass) {
  switch (pass) {
    case DeformPass::kForward: return p.output.numel() > 0 || (p.want_columns && p.columns.numel() > 0);
    case DeformPass::kBackwardData: return p.grad_input.numel() > 0 || p.grad_offset.numel() > 0;
    case DeformPass::kBackwardWeight: return p.grad_weight.numel() > 0;
    default: return p.grad_bias.numel() > 0;
  }
}

}  // namespace

const char* pass_name(DeformPass pass) {
  switch (pass) {
    case DeformPass::kForward: return "forward";
    case DeformPass::kBackwardData: return "backward_data";
    case DeformPass::kBackwardWeight: return "backward_weight";
    default: return "bias";
  }
}

const char* result_name(DeformPass pass) {
  switch (pass) {
    case DeformPass::kForward: return "out";
    case DeformPass::kBackwardData: return "gradInput+gradOffset";
    case DeformPass::kBackwardWeight: return "gradWeight";
    default: return "gradBias";
  }
}

std::unique_ptr<DeformPlan> plan_deformable(const DeformProblem& problem, const std::string& only, const char* api) {
  std::vector<ListPass<DeformImpl>> passes;
  for (DeformPass pass : kDeformPasses) {
    if ((pass == DeformPass::kForward) == problem.backward) continue;  // the operator's own passes
    if (!writes_something(problem, pass)) continue;
    passes.push_back({result_name(pass), pass_name(pass), &deformable_implementations(pass)});
  }
  return DeformPlan::build(problem, cpu_features(), passes, only, api);
}

}  // namespace aclnn_cpu
