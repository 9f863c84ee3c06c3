#include "runtime/stream.h"

#include <exception>
#include <new>
#include <set>
#include <system_error>

#include "common/fork.h"
#include "common/log.h"

namespace aclnn_cpu {

// Every live stream, so that the fork() handlers reach their locks and threads. Its lock, held
// across a fork, keeps streams from being created or destroyed meanwhile.
class HostStream::Registry final : public ForkParticipant {
 public:
  static Registry& get() {
    static Registry* registry = new Registry();  // never destroyed: streams may outlive statics
    return *registry;
  }
  void add(HostStream* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(stream);
  }
  void remove(HostStream* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.erase(stream);
  }

  void before_fork() noexcept override {
    mutex_.lock();
    for (HostStream* stream : live_) stream->mutex_.lock();
  }
  void after_fork_in_parent() noexcept override {
    for (HostStream* stream : live_) stream->mutex_.unlock();
    mutex_.unlock();
  }
  void after_fork_in_child() noexcept override {
    for (HostStream* stream : live_) stream->forget_parent_in_fork_child();
    mutex_.unlock();
  }

 private:
  Registry() { set_fork_participant(ForkStage::kStreams, this); }

  std::mutex mutex_;
  std::set<HostStream*> live_;
};

HostStream::HostStream() {
  Registry::get().add(this);
  try {
    worker_ = std::thread([this] { worker_loop(); });
  } catch (...) {
    Registry::get().remove(this);
    throw;
  }
}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  if (worker_.joinable()) worker_.join();
  Registry::get().remove(this);
}

bool HostStream::enqueue(StreamTask task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!worker_.joinable()) {  // a fork() child: the worker was the parent's
      try {
        worker_ = std::thread([this] { worker_loop(); });
      } catch (const std::system_error&) {
        return false;
      }
    }
    queue_.push_back(std::move(task));
  }
  work_ready_.notify_one();
  return true;
}

int HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return queue_.empty() && !busy_; });
  int status = first_error_;
  if (status != ACL_SUCCESS) {
    set_recent_error(first_error_message_);
  } else if (dropped_at_fork_) {  // logged here: the fork() handler that dropped the work could not
    status = ACL_ERROR_RT_FAILURE;
    report_error(
        format("stream %p: the work queued on it before fork() runs in the parent process only; this "
               "child process dropped it",
               static_cast<void*>(this)));
  }
  dropped_at_fork_ = false;
  first_error_ = ACL_SUCCESS;
  first_error_message_.clear();
  return status;
}

// Runs in the fork() child with mutex_ held by the forking thread. The worker does not exist here
// and the work queued or running belongs to the parent: the tasks are destroyed without running
// (they hold copies of their arguments and executors), and the next enqueue starts a new worker.
// The earlier fork stages' locks are still held here, so what a task's destruction runs (an
// executor's destructor) must take no lock of the library.
void HostStream::forget_parent_in_fork_child() noexcept {
  dropped_at_fork_ = dropped_at_fork_ || busy_ || !queue_.empty();
  queue_.clear();
  busy_ = false;
  recreate_in_fork_child(worker_);
  recreate_in_fork_child(work_ready_);
  recreate_in_fork_child(work_done_);
  mutex_.unlock();
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
