/* Compiled as C: every public header must be valid C11. */
#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_deformable_conv2d.h"
#include "aclnnop/aclnn_quant_convolution.h"

int c_header_probe(void);

int c_header_probe(void) {
  aclTensor* tensor = NULL;
  aclOpExecutor* executor = NULL;
  aclrtStream stream = NULL;
  uint64_t workspace = 0;
  /* Called from C with every tensor missing: the first null tensor is reported. */
  aclnnStatus status =
      aclnnConvTbcBackwardGetWorkspaceSize(NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, &workspace, &executor);
  status += aclnnConvTbcGetWorkspaceSize(NULL, NULL, NULL, 0, NULL, 0, &workspace, &executor);
  status += aclnnDeformableConv2dGetWorkspaceSize(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 1, true, NULL,
                                                  NULL, &workspace, &executor);
  status += aclnnDeformableConv2dBackwardGetWorkspaceSize(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 1,
                                                          true, NULL, NULL, NULL, NULL, &workspace, &executor);
  status += aclnnQuantConvolutionGetWorkspaceSize(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, NULL, 1, 0,
                                                  NULL, NULL, &workspace, &executor);
  (void)tensor;
  (void)stream;
  return status + ACLNN_ERR_PARAM_INVALID + (int)ACL_FORMAT_NCL + (int)ACL_BF16;
}
