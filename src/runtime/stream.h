// The host's stream: an in-order asynchronous task queue served by one worker thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "acl/acl_base.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {

// The stream keeps the first failure of its tasks and its message.
// In a fork() child, a stream created before the fork has no worker: its work queued or running at
// the fork belongs to the parent and is dropped (reported once by the next synchronize), and the
// next enqueue starts a new worker.
class HostStream final : public Stream {
 public:
  HostStream();            // throws std::system_error when the worker thread cannot start
  ~HostStream() override;  // drains the queue, then stops the worker
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  bool enqueue(StreamTask task) override;
  int synchronize() override;

 private:
  class Registry;  // every live stream, for the fork() handlers
  void worker_loop();
  void forget_parent_in_fork_child() noexcept;

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<StreamTask> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  bool dropped_at_fork_ = false;  // this is a fork() child and the parent's queued work was dropped
  int first_error_ = ACL_SUCCESS;
  std::string first_error_message_;
  std::thread worker_;  // not joinable in a fork() child until an enqueue starts a new worker
};

}  // namespace aclnn_cpu
