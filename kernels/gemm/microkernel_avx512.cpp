// AVX-512F micro-kernel: 8 x 32 tile, 16 accumulators (zmm), B read as two vectors per p and
// each A entry broadcast; an 8 x 16 variant for a last column sliver with at most 16 valid
// columns. Compiled with -mavx512f -mfma; called only when the CPU has AVX-512F.
#include <immintrin.h>

#include "kernels/common/narrow_avx512.h"
#include "kernels/gemm/microkernel.h"
#include "kernels/gemm/transpose_avx.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = 8, kNr = 32;

// A read in place (run_a_rows): row i of the sliver at base + rows[i], its entry p at + columns[p].
struct ARows {
  const float* base;
  const int64_t* rows;
  const int64_t* columns;
};

// Where a tile's results go narrowed (kNarrow): row i's at out + i * ld, as BF16 (bf16) or FLOAT16.
struct Narrowed {
  uint16_t* out;
  int64_t ld;
  bool bf16;
};

// The first 16 * V columns of the tile (B slivers are kNr wide whatever V is). B row p at
// b + p * kNr, or, with kRows, at b + rows[p] (read in place); A entry (p, i) at a[p * kMr + i], or,
// with kARows, read in place through `in_place`. With kNarrow the results are stored narrowed
// (`narrowed`), not into c (read only when load_c).
template <int V, bool kRows = false, bool kARows = false, bool kNarrow = false>
void run_avx512_columns(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c,
                        const int64_t* rows = nullptr, ARows in_place = {}, Narrowed narrowed = {}) {
  __m512 acc[kMr][V];
  const float* a_row[kMr];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    a_row[i] = kARows ? in_place.base + in_place.rows[i] : nullptr;
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[i][v] = load_c ? _mm512_loadu_ps(c + i * ldc + 16 * v) : _mm512_setzero_ps();
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p, a += kARows ? 0 : kMr) {  // (a is null when A is read in place)
    if (!kARows) _mm_prefetch(reinterpret_cast<const char*>(a + 8 * kMr), _MM_HINT_T0);
    const int64_t at = kARows ? in_place.columns[p] : 0;
    const float* row = kRows ? b + rows[p] : b + p * kNr;
    __m512 bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = _mm512_loadu_ps(row + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const __m512 ai = _mm512_set1_ps(kARows ? a_row[i][at] : a[i]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      if constexpr (kNarrow) {
        narrow_avx512::store16(narrowed.out + i * narrowed.ld + 16 * v, acc[i][v], narrowed.bf16);
      } else {
        _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);
      }
    }
  }
}

void run_a_rows_avx512(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns, const float* b,
                       float* c, int64_t ldc, bool load_c) {
  run_avx512_columns<2, false, true>(kc, nullptr, b, c, ldc, load_c, nullptr, ARows{a_base, a_rows, a_columns});
}

void run_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
  run_avx512_columns<2>(kc, a, b, c, ldc, load_c);
}
void run_avx512_half(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
  run_avx512_columns<1>(kc, a, b, c, ldc, load_c);
}

void run_rows_avx512(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                     bool load_c) {
  run_avx512_columns<2, true>(kc, a, b_base, c, ldc, load_c, b_rows);
}
void run_rows_narrow_avx512(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, const float* c,
                            int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool bf16) {
  // (c is only read: with load_c, the earlier depth blocks' sums)
  run_avx512_columns<2, true, false, true>(kc, a, b_base, const_cast<float*>(c), ldc, load_c, b_rows, {},
                                           Narrowed{out, ldo, bf16});
}
void run_narrow_avx512(int64_t kc, const float* a, const float* b, const float* c, int64_t ldc, bool load_c,
                       uint16_t* out, int64_t ldo, bool bf16) {
  // (c is only read: with load_c, the earlier depth blocks' sums)
  run_avx512_columns<2, false, false, true>(kc, a, b, const_cast<float*>(c), ldc, load_c, nullptr, {},
                                            Narrowed{out, ldo, bf16});
}
void run_rows_half_avx512(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                          bool load_c) {
  run_avx512_columns<1, true>(kc, a, b_base, c, ldc, load_c, b_rows);
}

void interleave_mr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kMr>(rows, stride, depth, out);
}
void interleave_nr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kNr>(rows, stride, depth, out);
}

}  // namespace

extern const MicroKernel kMicroKernelAvx512 = [] {
  MicroKernel kernel{Isa::kAvx512, kMr, kNr, run_avx512};
  kernel.run_half = run_avx512_half;
  kernel.interleave_mr = interleave_mr_avx512;
  kernel.interleave_nr = interleave_nr_avx512;
  kernel.run_rows = run_rows_avx512;
  kernel.run_rows_half = run_rows_half_avx512;
  kernel.run_a_rows = run_a_rows_avx512;
  kernel.run_rows_narrow = run_rows_narrow_avx512;
  kernel.run_narrow = run_narrow_avx512;
  return kernel;
}();

}  // namespace aclnn_cpu
