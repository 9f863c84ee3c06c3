#include "kernels/gemm/sgemm.h"

#define EIGEN_DONT_PARALLELIZE  // tasks, not GEMMs, are spread over threads
#include <Eigen/Core>

namespace aclnn_cpu {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename Matrix>
using ConstMap = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename A, typename B>
void multiply(const A& a, const B& b, bool accumulate, float* c, int64_t m, int64_t n, int64_t ldc) {
  Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>> out(c, m, n, Eigen::OuterStride<>(ldc));
  if (accumulate) {
    out.noalias() += a * b;
  } else {
    out.noalias() = a * b;
  }
}

// A transposed row-major operand is the same memory read as column-major.
template <typename B>
void with_a(int64_t m, int64_t k, MatrixRef a, const B& b, bool accumulate, float* c, int64_t n, int64_t ldc) {
  if (a.transposed) {
    multiply(ConstMap<ColMajor>(a.data, m, k, Eigen::OuterStride<>(a.ld)), b, accumulate, c, m, n, ldc);
  } else {
    multiply(ConstMap<RowMajor>(a.data, m, k, Eigen::OuterStride<>(a.ld)), b, accumulate, c, m, n, ldc);
  }
}

}  // namespace

void sgemm(int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b, bool accumulate, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (b.transposed) {
    with_a(m, k, a, ConstMap<ColMajor>(b.data, k, n, Eigen::OuterStride<>(b.ld)), accumulate, c, n, ldc);
  } else {
    with_a(m, k, a, ConstMap<RowMajor>(b.data, k, n, Eigen::OuterStride<>(b.ld)), accumulate, c, n, ldc);
  }
}

}  // namespace aclnn_cpu
