// The device behind the ACL runtime: memory, streams and the operators' kernels behind one
// interface. The API layer only talks to this interface; the host CPU implementation
// (host_backend.cpp) is the one we ship, and another device would implement the same calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl_rt.h"

namespace aclnn_cpu {

// An in-order asynchronous queue of tasks. A task returns ACL_SUCCESS or a status; a failing
// task leaves its message with report_error() on the thread that ran it.
using StreamTask = std::function<int()>;
class Stream {
 public:
  virtual ~Stream() = default;  // drains the queue first
  // Queues `task`; false (nothing queued) when the stream's worker cannot be started.
  virtual bool enqueue(StreamTask task) = 0;
  // Waits until every task enqueued so far has run. Returns the first asynchronous failure since
  // the last synchronize (and hands its message to the calling thread), or ACL_SUCCESS.
  virtual int synchronize() = 0;
};

// An operator planned at phase 1 for one device.
class OperatorPlan {
 public:
  virtual ~OperatorPlan() = default;
  virtual uint64_t workspace_bytes() const = 0;
  // The implementations chosen, the task counts and the threads, for the verbose mode.
  virtual std::string describe() const = 0;
  // How they were chosen, one line per result (its pass, the entries that refused, with their reasons), for
  // ACLNN_CONVBWD_VERBOSE=2.
  virtual std::vector<std::string> choices() const { return {}; }
  // Phase 2 on the device; returns an aclnn status (message reported on failure).
  virtual int execute(void* workspace) const = 0;
};

// An operator call as its front door validated and described it, opaque to the runtime: each operator
// brings its own planner (the convolution's: kernels/conv/conv_plan.h, through src/conv/publish.cpp).
class OperatorProblem {
 public:
  virtual ~OperatorProblem() = default;
  // Phase 1 for the host CPU on up to `threads` threads: the plan, or nullptr when it cannot be planned
  // (message reported for `api`).
  virtual std::unique_ptr<OperatorPlan> plan_on_host(int threads, const char* api) const = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual const char* name() const = 0;
  virtual uint32_t device_count() const = 0;

  // Device memory: `alignment`-aligned (a power of two), nullptr when out of memory or when
  // `bytes` rounded up to the alignment does not fit in size_t. `huge_pages`: on the device's huge
  // pages where it has them and the block is large enough (aclrtMalloc's huge-page policies).
  virtual void* allocate(size_t bytes, size_t alignment, bool huge_pages) = 0;
  // Releases a block allocate() returned, given the bytes and the huge-page wish it was asked for with.
  virtual void release(void* ptr, size_t bytes, bool huge_pages) = 0;
  // Byte copy / fill between any two addresses of the given kind; ranges are valid.
  virtual void copy(void* dst, const void* src, size_t bytes, aclrtMemcpyKind kind) = 0;
  virtual void fill(void* dst, uint8_t value, size_t bytes) = 0;

  // A new stream (nullptr when its worker cannot be started).
  virtual std::unique_ptr<Stream> create_stream() = 0;

  // Operators. Phase 1: plans an operator's problem for this device; nullptr when it cannot be
  // planned (message reported for `api`). Phase 2: runs a plan, called from a stream's task.
  virtual std::unique_ptr<OperatorPlan> plan(const OperatorProblem& problem, const char* api) = 0;
  virtual int launch(const OperatorPlan& plan, void* workspace) = 0;
};

// The process-wide backend (the host CPU).
DeviceBackend& device_backend();

}  // namespace aclnn_cpu
