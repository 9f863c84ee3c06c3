#include "runtime/compute_thread.h"

#include <system_error>
#include <thread>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace aclnn_cpu {

int compute_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

ComputeThread::ComputeThread() { set_fork_participant(ForkStage::kComputeThread, this); }

int ComputeThread::run(const std::function<int()>& job) {
  Job entry;
  entry.body = &job;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!started_) {
    try {
      std::thread([this] { loop(); }).detach();
    } catch (const std::system_error& e) {
      lock.unlock();
      report_error(format("compute thread: it cannot be started (%s)", e.what()));
      return ACLNN_ERR_INNER;
    }
    started_ = true;
  }
  jobs_.push_back(&entry);
  queued_.notify_one();
  finished_.wait(lock, [&entry] { return entry.done; });
  if (entry.status != 0) set_recent_error(entry.message);
  return entry.status;
}

void ComputeThread::before_fork() noexcept { mutex_.lock(); }

void ComputeThread::after_fork_in_parent() noexcept { mutex_.unlock(); }

// The jobs queued or running belong to threads of the parent, which wait for them there.
void ComputeThread::after_fork_in_child() noexcept {
  jobs_.clear();
  started_ = false;
  recreate_in_fork_child(queued_);
  recreate_in_fork_child(finished_);
  mutex_.unlock();
}

void ComputeThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return !jobs_.empty(); });
    Job* job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    int status = 0;
    try {
      status = (*job->body)();
    } catch (...) {
      report_error("compute thread: internal error (exception in a kernel)");
      status = -1;
    }
    std::string message = status != 0 ? take_recent_error() : std::string();
    lock.lock();
    job->status = status;
    job->message = std::move(message);
    job->done = true;
    finished_.notify_all();
  }
}

}  // namespace aclnn_cpu
