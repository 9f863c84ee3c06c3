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
#include <thread>

namespace aclnn_cpu {

class ComputeThread {
 public:
  ComputeThread();
  // Runs `job` on the compute thread and waits for it. Returns its status; a failure's message
  // (report_error() on the compute thread) becomes the calling thread's recent error.
  int run(const std::function<int()>& job);

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
  std::thread thread_;  // detached: lives as long as the process
};

}  // namespace aclnn_cpu
