/* AscendCL umbrella header: initialisation, error messages and the runtime API. */
#ifndef ACLNN_CONVBWD_ACL_ACL_H_
#define ACLNN_CONVBWD_ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 0
#define ACL_PATCH_VERSION 0

ACL_FUNC_VISIBILITY aclError aclInit(const char* configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
/* The calling thread's most recent failure message; cleared once read. NULL if there is none. */
ACL_FUNC_VISIBILITY const char* aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CONVBWD_ACL_ACL_H_ */
