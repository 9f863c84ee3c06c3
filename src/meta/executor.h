// aclOpExecutor: what phase 1 planned and phase 2 runs. One-shot unless made repeatable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "aclnn/acl_meta.h"

namespace aclnn_cpu {
// Why phase 2 cannot run a plan (status 0: it can), with the sentence phase 2 reports.
struct Refusal {
  aclnnStatus status = 0;
  std::string message;
};
}  // namespace aclnn_cpu

struct aclOpExecutor {
  virtual ~aclOpExecutor() = default;
  // Bytes of workspace phase 2 must receive.
  virtual uint64_t workspace_bytes() const = 0;
  // Runs the planned work on the calling (stream worker) thread; returns an aclnn status.
  virtual aclnnStatus run(void* workspace) const = 0;
  // Why phase 2 cannot run this plan (a tensor without data, misaligned, or an output sharing
  // memory with another tensor: conv/phase2_refusal.h), or status 0.
  virtual aclnn_cpu::Refusal refusal() const { return {}; }
  // The phase-2 entry point that runs this executor ("aclnnConvolution", ...): the one whose phase 1
  // planned it.
  virtual const char* run_api() const = 0;
};

namespace aclnn_cpu {

// Takes ownership of a planned executor and returns the handle for the caller.
aclOpExecutor* register_executor(std::unique_ptr<aclOpExecutor> executor);

// Phase 2 of every operator: checks the workspace and the tensors' data, queues the run on
// `stream`, and releases a one-shot executor. A refused call (null workspace with a size, the
// executor's refusal(), too small a workspace) releases a one-shot executor too and keeps a repeatable one;
// an executor passed to another operator's phase 2 than its own is refused (161002) and kept.
aclnnStatus run_executor(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream,
                         const char* api);

}  // namespace aclnn_cpu
