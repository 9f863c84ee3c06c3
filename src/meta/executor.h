// aclOpExecutor: what phase 1 planned and phase 2 runs. One-shot unless made repeatable.
#pragma once

#include <cstdint>
#include <memory>

#include "aclnn/acl_meta.h"

struct aclOpExecutor {
  virtual ~aclOpExecutor() = default;
  // Bytes of workspace phase 2 must receive.
  virtual uint64_t workspace_bytes() const = 0;
  // Runs the planned work on the calling (stream worker) thread; returns an aclnn status.
  virtual aclnnStatus run(void* workspace) const = 0;
};

namespace aclnn_cpu {

// Takes ownership of a planned executor and returns the handle for the caller.
aclOpExecutor* register_executor(std::unique_ptr<aclOpExecutor> executor);

// Phase 2 of every operator: checks the workspace, queues the run on `stream`, and releases a
// one-shot executor (also when the workspace is refused).
aclnnStatus run_executor(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream,
                         const char* api);

}  // namespace aclnn_cpu
