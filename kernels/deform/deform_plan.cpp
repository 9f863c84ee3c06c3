#include "kernels/deform/deform_plan.h"

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"
#include "kernels/core/entry_list.h"
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

std::unique_ptr<DeformPlan> DeformPlan::build(const DeformProblem& problem, const std::string& only, const char* api) {
  std::unique_ptr<DeformPlan> plan(new DeformPlan());
  plan->problem_ = problem;
  const DeformProblem& p = plan->problem_;
  plan->cpu_ = cpu_features();  // (the settings read here, not at phase 2)
  for (DeformPass pass : kDeformPasses) {
    if ((pass == DeformPass::kForward) == p.backward) continue;  // the operator's own passes
    if (!writes_something(p, pass)) continue;
    // (its entries keep no decision: the choices line's last field stays empty)
    const ListChoice<DeformImpl> choice = choose_from(deformable_implementations(pass), p, plan->cpu_, only);
    plan->choices_.push_back(
        format("%s,%s,%s,%s,", result_name(pass), pass_name(pass), choice.entry->name, choice.refusals.c_str()));
    plan->steps_.push_back({choice.entry, nullptr});
  }
  DeformPlanBuilder builder(plan->cpu_, plan->ledger_, p.max_threads);
  for (Chosen& chosen : plan->steps_) {
    plan->ledger_.begin_step();
    chosen.step = chosen.impl->plan(p, builder);
  }
  if (plan->ledger_.overflowed()) {
    report_error(format("%s: the workspace this problem needs exceeds 2^64 bytes", api));
    return nullptr;
  }
  return plan;
}

int DeformPlan::execute(void* buffer) const {
  const Workspace workspace(ledger_, buffer);
  for (const Chosen& chosen : steps_) {
    const int status = chosen.step->run(workspace);
    if (status != ACLNN_SUCCESS) return status;
  }
  return ACLNN_SUCCESS;
}

std::string DeformPlan::describe() const {
  std::string text;
  for (const Chosen& chosen : steps_) {
    text += format("%s%s=%s:tasks=%lld", text.empty() ? "" : " ", result_name(chosen.impl->pass), chosen.impl->name,
                   static_cast<long long>(chosen.step->tasks()));
    const std::string detail = chosen.step->detail();
    if (!detail.empty()) text += ":" + detail;
  }
  return text;
}

}  // namespace aclnn_cpu
