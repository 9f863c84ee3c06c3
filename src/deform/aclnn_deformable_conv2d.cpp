// The deformable convolution's entry points: validate -> the problem -> plan from the operator's own
// lists (phase 1); run on a stream (phase 2).
#include "aclnnop/aclnn_deformable_conv2d.h"

#include <memory>
#include <string>

#include "aclnnop/aclnn_convolution_backward.h"
#include "common/log.h"
#include "conv/publish.h"
#include "deform/deformable_conv2d.h"
#include "kernels/core/entry_list.h"
#include "kernels/deform/deform_plan.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

// A deformable convolution call (forward or backward), planned for the host from the operator's lists.
class DeformableCall final : public OperatorProblem {
 public:
  explicit DeformableCall(const DeformProblem& problem) : problem_(problem) {}
  std::unique_ptr<OperatorPlan> plan_on_host(int threads, const char* api) const override {
    DeformProblem planned = problem_;
    planned.max_threads = threads;
    std::unique_ptr<DeformPlan> plan = plan_deformable(planned, implementation_filter(), api);
    if (plan == nullptr) return nullptr;
    return std::make_unique<HostPlan<DeformPlan>>(std::move(plan));
  }

 private:
  DeformProblem problem_;
};

std::string attributes_text(const aclIntArray* kernel_size, const aclIntArray* stride, const aclIntArray* padding,
                            const aclIntArray* dilation, int64_t groups, int64_t deformable_groups) {
  return format("kernelSize=%s stride=%s padding=%s dilation=%s groups=%lld deformableGroups=%lld",
                dims_text(kernel_size->values).c_str(), dims_text(stride->values).c_str(),
                dims_text(padding->values).c_str(), dims_text(dilation->values).c_str(), static_cast<long long>(groups),
                static_cast<long long>(deformable_groups));
}

std::string forward_call(const DeformableConv2dArgs& a) {
  return format("%s %s %s %s,%s deformOut=%d", tensor_text("x", a.x).c_str(), tensor_text("weight", a.weight).c_str(),
                tensor_text("offset", a.offset).c_str(), tensor_text("bias", a.bias).c_str(),
                attributes_text(a.kernel_size, a.stride, a.padding, a.dilation, a.groups, a.deformable_groups).c_str(),
                a.deform_out != nullptr ? 1 : 0);
}

std::string backward_call(const DeformableConv2dBackwardArgs& a) {
  return format("%s %s %s %s %s,%s", tensor_text("input", a.input).c_str(),
                tensor_text("gradOutput", a.grad_output).c_str(), tensor_text("offsetOut", a.offset_out).c_str(),
                tensor_text("weight", a.weight).c_str(), tensor_text("offset", a.offset).c_str(),
                attributes_text(a.kernel_size, a.stride, a.padding, a.dilation, a.groups, a.deformable_groups).c_str());
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclnnStatus aclnnDeformableConv2dGetWorkspaceSize(const aclTensor* x, const aclTensor* weight, const aclTensor* offset,
                                                  const aclTensor* biasOptional, const aclIntArray* kernelSize,
                                                  const aclIntArray* stride, const aclIntArray* padding,
                                                  const aclIntArray* dilation, int64_t groups, int64_t deformableGroups,
                                                  bool modulated, aclTensor* out, aclTensor* deformOutOptional,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnDeformableConv2dGetWorkspaceSize", [&] {
    const DeformableConv2dArgs args{
        x,      weight,           offset,    biasOptional, kernelSize,        stride,        padding, dilation,
        groups, deformableGroups, modulated, out,          deformOutOptional, workspaceSize, executor};
    const Check check = validate_deformable_conv2d(args);
    if (check.failed()) return check.status;
    return publish(DeformableCall(make_deformable_problem(args)), used_tensors(args),
                   "aclnnDeformableConv2dGetWorkspaceSize", "aclnnDeformableConv2d", forward_call(args), workspaceSize,
                   executor);
  });
}

aclnnStatus aclnnDeformableConv2d(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream) {
  return guarded("aclnnDeformableConv2d",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnDeformableConv2d"); });
}

aclnnStatus aclnnDeformableConv2dBackwardGetWorkspaceSize(
    const aclTensor* input, const aclTensor* gradOutput, const aclTensor* offsetOut, const aclTensor* weight,
    const aclTensor* offset, const aclIntArray* kernelSize, const aclIntArray* stride, const aclIntArray* padding,
    const aclIntArray* dilation, int64_t groups, int64_t deformableGroups, bool modulated, aclTensor* gradInput,
    aclTensor* gradWeight, aclTensor* gradOffset, aclTensor* gradBias, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  return guarded("aclnnDeformableConv2dBackwardGetWorkspaceSize", [&] {
    const DeformableConv2dBackwardArgs args{input,     gradOutput, offsetOut,  weight,   offset,           kernelSize,
                                            stride,    padding,    dilation,   groups,   deformableGroups, modulated,
                                            gradInput, gradWeight, gradOffset, gradBias, workspaceSize,    executor};
    const Check check = validate_deformable_conv2d_backward(args);
    if (check.failed()) return check.status;
    return publish(DeformableCall(make_deformable_problem(args)), used_tensors(args),
                   "aclnnDeformableConv2dBackwardGetWorkspaceSize", "aclnnDeformableConv2dBackward",
                   backward_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnDeformableConv2dBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                          const aclrtStream stream) {
  return guarded("aclnnDeformableConv2dBackward", [&] {
    return run_executor(workspace, workspaceSize, executor, stream, "aclnnDeformableConv2dBackward");
  });
}

}  // extern "C"
