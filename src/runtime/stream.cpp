#include "runtime/stream.h"

#include <exception>
#include <new>

#include "common/log.h"

namespace aclnn_cpu {

HostStream::HostStream() : worker_([this] { worker_loop(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  worker_.join();
}

void HostStream::enqueue(StreamTask task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  work_ready_.notify_one();
}

int HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return queue_.empty() && !busy_; });
  const int status = first_error_;
  if (status != ACL_SUCCESS) set_recent_error(first_error_message_);
  first_error_ = ACL_SUCCESS;
  first_error_message_.clear();
  return status;
}

void HostStream::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    StreamTask task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    int status = ACL_SUCCESS;
    try {
      status = task();
    } catch (const std::bad_alloc&) {
      report_error("stream task: out of host memory");
      status = ACL_ERROR_BAD_ALLOC;
    } catch (const std::exception& e) {
      report_error(format("stream task: internal error: %s", e.what()));
      status = ACL_ERROR_INTERNAL_ERROR;
    } catch (...) {
      report_error("stream task: internal error (unknown exception)");
      status = ACL_ERROR_INTERNAL_ERROR;
    }
    const std::string message = status == ACL_SUCCESS ? std::string() : take_recent_error();
    lock.lock();
    if (status != ACL_SUCCESS && first_error_ == ACL_SUCCESS) {
      first_error_ = status;
      first_error_message_ = message;
    }
    busy_ = false;
    if (queue_.empty()) work_done_.notify_all();
  }
}

}  // namespace aclnn_cpu
