// aclnnQuantConvolution's entry points: validate -> the problem -> plan from the operator's own list
// (phase 1); run on a stream (phase 2).
#include "aclnnop/aclnn_quant_convolution.h"

#include <memory>
#include <string>

#include "common/log.h"
#include "conv/publish.h"
#include "kernels/core/entry_list.h"
#include "kernels/quant/quant_plan.h"
#include "meta/meta_objects.h"
#include "quant/quant_convolution.h"

namespace aclnn_cpu {
namespace {

// A quantized convolution call, planned for the host from the operator's list.
class QuantCall final : public OperatorProblem {
 public:
  explicit QuantCall(const QuantProblem& problem) : problem_(problem) {}
  std::unique_ptr<OperatorPlan> plan_on_host(int threads, const char* api) const override {
    QuantProblem planned = problem_;
    planned.max_threads = threads;
    std::unique_ptr<QuantPlan> plan = plan_quant(planned, implementation_filter(), api);
    if (plan == nullptr) return nullptr;
    return std::make_unique<HostPlan<QuantPlan>>(std::move(plan));
  }

 private:
  QuantProblem problem_;
};

std::string call_text(const QuantConvolutionArgs& a) {
  return format("%s %s %s %s %s,stride=%s padding=%s dilation=%s groups=%lld offsetx=%d roundMode=%s",
                tensor_text("input", a.input).c_str(), tensor_text("weight", a.weight).c_str(),
                tensor_text("bias", a.bias).c_str(), tensor_text("scale", a.scale).c_str(),
                tensor_text("output", a.output).c_str(), dims_text(a.stride->values).c_str(),
                dims_text(a.padding->values).c_str(), dims_text(a.dilation->values).c_str(),
                static_cast<long long>(a.groups), a.offsetx, a.round_mode == nullptr ? "null" : "given");
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclnnStatus aclnnQuantConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                  const aclTensor* bias, const aclTensor* scale,
                                                  const aclTensor* offset, const aclIntArray* stride,
                                                  const aclIntArray* padding, const aclIntArray* dilation,
                                                  bool transposed, const aclIntArray* outputPadding, int64_t groups,
                                                  int32_t offsetx, const char* roundMode, aclTensor* output,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnQuantConvolutionGetWorkspaceSize", [&] {
    const QuantConvolutionArgs args{input,     weight,   bias,          scale,         offset, stride,
                                    padding,   dilation, transposed,    outputPadding, groups, offsetx,
                                    roundMode, output,   workspaceSize, executor};
    const Check check = validate_quant_convolution(args);
    if (check.failed()) return check.status;
    return publish(QuantCall(make_quant_problem(args)), used_tensors(args), "aclnnQuantConvolutionGetWorkspaceSize",
                   "aclnnQuantConvolution", call_text(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnQuantConvolution(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream) {
  return guarded("aclnnQuantConvolution",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnQuantConvolution"); });
}

}  // extern "C"
