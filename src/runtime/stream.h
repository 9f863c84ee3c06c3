// An in-order asynchronous task queue served by one worker thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "acl/acl_base.h"

namespace aclnn_cpu {

// A task returns ACL_SUCCESS or a status; a failing task leaves its message with
// report_error() on the worker thread, and the stream keeps the first failure.
using StreamTask = std::function<int()>;

class Stream {
 public:
  Stream();
  ~Stream();  // drains the queue, then stops the worker
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void enqueue(StreamTask task);
  // Waits until every task enqueued so far has run. Returns the first asynchronous failure since
  // the last synchronize (and hands its message to the calling thread), or ACL_SUCCESS.
  int synchronize();

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
