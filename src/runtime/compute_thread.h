// The host's one compute thread. Every plan of every stream runs on it, so its OpenMP team is
// the only compute pool: N streams queue their kernels here instead of starting N pools on the
// same cores. Streams keep their own order; kernels of different streams run one after another,
// each with all the threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "common/fork.h"

namespace aclnn_cpu {

// The threads a plan may give its kernels (asked at phase 1, on the caller's thread): OpenMP's current
// maximum (1 without OpenMP); the compute thread's team runs them.
int compute_threads();

class ComputeThread final : public ForkParticipant {
 public:
  ComputeThread();  // the thread starts with the first run()
  // Runs `job` on the compute thread and waits for it. Returns its status; a failure's message
  // (report_error() on the compute thread) becomes the calling thread's recent error.
  int run(const std::function<int()>& job);

  // fork(): no job starts while the forking thread holds the lock. In the child the thread, its
  // OpenMP team and the parent's jobs are gone; the next run() starts a new thread, which gets a
  // new team (libgomp keeps a team per thread that starts parallel regions).
  void before_fork() noexcept override;
  void after_fork_in_parent() noexcept override;
  void after_fork_in_child() noexcept override;

 private:
  struct Job {
    const std::function<int()>* body;
    int status = 0;
    std::string message;
    bool done = false;
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<Job*> jobs_;
  bool started_ = false;  // whether the thread exists (detached: it lives as long as the process)
};

}  // namespace aclnn_cpu
