/* Convolution backward operators: aclnnConvolutionBackward, aclnnConvTbcBackward and
 * aclnnDeformableConv2dBackward. All are two-stage: ...GetWorkspaceSize validates and plans into an
 * executor and reports the workspace bytes; the second call runs the executor on a stream (asynchronously). */
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

/* Gradients of aclnnDeformableConv2d (aclnnop/aclnn_deformable_conv2d.h): gradInput, gradWeight (from
 * offsetOut, the forward's deformOut), gradOffset (the dx, dy and mask blocks of offset) and gradBias,
 * all four written. */
ACLNN_API aclnnStatus aclnnDeformableConv2dBackwardGetWorkspaceSize(
    const aclTensor* input, const aclTensor* gradOutput, const aclTensor* offsetOut, const aclTensor* weight,
    const aclTensor* offset, const aclIntArray* kernelSize, const aclIntArray* stride, const aclIntArray* padding,
    const aclIntArray* dilation, int64_t groups, int64_t deformableGroups, bool modulated, aclTensor* gradInput,
    aclTensor* gradWeight, aclTensor* gradOffset, aclTensor* gradBias, uint64_t* workspaceSize,
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

ACLNN_API aclnnStatus aclnnDeformableConv2dBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                                    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CONVBWD_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_ */
