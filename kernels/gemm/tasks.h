// Parallel loops over independent tasks. Task shapes depend on the problem only, so results do
// not depend on how many threads run them.
#pragma once

#include <cstdint>

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

// Runs task(0..count-1) on up to `threads` threads.
template <typename Task>
void run_tasks(int64_t count, int threads, Task task) {
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (int64_t t = 0; t < count; ++t) task(t);
  (void)threads;
}

}  // namespace aclnn_cpu
