// AVX512_BF16 micro-kernel (bf16_dot.h): 8 x 32 tile, 16 accumulators, B's pair row read as two
// vectors of 16 pairs, each A pair broadcast; 8 x 16 for a last tile that narrow. B read in place
// and A packed (bf16_dot_rows), or A read in place and B packed (bf16_dot_a_rows). Compiled with
// -mavx512f -mavx512bf16; called only when the CPU has AVX512_BF16 (bf16_dot_available).
#include <immintrin.h>

#include <cstring>

#include "kernels/gemm/bf16_dot.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = kBf16DotRows;  // (and kBf16DotColumns = 32: two vectors of 16 pairs)

// A read in place (bf16_dot_a_rows): pair q of row i at base + rows[i] + columns[q].
struct ARows {
  const uint16_t* base;
  const int64_t* rows;
  const int64_t* columns;
};

// The first 16 * V columns of the tile. B's pair row q at b + b_rows[q] (read in place) or, with
// kARows, at b + q * 32 (a packed sliver); A's pair (q, i) at a[q * 8 + i], or with kARows read in
// place through `in_place`.
template <int V, bool kARows = false>
void tile_avx512bf16(int64_t kc, const uint32_t* a, const uint32_t* b, const int64_t* b_rows, float* c, int64_t ldc,
                     bool load_c, ARows in_place = {}) {
  __m512 acc[kMr][V];
  const uint16_t* a_row[kMr];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    a_row[i] = kARows ? in_place.base + in_place.rows[i] : nullptr;
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[i][v] = load_c ? _mm512_loadu_ps(c + i * ldc + 16 * v) : _mm512_setzero_ps();
  }
#pragma GCC unroll 4
  for (int64_t q = 0; q < kc; ++q, a += kARows ? 0 : kMr) {  // (a is null when A is read in place)
    if (!kARows) _mm_prefetch(reinterpret_cast<const char*>(a + 8 * kMr), _MM_HINT_T0);
    const uint32_t* row = kARows ? b + q * kBf16DotColumns : b + b_rows[q];
    const int64_t at = kARows ? in_place.columns[q] : 0;
    __m512bh bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(row + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      uint32_t pair = 0;
      if (kARows) {
        std::memcpy(&pair, a_row[i] + at, sizeof(pair));
      } else {
        pair = a[i];
      }
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
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
  half ? tile_avx512bf16<1>(kc, a, b_base, b_rows, c, ldc, load_c)
       : tile_avx512bf16<2>(kc, a, b_base, b_rows, c, ldc, load_c);
}

void bf16_dot_a_rows_tile_avx512(int64_t kc, const uint16_t* a_base, const int64_t* a_rows, const int64_t* a_columns,
                                 const uint32_t* b, float* c, int64_t ldc, bool load_c) {
  tile_avx512bf16<2, true>(kc, nullptr, b, nullptr, c, ldc, load_c, ARows{a_base, a_rows, a_columns});
}

}  // namespace aclnn_cpu
