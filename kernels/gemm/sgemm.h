// The one GEMM the GEMM implementations use: single-precision, row-major, single-threaded (the
// implementations parallelise over independent tasks, which keeps results independent of the
// thread count). Backed by Eigen's blocked kernel, with its packing buffers in our workspace.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

// A row-major matrix operand: element (i, j) of op(M) is data[i*ld + j], or data[j*ld + i]
// when `transposed`.
struct MatrixRef {
  const float* data;
  int64_t ld;
  bool transposed;
};

// Cache blocking of a family of GEMMs, fixed at phase 1 from the largest (m, n, k) a step will
// multiply; the same blocking (hence the same accumulation order) serves every smaller one.
struct GemmBlocking {
  int64_t kc = 0;       // depth block
  int64_t n_block = 0;  // columns of C per packed panel
  int64_t m_block = 0;  // rows of C per packed panel
  // Floats of packing scratch one sgemm call needs (one per thread running GEMMs).
  int64_t scratch_floats() const;
};

GemmBlocking plan_gemm_blocking(int64_t max_m, int64_t max_n, int64_t max_k);

// C (m x n, row-major, leading dim ldc) = op(A) (m x k) * op(B) (k x n) + (accumulate ? C : 0).
// `scratch` holds blocking.scratch_floats() floats, 64-byte aligned; m, n, k within the blocking's maxima
// are not required (any size works), but only then is the blocking the tuned one.
void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b,
           bool accumulate, float* c, int64_t ldc);

}  // namespace aclnn_cpu
