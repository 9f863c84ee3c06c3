// Choosing a kernel set, and the thread budget of a run.
#include <cstdlib>
#include <cstring>

#include "kernels/conv_problem.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace aclnn_cpu {

const ConvKernelSet& selected_kernels() {
  const char* name = std::getenv("ACLNN_CONVBWD_KERNELS");
  if (name != nullptr && std::strcmp(name, "ref") == 0) return reference_kernels();
  return gemm_kernels();
}

int available_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace aclnn_cpu
