/* Convolution backward operators: aclnnConvolutionBackward and aclnnConvTbcBackward.
 * Both are two-stage: ...GetWorkspaceSize validates and plans into an executor and reports the
 * workspace bytes; the second call runs the executor on a stream (asynchronously). */
#ifndef ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_
#define ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Gradients of y = conv(input, weight) + bias (transposed = false) or of the transposed
 * convolution (transposed = true): gradInput, gradWeight, gradBias as selected by outputMask. */
ACLNN_API aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* input, const aclTensor* weight, const aclIntArray* biasSizes,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool transposed,
    const aclIntArray* outputPadding, int groups, const aclBoolArray* outputMask, int8_t cubeMathType,
    aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, uint64_t* workspaceSize,
    aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnConvolutionBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                               const aclrtStream stream);

/* Gradients of the time-batch-channel convolution y[t,b,:] = bias + sum_k x[t+k-pad,b,:] W[k]:
 * self = gradOutput (T+2pad+1-K, B, Cout), input (T, B, Cin), weight (K, Cin, Cout), bias (Cout). */
ACLNN_API aclnnStatus aclnnConvTbcBackwardGetWorkspaceSize(const aclTensor* self, const aclTensor* input,
                                                           const aclTensor* weight, const aclTensor* bias, int64_t pad,
                                                           int8_t cubeMathType, aclTensor* gradInput,
                                                           aclTensor* gradWeight, aclTensor* gradBias,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnConvTbcBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                           const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_ */
