/* Deformable convolution (DCNv2, modulated): aclnnDeformableConv2d.
 * Two-stage: ...GetWorkspaceSize validates and plans into an executor and reports the workspace
 * bytes; the second call runs the executor on a stream (asynchronously). Its backward,
 * aclnnDeformableConv2dBackward, is declared in aclnnop/aclnn_convolution_backward.h, as in CANN. */
#ifndef ACLNN_CONVBWD_ACLNNOP_ACLNN_DEFORMABLE_CONV2D_H_
#define ACLNN_CONVBWD_ACLNNOP_ACLNN_DEFORMABLE_CONV2D_H_

#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = bias + grouped conv2d (stride kernelSize) of deformOut, where deformOut[n, c, oh*KH+kh, ow*KW+kw]
 * is input channel c bilinearly sampled at (oh*stride - padTop + kh*dilation + dy,
 * ow*stride - padLeft + kw*dilation + dx) times the mask; offset [N, 3*deformableGroups*KH*KW, outH, outW]
 * holds the dx block, the dy block, then the mask block. deformOutOptional may be nullptr. */
ACLNN_API aclnnStatus aclnnDeformableConv2dGetWorkspaceSize(const aclTensor* x, const aclTensor* weight,
                                                            const aclTensor* offset, const aclTensor* biasOptional,
                                                            const aclIntArray* kernelSize, const aclIntArray* stride,
                                                            const aclIntArray* padding, const aclIntArray* dilation,
                                                            int64_t groups, int64_t deformableGroups, bool modulated,
                                                            aclTensor* out, aclTensor* deformOutOptional,
                                                            uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnDeformableConv2d(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CONVBWD_ACLNNOP_ACLNN_DEFORMABLE_CONV2D_H_ */
