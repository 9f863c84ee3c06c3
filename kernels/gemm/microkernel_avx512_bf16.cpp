// AVX512_BF16 micro-kernel (bf16_dot.h): 8 x 32 tile, 16 accumulators, B's pair row read as two
// vectors of 16 pairs, each A pair broadcast; 8 x 16 for a last tile that narrow. Compiled with
// -mavx512f -mavx512bf16; called only when the CPU has AVX512_BF16 (bf16_dot_available).
#include <immintrin.h>

#include "kernels/gemm/bf16_dot.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = kBf16DotRows;  // (and kBf16DotColumns = 32: two vectors of 16 pairs)

template <int V>
void rows_tile_avx512bf16(int64_t kc, const uint32_t* a, const uint32_t* b_base, const int64_t* b_rows, float* c, int64_t ldc,
               bool load_c) {
  __m512 acc[kMr][V];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[i][v] = load_c ? _mm512_loadu_ps(c + i * ldc + 16 * v) : _mm512_setzero_ps();
  }
#pragma GCC unroll 4
  for (int64_t q = 0; q < kc; ++q, a += kMr) {
    _mm_prefetch(reinterpret_cast<const char*>(a + 8 * kMr), _MM_HINT_T0);
    const uint32_t* row = b_base + b_rows[q];
    __m512bh bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(row + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[i]));
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], bv[v], ai);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);
  }
}

}  // namespace

void bf16_dot_rows_tile_avx512(int64_t kc, const uint32_t* a, const uint32_t* b_base, const int64_t* b_rows, float* c,
                        int64_t ldc, bool load_c, bool half) {
  half ? rows_tile_avx512bf16<1>(kc, a, b_base, b_rows, c, ldc, load_c) : rows_tile_avx512bf16<2>(kc, a, b_base, b_rows, c, ldc, load_c);
}

}  // namespace aclnn_cpu
