/* Compiled as C: every public header must be valid C11. */
#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_convolution_backward.h"

int c_header_probe(void);

int c_header_probe(void) {
  aclTensor* tensor = NULL;
  aclOpExecutor* executor = NULL;
  aclrtStream stream = NULL;
  aclnnStatus status = ACLNN_SUCCESS;
  (void)tensor;
  (void)executor;
  (void)stream;
  (void)status;
  return ACLNN_ERR_PARAM_NULLPTR + ACLNN_ERR_PARAM_INVALID + (int)ACL_FORMAT_NCL + (int)ACL_BF16;
}
