// AVX2 + FMA micro-kernel: 6 x 16 tile, 12 accumulators (ymm), B read as two vectors per p and
// each A entry broadcast. Compiled with -mavx2 -mfma -mf16c; called only when the CPU has AVX2 and
// FMA (and, for FLOAT16 rows or results, F16C: run_rows_16bit).
#include <immintrin.h>

#include <cstring>

#include "kernels/common/halves_avx2.h"
#include "kernels/common/keep_in_register.h"
#include "kernels/gemm/microkernel.h"
#include "kernels/gemm/transpose_avx.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = 6, kNr = 16;

// A read in place (run_a_rows): row i of the sliver at base + rows[i], its entry p at + columns[p] (floats,
// or with kABf16 BF16 values).
struct ARows {
  const void* base;
  const int64_t* rows;
  const int64_t* columns;
};

// B's 16-bit rows (kB16: FLOAT16, or with kBBf16 BF16) and where the results go narrowed (out: row
// i's at out + i * ldo, as BF16 where bf16, else FLOAT16).
struct Rows16 {
  const uint16_t* base = nullptr;
  uint16_t* out = nullptr;
  int64_t ldo = 0;
  bool bf16 = false;
};

// Columns 0..7 in lo and 8..15 in hi become the even columns in lo and the odd ones in hi.
inline void deinterleave_pairs_avx2(__m256& lo, __m256& hi) {
  const __m256 even = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));  // 0 2 8 10 | 4 6 12 14
  const __m256 odd = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  lo = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0)));
  hi = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), _MM_SHUFFLE(3, 1, 2, 0)));
}

// The inverse: even columns in lo and odd ones in hi back to columns 0..7 and 8..15.
inline void interleave_pairs_avx2(__m256& lo, __m256& hi) {
  const __m256 low = _mm256_unpacklo_ps(lo, hi), high = _mm256_unpackhi_ps(lo, hi);  // 0-3 8-11 | 4-7 12-15
  lo = _mm256_permute2f128_ps(low, high, 0x20);
  hi = _mm256_permute2f128_ps(low, high, 0x31);
}

// B row p at b + p * kNr, or, with kRows, at b + rows[p] (read in place; with kB16 at
// sixteen.base + rows[p], 16-bit values widened as they are loaded); A entry (p, i) at a[p * kMr + i],
// or, with kARows, read in place through `in_place` (with kABf16 BF16 values: the 32 bits that end
// with the entry broadcast and their low half cleared, an exact widening that costs an AND, not a
// shuffle). The results go to c, or narrowed to sixteen.out where that is set (c then only read when
// load_c). Inlined into each entry point, so that each is compiled for its own arguments (run_avx2 without
// the narrowing branch, which run_narrow_avx2 shares its template arguments with).
template <bool kRows, bool kARows = false, bool kB16 = false, bool kBBf16 = false, bool kABf16 = false>
__attribute__((always_inline)) inline void run_avx2_tile(int64_t kc, const float* a, const float* b, float* c,
                                                         int64_t ldc, bool load_c, const int64_t* rows,
                                                         ARows in_place = {}, Rows16 sixteen = {}) {
  // With BF16 rows the accumulators hold the tile's even columns (acc[i][0]) and odd ones (acc[i][1]):
  // 8 BF16 pairs widen with one shift and one AND, where widening 16 values in order takes two
  // zero-extensions and two shifts, which compete with the FMAs for their ports on AMD's cores. Every
  // entry's chain is the same.
  constexpr bool kSplit = kB16 && kBBf16;
  __m256 acc[kMr][2];
  const float* a_row[kMr];
  const uint16_t* a16_row[kMr];  // (kABf16: the value below the row's entry 0)
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    a_row[i] = kARows && !kABf16 ? static_cast<const float*>(in_place.base) + in_place.rows[i] : nullptr;
    a16_row[i] = kABf16 ? static_cast<const uint16_t*>(in_place.base) + in_place.rows[i] - 1 : nullptr;
    // Each row a pointer in a register of its own, so that every broadcast is one load from it plus the
    // column's offset: left to itself GCC keeps one row as base + offset and spends two more
    // instructions on it per step.
    if constexpr (kABf16) keep_in_register(a16_row[i]);  // (kABf16 implies kARows)
    if constexpr (kARows && !kABf16) keep_in_register(a_row[i]);
    acc[i][0] = load_c ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
    acc[i][1] = load_c ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
    if (kSplit && load_c) deinterleave_pairs_avx2(acc[i][0], acc[i][1]);
  }
  const __m256 upper_halves = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0xFFFF0000u)));
  for (int64_t p = 0; p < kc; ++p, a += kARows ? 0 : kMr) {  // (a is null when A is read in place)
    const int64_t at = kARows ? in_place.columns[p] : 0;
    __m256 b0, b1;
    if constexpr (kSplit) {  // columns 0, 2, ..., 14 and 1, 3, ..., 15
      const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sixteen.base + rows[p]));
      b0 = _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
      b1 = _mm256_and_ps(_mm256_castsi256_ps(pairs), upper_halves);
    } else if constexpr (kB16) {
      const uint16_t* row = sixteen.base + rows[p];
      b0 = widen8_avx2<false>(row), b1 = widen8_avx2<false>(row + 8);
    } else {
      const float* row = kRows ? b + rows[p] : b + p * kNr;
      b0 = _mm256_loadu_ps(row), b1 = _mm256_loadu_ps(row + 8);
    }
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      __m256 ai;
      if constexpr (kABf16) {  // (a VBROADCASTSS from 2 bytes below the entry)
        float pair;
        std::memcpy(&pair, a16_row[i] + at, sizeof pair);
        ai = _mm256_and_ps(_mm256_set1_ps(pair), upper_halves);
      } else {
        ai = _mm256_broadcast_ss(kARows ? a_row[i] + at : a + i);
      }
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  if (sixteen.out != nullptr) {  // each result rounded once, as it leaves the registers
    constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      uint16_t* out = sixteen.out + i * sixteen.ldo;
      if (kSplit && sixteen.bf16) {  // an even column's bits in the low half of its pair, the odd one's above
        const __m256i even = bf16_bits_avx2(_mm256_castps_si256(acc[i][0]));
        const __m256i odd = bf16_bits_avx2(_mm256_castps_si256(acc[i][1]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_or_si256(even, _mm256_slli_epi32(odd, 16)));
      } else if (kSplit) {
        const __m128i even = _mm256_cvtps_ph(acc[i][0], kNearestEven), odd = _mm256_cvtps_ph(acc[i][1], kNearestEven);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(even, odd));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8), _mm_unpackhi_epi16(even, odd));
      } else {
        for (int v = 0; v < 2; ++v) {
          const __m128i narrow = sixteen.bf16 ? narrow_bf16_avx2(acc[i][v]) : _mm256_cvtps_ph(acc[i][v], kNearestEven);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8 * v), narrow);
        }
      }
    }
    return;
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    if (kSplit) interleave_pairs_avx2(acc[i][0], acc[i][1]);
    _mm256_storeu_ps(c + i * ldc, acc[i][0]);
    _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
  }
}

void run_rows_16bit_avx2(int64_t kc, const float* a, const uint16_t* b_base, const int64_t* b_rows, bool b_bf16,
                         float* c, int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool out_bf16) {
  const Rows16 sixteen{b_base, out, ldo, out_bf16};
  if (b_bf16) return run_avx2_tile<true, false, true, true>(kc, a, nullptr, c, ldc, load_c, b_rows, {}, sixteen);
  run_avx2_tile<true, false, true, false>(kc, a, nullptr, c, ldc, load_c, b_rows, {}, sixteen);
}

void run_a_rows_avx2(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns, const float* b,
                     float* c, int64_t ldc, bool load_c) {
  run_avx2_tile<false, true>(kc, nullptr, b, c, ldc, load_c, nullptr, ARows{a_base, a_rows, a_columns});
}

void run_a_rows_bf16_avx2(int64_t kc, const uint16_t* a_base, const int64_t* a_rows, const int64_t* a_columns,
                          const float* b, float* c, int64_t ldc, bool load_c) {
  run_avx2_tile<false, true, false, false, true>(kc, nullptr, b, c, ldc, load_c, nullptr,
                                                 ARows{a_base, a_rows, a_columns});
}

void run_avx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
  run_avx2_tile<false>(kc, a, b, c, ldc, load_c, nullptr);
}
void run_narrow_avx2(int64_t kc, const float* a, const float* b, const float* c, int64_t ldc, bool load_c,
                     uint16_t* out, int64_t ldo, bool bf16) {
  // (c is only read: with load_c, the earlier depth blocks' sums)
  run_avx2_tile<false>(kc, a, b, const_cast<float*>(c), ldc, load_c, nullptr, {}, Rows16{nullptr, out, ldo, bf16});
}
void run_rows_avx2(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                   bool load_c) {
  run_avx2_tile<true>(kc, a, b_base, c, ldc, load_c, b_rows);
}

void interleave_nr_avx2(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kNr>(rows, stride, depth, out);
}

}  // namespace

extern const MicroKernel kMicroKernelAvx2 = [] {
  MicroKernel kernel{Isa::kAvx2, kMr, kNr, run_avx2};
  kernel.interleave_nr = interleave_nr_avx2;
  kernel.run_rows = run_rows_avx2;
  kernel.run_a_rows = run_a_rows_avx2;
  kernel.run_rows_16bit = run_rows_16bit_avx2;
  kernel.run_a_rows_bf16 = run_a_rows_bf16_avx2;
  kernel.run_narrow = run_narrow_avx2;
  return kernel;
}();

}  // namespace aclnn_cpu
