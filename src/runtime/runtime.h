// What the operators need from the runtime.
#pragma once

#include "acl/acl_rt.h"
#include "runtime/stream.h"

namespace aclnn_cpu {

// Queues `task` on `stream` (nullptr = the default stream). Returns ACL_SUCCESS, or
// ACL_ERROR_INVALID_PARAM for a handle that is not a live stream (message recorded).
int enqueue_on_stream(aclrtStream stream, StreamTask task, const char* api);

}  // namespace aclnn_cpu
