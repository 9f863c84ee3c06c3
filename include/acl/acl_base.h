/* AscendCL base header: types, enums and status codes. */
#ifndef ACLNN_CONVBWD_ACL_ACL_BASE_H_
#define ACLNN_CONVBWD_ACL_ACL_BASE_H_

#include "acl/acl_base_rt.h"
#include "acl/error_codes/rt_error_codes.h"

#endif /* ACLNN_CONVBWD_ACL_ACL_BASE_H_ */
