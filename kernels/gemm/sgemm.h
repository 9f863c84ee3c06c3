// The one GEMM the GEMM kernel set uses: single-precision, row-major, single-threaded (the
// kernel set parallelises over independent tasks, which keeps results independent of the
// thread count). Backed by Eigen.
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

// C (m x n, row-major, leading dim ldc) = op(A) (m x k) * op(B) (k x n) + (accumulate ? C : 0).
void sgemm(int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b, bool accumulate, float* c, int64_t ldc);

}  // namespace aclnn_cpu
