/* Quantized convolution: aclnnQuantConvolution (INT8 input and weight, per-channel scale and bias).
 * Two-stage: ...GetWorkspaceSize validates and plans into an executor and reports the workspace
 * bytes; the second call runs the executor on a stream (asynchronously). docs/quant_convolution.md
 * gives the support matrix and the order of the float steps. */
#ifndef ACLNN_CONVBWD_ACLNNOP_ACLNN_QUANT_CONVOLUTION_H_
#define ACLNN_CONVBWD_ACLNNOP_ACLNN_QUANT_CONVOLUTION_H_

#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* output[n, o] = round(float(acc) * scale[o] + bias[o]) with a FLOAT, FLOAT16 or BF16 bias, or
 * round(float(acc + bias[o]) * scale[o]) with an INT32 one, where acc = the int32 sum of the INT8
 * products of weight[o] and input[n] (grouped, strided, padded, dilated; 2-D NCHW or 3-D NCDHW) and
 * round() rounds to the output's FLOAT16 or BF16, to nearest even. scale is FLOAT, or INT64/UINT64
 * holding a float's bits in its low 32 bits. offset, transposed and outputPadding are reserved. */
ACLNN_API aclnnStatus aclnnQuantConvolutionGetWorkspaceSize(
    const aclTensor* input, const aclTensor* weight, const aclTensor* bias, const aclTensor* scale,
    const aclTensor* offset, const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation,
    bool transposed, const aclIntArray* outputPadding, int64_t groups, int32_t offsetx, const char* roundMode,
    aclTensor* output, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnQuantConvolution(void* workspace, const uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CONVBWD_ACLNNOP_ACLNN_QUANT_CONVOLUTION_H_ */
