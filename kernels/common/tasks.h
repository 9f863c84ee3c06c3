// Parallel loops over independent tasks. Task shapes depend on the problem only, so results do
// not depend on how many threads run them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace aclnn_cpu {

inline int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// Runs task(0..count-1) on up to `threads` threads (thread_index() < threads inside a task).
// Nothing may escape an OpenMP region: a task that throws makes the run fail with
// ACLNN_ERR_INNER and a message for `what`; otherwise returns ACLNN_SUCCESS.
// Tasks are handed out in runs of count / (64 * threads) consecutive ones (at least one): with
// thousands of small tasks (a depthwise plane each) each thread then reads a stream of neighbouring
// memory the hardware prefetchers follow (one at a time, two threads would each read every other
// plane); the usual 64-128 tasks still go one at a time, which balances unequal tasks best (better
// than runs of 2, or guided runs, which hand half the tasks to the first thread). A caller whose
// consecutive tasks share work a thread does once (staging the same rows) may ask for runs of a multiple
// of `min_run` (the tasks of one piece of shared work never split between threads).
template <typename Task>
int run_tasks(int64_t count, int threads, const char* what, Task task, int64_t min_run = 1) {
  std::atomic<bool> failed{false};
  const int64_t each = std::max<int64_t>(1, min_run);
  const int64_t run = std::max<int64_t>(1, count / (64 * std::max(1, threads)) / each) * each;
#pragma omp parallel for schedule(dynamic, run) num_threads(threads)
  for (int64_t t = 0; t < count; ++t) {
    try {
      task(t);
    } catch (...) {
      failed.store(true);
    }
  }
  (void)threads;
  (void)run;
  if (!failed.load()) return ACLNN_SUCCESS;
  report_error(format("%s: a parallel task failed (internal error)", what));
  return ACLNN_ERR_INNER;
}

}  // namespace aclnn_cpu
