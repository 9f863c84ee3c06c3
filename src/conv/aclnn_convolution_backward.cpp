// The operator entry points: validate -> normalise -> plan (phase 1); run on a stream (phase 2).
#include "aclnnop/aclnn_convolution_backward.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "conv/conv_tbc_backward.h"
#include "conv/convolution_backward.h"
#include "conv/publish.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

std::string convolution_call(const ConvBackwardArgs& a) {
  std::string mask;
  for (bool bit : a.output_mask->values) mask += bit ? '1' : '0';
  return format(
      "%s %s %s,stride=%s padding=%s dilation=%s transposed=%d outputPadding=%s groups=%d outputMask=%s "
      "cubeMathType=%d",
      tensor_text("gradOutput", a.grad_output).c_str(), tensor_text("input", a.input).c_str(),
      tensor_text("weight", a.weight).c_str(), dims_text(a.stride->values).c_str(),
      dims_text(a.padding->values).c_str(), dims_text(a.dilation->values).c_str(), a.transposed ? 1 : 0,
      dims_text(a.output_padding->values).c_str(), a.groups, mask.c_str(), a.cube_math_type);
}

std::string tbc_call(const ConvTbcBackwardArgs& a) {
  return format("%s %s %s,pad=%lld cubeMathType=%d", tensor_text("self", a.self).c_str(),
                tensor_text("input", a.input).c_str(), tensor_text("weight", a.weight).c_str(),
                static_cast<long long>(a.pad), a.cube_math_type);
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* input,
                                                     const aclTensor* weight, const aclIntArray* biasSizes,
                                                     const aclIntArray* stride, const aclIntArray* padding,
                                                     const aclIntArray* dilation, bool transposed,
                                                     const aclIntArray* outputPadding, int groups,
                                                     const aclBoolArray* outputMask, int8_t cubeMathType,
                                                     aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvolutionBackwardGetWorkspaceSize", [&] {
    const ConvBackwardArgs args{gradOutput, input,      weight,        biasSizes,     stride,     padding,
                                dilation,   transposed, outputPadding, groups,        outputMask, cubeMathType,
                                gradInput,  gradWeight, gradBias,      workspaceSize, executor};
    const Check check = validate_convolution_backward(args);
    if (check.failed()) return check.status;
    return publish(make_convolution_problem(args), used_tensors(args), "aclnnConvolutionBackwardGetWorkspaceSize",
                   "aclnnConvolutionBackward", convolution_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvolutionBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     const aclrtStream stream) {
  return guarded("aclnnConvolutionBackward",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvolutionBackward"); });
}

aclnnStatus aclnnConvTbcBackwardGetWorkspaceSize(const aclTensor* self, const aclTensor* input, const aclTensor* weight,
                                                 const aclTensor* bias, int64_t pad, int8_t cubeMathType,
                                                 aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvTbcBackwardGetWorkspaceSize", [&] {
    const ConvTbcBackwardArgs args{self,      input,      weight,   bias,          pad,     cubeMathType,
                                   gradInput, gradWeight, gradBias, workspaceSize, executor};
    const Check check = validate_conv_tbc_backward(args);
    if (check.failed()) return check.status;
    return publish(make_conv_tbc_problem(args), used_tensors(args), "aclnnConvTbcBackwardGetWorkspaceSize",
                   "aclnnConvTbcBackward", tbc_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvTbcBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 const aclrtStream stream) {
  return guarded("aclnnConvTbcBackward",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvTbcBackward"); });
}

}  // extern "C"
