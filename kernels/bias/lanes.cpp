// gradBias as a vector reduction: per channel, a double sum over samples and space in eight
// fixed lanes (vectorises; the order never depends on the thread count). cubeMathType does not
// apply to it.
#include <memory>

#include "kernels/common/pack.h"
#include "kernels/core/plan.h"

namespace aclnn_cpu {
namespace {

class LanesBias final : public ConvStep {
 public:
  LanesBias(const ConvProblem& p, PlanBuilder& b)
      : dy_(p.bias_source), out_(p.grad_bias), threads_(b.threads()), conversions_(b.cpu().conversions) {}
  int64_t tasks() const override { return dy_.shape[1]; }
  int run(const Workspace&, const StepInputs&) const override {
    reduce_bias(dy_, out_, threads_, conversions_);
    return 0;
  }

 private:
  View5 dy_, out_;
  int threads_;
  const Conversions16* conversions_;  // the plan's kit's
};

Support supports(const ConvProblem&, const CpuFeatures&) { return kSupported; }  // any dtype and layout

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<LanesBias>(p, builder);
}

}  // namespace

extern const ConvImpl kLanesBias = [] {
  ConvImpl impl{"lanes", "lanes", ConvPass::kBias, supports, plan};
  impl.bias_in_lanes = true;
  return impl;
}();

}  // namespace aclnn_cpu
