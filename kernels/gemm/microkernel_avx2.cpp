// AVX2 + FMA micro-kernel: 6 x 16 tile, 12 accumulators (ymm), B read as two vectors per p and
// each A entry broadcast. Compiled with -mavx2 -mfma; called only when the CPU has both.
#include <immintrin.h>

#include "kernels/gemm/microkernel.h"
#include "kernels/gemm/transpose_avx.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = 6, kNr = 16;

// A read in place (run_a_rows): row i of the sliver at base + rows[i], its entry p at + columns[p].
struct ARows {
  const float* base;
  const int64_t* rows;
  const int64_t* columns;
};

// B row p at b + p * kNr, or, with kRows, at b + rows[p] (read in place); A entry (p, i) at
// a[p * kMr + i], or, with kARows, read in place through `in_place`.
template <bool kRows, bool kARows = false>
void run_avx2_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c, const int64_t* rows,
                   ARows in_place = {}) {
  __m256 acc[kMr][2];
  const float* a_row[kMr];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    a_row[i] = kARows ? in_place.base + in_place.rows[i] : nullptr;
    acc[i][0] = load_c ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
    acc[i][1] = load_c ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p, a += kARows ? 0 : kMr) {  // (a is null when A is read in place)
    const int64_t at = kARows ? in_place.columns[p] : 0;
    const float* row = kRows ? b + rows[p] : b + p * kNr;
    const __m256 b0 = _mm256_loadu_ps(row), b1 = _mm256_loadu_ps(row + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 ai = _mm256_broadcast_ss(kARows ? a_row[i] + at : a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_ps(c + i * ldc, acc[i][0]);
    _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
  }
}

void run_a_rows_avx2(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns, const float* b,
                     float* c, int64_t ldc, bool load_c) {
  run_avx2_tile<false, true>(kc, nullptr, b, c, ldc, load_c, nullptr, ARows{a_base, a_rows, a_columns});
}

void run_avx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
  run_avx2_tile<false>(kc, a, b, c, ldc, load_c, nullptr);
}
void run_rows_avx2(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                   bool load_c) {
  run_avx2_tile<true>(kc, a, b_base, c, ldc, load_c, b_rows);
}

void interleave_nr_avx2(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kNr>(rows, stride, depth, out);
}

}  // namespace

extern const MicroKernel kMicroKernelAvx2 = {
    Isa::kAvx2, kMr, kNr, run_avx2, nullptr, nullptr, interleave_nr_avx2, run_rows_avx2, nullptr, run_a_rows_avx2};

}  // namespace aclnn_cpu
