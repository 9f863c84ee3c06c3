/* Convolution forward operators: aclnnConvolution, aclnnConvTbc and aclnnConvDepthwise2d.
 * Each is two-stage: ...GetWorkspaceSize validates and plans into an executor and reports the
 * workspace bytes; the second call runs the executor on a stream (asynchronously). */
#ifndef ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_H_
#define ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_H_

#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* output = conv(input, weight) + bias (transposed = false), or the transposed convolution of input
 * (transposed = true, outputPadding extending the output's trailing side); 1-D, 2-D or 3-D by the
 * dims of input (NCL, NCHW, NCDHW). bias (C(output)) may be nullptr. */
ACLNN_API aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                       const aclTensor* bias, const aclIntArray* stride,
                                                       const aclIntArray* padding, const aclIntArray* dilation,
                                                       bool transposed, const aclIntArray* outputPadding,
                                                       const int64_t groups, aclTensor* output, int8_t cubeMathType,
                                                       uint64_t* workspaceSize, aclOpExecutor** executor);

/* The time-batch-channel convolution output[t,b,:] = bias + sum_k self[t+k-pad,b,:] weight[k]:
 * self (T, B, Cin), weight (K, Cin, Cout), bias (Cout), output (T+2pad+1-K, B, Cout). */
ACLNN_API aclnnStatus aclnnConvTbcGetWorkspaceSize(const aclTensor* self, const aclTensor* weight,
                                                   const aclTensor* bias, const int64_t pad, aclTensor* output,
                                                   int8_t cubeMathType, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor);

/* The depthwise 2-D convolution out = conv(self, weight, groups = C(self)) + bias: self (N, Cin, H, W),
 * weight (Cout, 1, kernelSize[0], kernelSize[1]) with Cout a multiple of Cin, bias (Cout) or nullptr. */
ACLNN_API aclnnStatus aclnnConvDepthwise2dGetWorkspaceSize(const aclTensor* self, const aclTensor* weight,
                                                           const aclIntArray* kernelSize, const aclTensor* bias,
                                                           const aclIntArray* stride, const aclIntArray* padding,
                                                           const aclIntArray* dilation, aclTensor* out,
                                                           int8_t cubeMathType, uint64_t* workspaceSize,
                                                           aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnConvolution(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                                       aclrtStream stream);

ACLNN_API aclnnStatus aclnnConvTbc(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                                   aclrtStream stream);

ACLNN_API aclnnStatus aclnnConvDepthwise2d(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_H_ */
