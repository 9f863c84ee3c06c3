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
class HostStream final : public Stream {
 public:
  HostStream();            // throws std::system_error when the worker thread cannot start
  ~HostStream() override;  // drains the queue, then stops the worker
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  void enqueue(StreamTask task) override;
  int synchronize() override;

 private:
  void worker_loop();

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<StreamTask> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  int first_error_ = ACL_SUCCESS;
  std::string first_error_message_;
  std::thread worker_;
};

}  // namespace aclnn_cpu
