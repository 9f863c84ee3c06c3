/* Export macro of the aclnn operator headers. */
#ifndef ACLNN_CONVBWD_ACLNNOP_ACLNN_UTIL_H_
#define ACLNN_CONVBWD_ACLNNOP_ACLNN_UTIL_H_

#define ACLNN_API __attribute__((visibility("default")))

#endif /* ACLNN_CONVBWD_ACLNNOP_ACLNN_UTIL_H_ */
