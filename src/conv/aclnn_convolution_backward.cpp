// The operator entry points: validate -> normalise -> plan (phase 1); run on a stream (phase 2).
#include "aclnnop/aclnn_convolution_backward.h"

#include <exception>
#include <memory>
#include <new>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"
#include "conv/conv_tbc_backward.h"
#include "conv/convolution_backward.h"
#include "conv/convolution_executor.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {
namespace {

// Plans a validated problem and hands the executor and its workspace size to the caller.
aclnnStatus publish(const ConvProblem& problem, uint64_t* workspace_size, aclOpExecutor** executor) {
  auto planned = std::make_unique<ConvExecutor>(problem, device_backend().conv_kernels());
  *workspace_size = planned->workspace_bytes();
  *executor = register_executor(std::move(planned));
  return ACLNN_SUCCESS;
}

// No exception crosses the C ABI.
template <typename Body>
aclnnStatus guarded(const char* api, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    report_error(format("%s: out of host memory", api));
    return ACLNN_ERR_INNER_NULLPTR;
  } catch (const std::exception& e) {
    report_error(format("%s: internal error: %s", api, e.what()));
    return ACLNN_ERR_INNER;
  }
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
    return publish(make_convolution_problem(args), workspaceSize, executor);
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
    return publish(make_conv_tbc_problem(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvTbcBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 const aclrtStream stream) {
  return guarded("aclnnConvTbcBackward",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvTbcBackward"); });
}

}  // extern "C"
