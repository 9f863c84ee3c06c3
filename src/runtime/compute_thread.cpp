#include "runtime/compute_thread.h"

#include "common/log.h"

namespace aclnn_cpu {

ComputeThread::ComputeThread() : thread_([this] { loop(); }) { thread_.detach(); }

int ComputeThread::run(const std::function<int()>& job) {
  Job entry;
  entry.body = &job;
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_.push_back(&entry);
  queued_.notify_one();
  finished_.wait(lock, [&entry] { return entry.done; });
  if (entry.status != 0) set_recent_error(entry.message);
  return entry.status;
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
