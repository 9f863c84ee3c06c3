// The forward operators' entry points: validate -> the role-swapped problem -> plan (phase 1);
// run on a stream (phase 2).
#include "aclnnop/aclnn_convolution.h"

#include <string>

#include "common/log.h"
#include "conv/convolution_forward.h"
#include "conv/publish.h"
#include "meta/meta_objects.h"
#include "meta/plan_executor.h"

namespace aclnn_cpu {
namespace {

std::string convolution_call(const ConvolutionArgs& a) {
  return format("%s %s %s,stride=%s padding=%s dilation=%s transposed=%d outputPadding=%s groups=%lld cubeMathType=%d",
                tensor_text("input", a.input).c_str(), tensor_text("weight", a.weight).c_str(),
                tensor_text("bias", a.bias).c_str(), dims_text(a.stride->values).c_str(),
                dims_text(a.padding->values).c_str(), dims_text(a.dilation->values).c_str(), a.transposed ? 1 : 0,
                a.transposed ? dims_text(a.output_padding->values).c_str() : "", static_cast<long long>(a.groups),
                a.cube_math_type);
}

std::string tbc_call(const ConvTbcArgs& a) {
  return format("%s %s %s,pad=%lld cubeMathType=%d", tensor_text("self", a.self).c_str(),
                tensor_text("weight", a.weight).c_str(), tensor_text("bias", a.bias).c_str(),
                static_cast<long long>(a.pad), a.cube_math_type);
}

std::string depthwise_call(const ConvDepthwise2dArgs& a) {
  return format("%s %s %s,kernelSize=%s stride=%s padding=%s dilation=%s cubeMathType=%d",
                tensor_text("self", a.self).c_str(), tensor_text("weight", a.weight).c_str(),
                tensor_text("bias", a.bias).c_str(), dims_text(a.kernel_size->values).c_str(),
                dims_text(a.stride->values).c_str(), dims_text(a.padding->values).c_str(),
                dims_text(a.dilation->values).c_str(), a.cube_math_type);
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, const aclTensor* bias,
                                             const aclIntArray* stride, const aclIntArray* padding,
                                             const aclIntArray* dilation, bool transposed,
                                             const aclIntArray* outputPadding, const int64_t groups, aclTensor* output,
                                             int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvolutionGetWorkspaceSize", [&] {
    const ConvolutionArgs args{input,         weight, bias,   stride,       padding,       dilation, transposed,
                               outputPadding, groups, output, cubeMathType, workspaceSize, executor};
    const Check check = validate_convolution(args);
    if (check.failed()) return check.status;
    return publish(make_convolution_problem(args), used_tensors(args), "aclnnConvolutionGetWorkspaceSize",
                   "aclnnConvolution", convolution_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvolution(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                             aclrtStream stream) {
  return guarded("aclnnConvolution",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvolution"); });
}

aclnnStatus aclnnConvTbcGetWorkspaceSize(const aclTensor* self, const aclTensor* weight, const aclTensor* bias,
                                         const int64_t pad, aclTensor* output, int8_t cubeMathType,
                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvTbcGetWorkspaceSize", [&] {
    const ConvTbcArgs args{self, weight, bias, pad, output, cubeMathType, workspaceSize, executor};
    const Check check = validate_conv_tbc(args);
    if (check.failed()) return check.status;
    return publish(make_conv_tbc_problem(args), used_tensors(args), "aclnnConvTbcGetWorkspaceSize", "aclnnConvTbc",
                   tbc_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvTbc(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
  return guarded("aclnnConvTbc",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvTbc"); });
}

aclnnStatus aclnnConvDepthwise2dGetWorkspaceSize(const aclTensor* self, const aclTensor* weight,
                                                 const aclIntArray* kernelSize, const aclTensor* bias,
                                                 const aclIntArray* stride, const aclIntArray* padding,
                                                 const aclIntArray* dilation, aclTensor* out, int8_t cubeMathType,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvDepthwise2dGetWorkspaceSize", [&] {
    const ConvDepthwise2dArgs args{self,     weight, kernelSize,   bias,          stride,  padding,
                                   dilation, out,    cubeMathType, workspaceSize, executor};
    const Check check = validate_conv_depthwise2d(args);
    if (check.failed()) return check.status;
    return publish(make_conv_depthwise2d_problem(args), used_tensors(args), "aclnnConvDepthwise2dGetWorkspaceSize",
                   "aclnnConvDepthwise2d", depthwise_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvDepthwise2d(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream) {
  return guarded("aclnnConvDepthwise2d",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvDepthwise2d"); });
}

}  // extern "C"
