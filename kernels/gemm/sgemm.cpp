#include "kernels/gemm/sgemm.h"

#include <algorithm>
#include <cstring>

#define EIGEN_DONT_PARALLELIZE  // tasks, not GEMMs, are spread over threads
#include <Eigen/Core>

namespace aclnn_cpu {
namespace {

using Index = Eigen::Index;
constexpr int64_t kPanelPadFloats = 64;  // per packed panel, beyond Eigen's kc*mc / kc*nc

// Floats from the first packed panel to the second: keeps the second 64-byte aligned.
int64_t panel_a_floats(const GemmBlocking& b) { return (b.kc * b.n_block + kPanelPadFloats + 15) / 16 * 16; }

// Eigen's blocking object, pointed at our scratch instead of allocating its own.
class ScratchBlocking final : public Eigen::internal::level3_blocking<float, float> {
 public:
  ScratchBlocking(const GemmBlocking& b, float* scratch) {
    m_kc = b.kc;
    m_mc = b.n_block;  // Eigen multiplies the column-major C^T: its rows are our columns
    m_nc = b.m_block;
    m_blockA = scratch;
    m_blockB = scratch + panel_a_floats(b);
  }
};

// C^T (n x m, column-major, = row-major C) += op(B)^T (n x k) * op(A)^T (k x m). A row-major
// operand read transposed is column-major, and vice versa.
template <int LhsOrder, int RhsOrder>
void multiply(Index m, Index n, Index k, MatrixRef a, MatrixRef b, float* c, Index ldc, ScratchBlocking& blocking) {
  Eigen::internal::general_matrix_matrix_product<Index, float, LhsOrder, false, float, RhsOrder, false, Eigen::ColMajor,
                                                 1>::run(n, m, k, b.data, b.ld, a.data, a.ld, c, 1, ldc, 1.0f, blocking,
                                                         nullptr);
}

// sum_p x[p] * y[p] in 32 fixed lanes (four independent vector accumulators once vectorised;
// the order never changes), the lanes then added pairwise.
float dot(const float* x, const float* y, int64_t length) {
  constexpr int kLanes = 32;
  float lanes[kLanes] = {};
  int64_t p = 0;
  for (; p + kLanes <= length; p += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[p + l] * y[p + l];
  }
  for (int l = 0; p < length; ++p, ++l) lanes[l] += x[p] * y[p];
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

// A product with one row or one column of C, too thin to pack:
// out[j*out_step] (+)= sum_p u[p*u_step] * v[p*v_p + j*v_j] for j < count, p < depth.
void thin_product(int64_t count, int64_t depth, const float* u, int64_t u_step, const float* v, int64_t v_p,
                  int64_t v_j, float* out, int64_t out_step, bool accumulate) {
  if (u_step == 1 && v_p == 1) {  // each entry a contiguous dot product
    for (int64_t j = 0; j < count; ++j) {
      const float sum = dot(u, v + j * v_j, depth);
      out[j * out_step] = accumulate ? out[j * out_step] + sum : sum;
    }
    return;
  }
  if (!accumulate) {  // otherwise rank-1 updates, p in order
    for (int64_t j = 0; j < count; ++j) out[j * out_step] = 0.0f;
  }
  for (int64_t p = 0; p < depth; ++p) {
    const float scale = u[p * u_step];
    const float* row = v + p * v_p;
    for (int64_t j = 0; j < count; ++j) out[j * out_step] += scale * row[j * v_j];
  }
}

// Strides of op(M): element (i, j) at data[i*rows + j*cols].
int64_t row_step(const MatrixRef& m) { return m.transposed ? 1 : m.ld; }
int64_t col_step(const MatrixRef& m) { return m.transposed ? m.ld : 1; }

}  // namespace

int64_t GemmBlocking::scratch_floats() const { return panel_a_floats(*this) + kc * m_block + kPanelPadFloats; }

GemmBlocking plan_gemm_blocking(int64_t max_m, int64_t max_n, int64_t max_k) {
  // Eigen's heuristic from the CPU's cache sizes, for one thread (so never thread-count dependent).
  Index k = std::max<int64_t>(1, max_k), rows = std::max<int64_t>(1, max_n), cols = std::max<int64_t>(1, max_m);
  Eigen::internal::computeProductBlockingSizes<float, float, 1, Index>(k, rows, cols, 1);
  return {k, rows, cols};
}

void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b,
           bool accumulate, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (m == 1) {  // C (1 x n) = a (1 x k) * op(B)
    thin_product(n, k, a.data, col_step(a), b.data, row_step(b), col_step(b), c, 1, accumulate);
    return;
  }
  if (n == 1) {  // C (m x 1) = op(A) * b (k x 1)
    thin_product(m, k, b.data, row_step(b), a.data, col_step(a), row_step(a), c, ldc, accumulate);
    return;
  }
  if (!accumulate) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
  }
  if (k == 0) return;
  ScratchBlocking eigen_blocking(blocking, scratch);
  constexpr int kCol = Eigen::ColMajor, kRow = Eigen::RowMajor;
  if (!b.transposed && !a.transposed) multiply<kCol, kCol>(m, n, k, a, b, c, ldc, eigen_blocking);
  if (!b.transposed && a.transposed) multiply<kCol, kRow>(m, n, k, a, b, c, ldc, eigen_blocking);
  if (b.transposed && !a.transposed) multiply<kRow, kCol>(m, n, k, a, b, c, ldc, eigen_blocking);
  if (b.transposed && a.transposed) multiply<kRow, kRow>(m, n, k, a, b, c, ldc, eigen_blocking);
}

}  // namespace aclnn_cpu
