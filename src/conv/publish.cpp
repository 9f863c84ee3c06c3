#include "conv/publish.h"

#include <memory>

#include "common/dtype.h"
#include "common/log.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/core/plan.h"
#include "meta/meta_objects.h"
#include "meta/plan_executor.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {
namespace {

// A convolution call, planned for the host from the convolution's lists.
class ConvolutionCall final : public OperatorProblem {
 public:
  explicit ConvolutionCall(const ConvProblem& problem) : problem_(problem) {}
  std::unique_ptr<OperatorPlan> plan_on_host(int threads, const char* api) const override {
    ConvProblem planned = problem_;
    planned.max_threads = threads;
    planned.forced_choices = forced_choices();
    std::unique_ptr<ConvPlan> plan = ConvPlan::build(planned, implementation_filter(), api);
    if (plan == nullptr) return nullptr;
    return std::make_unique<HostPlan<ConvPlan>>(std::move(plan));
  }

 private:
  ConvProblem problem_;
};

}  // namespace

std::string dims_text(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "x" : "") + std::to_string(values[i]);
  return text;
}

std::string tensor_text(const char* name, const aclTensor* tensor) {
  if (tensor == nullptr) return format("%s:none", name);
  return format("%s:%s:%s", name, dtype_name(tensor->dtype), dims_text(tensor->view_shape).c_str());
}

aclnnStatus publish(const ConvProblem& problem, const std::vector<UsedTensor>& used, const char* api,
                    const char* run_api, std::string call, uint64_t* workspace_size, aclOpExecutor** executor) {
  return publish(ConvolutionCall(problem), used, api, run_api, std::move(call), workspace_size, executor);
}

aclnnStatus publish(const OperatorProblem& problem, const std::vector<UsedTensor>& used, const char* api,
                    const char* run_api, std::string call, uint64_t* workspace_size, aclOpExecutor** executor) {
  std::unique_ptr<OperatorPlan> plan = device_backend().plan(problem, api);
  if (plan == nullptr) return ACLNN_ERR_PARAM_INVALID;
  auto planned = std::make_unique<PlanExecutor>(std::move(plan), run_api, std::move(call), phase2_refusal(used));
  *workspace_size = planned->workspace_bytes();
  *executor = register_executor(std::move(planned));
  return ACLNN_SUCCESS;
}

}  // namespace aclnn_cpu
