// The tile operations on AVX512_BF16's pair instructions (VDPBF16PS), exactly as TDPBF16PS computes
// (amx.h), for CPUs without AMX: BF16 results then have the same bits on both.
//
// VDPBF16PS adds to each float lane the product of the lane's odd BF16 entries, then of its even
// ones, each an FMA rounded to nearest even with AMX's denormal handling (inputs as zero, tiny results
// flushed after rounding; a denormal accumulator also counts as zero, and a chain from zero never holds
// one). Re-paired so that a word holds two entries of one chain, earlier one in the odd (high) half,
// one instruction takes two steps of a chain: per 16-pair chunk, words (entry 4k+2 | entry 4k << 16)
// for k = 0..7 make the even chain (entries 0, 2, .., 30 in order) and (4k+3 | 4k+1 << 16) the odd
// one, for A and B alike. Then even + odd and the entry + that are float adds under MXCSR's FTZ.
// Compiled with -mavx512f -mavx512bw -mavx512bf16; run only where the CPU has them (amx.cpp).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/amx/amx.h"
#include "kernels/amx/amx_tiles.h"

namespace aclnn_cpu {
namespace {

// A row of 16 pairs (x_k, y_k) = (pair 2k, pair 2k + 1), k < 8, as 32 BF16 entries, re-paired: word k
// (y_k's even | x_k's even << 16), word 8 + k (y_k's odd | x_k's odd << 16).
__m512i chain_words_avx512(__m512i pairs) {
  const __m512i order = _mm512_set_epi16(29, 31, 25, 27, 21, 23, 17, 19, 13, 15, 9, 11, 5, 7, 1, 3,  //
                                         28, 30, 24, 26, 20, 22, 16, 18, 12, 14, 8, 10, 4, 6, 0, 2);
  return _mm512_permutexvar_epi16(order, pairs);
}
// Pair rows 2k (x) and 2k + 1 (y) of 16 columns re-paired: the even chain's words (y's even | x's even
// << 16) and the odd chain's (y's odd | x's odd << 16).
void chain_rows_avx512(__m512i x, __m512i y, __m512i* even, __m512i* odd) {
  constexpr __mmask32 kHighHalves = 0xAAAAAAAAu;
  constexpr __mmask16 kAll = 0xFFFF;  // (the masked shifts: GCC 12 warns of the plain ones' undefined source)
  *even = _mm512_mask_blend_epi16(kHighHalves, y, _mm512_maskz_slli_epi32(kAll, x, 16));
  *odd = _mm512_mask_blend_epi16(kHighHalves, _mm512_maskz_srli_epi32(kAll, y, 16), x);
}

// The tiles interface of amx_tiles.h. A chunk's operands are read where they lie once re-paired: A
// packed re-paired (pack_amx_left) or staged and re-paired in place (prepare_a), B staged and
// re-paired in place (prepare_b, once per staging) or else copied here re-paired (B as rows: 2k the
// even chain's words of 32 columns, 2k + 1 the odd chain's). C's block is worked in where it lies.
struct avx512_bf16_tiles : AmxCInPlace {
  alignas(64) uint32_t b[kAmxPairs][kAmxBlock];
  const char* a_tile[2] = {};  // rows 0-15 and 16-31 of A, a_stride bytes apart
  const char* b_tile[2] = {};  // columns 0-15 and 16-31 of B, b_stride bytes between rows
  int64_t a_stride = 0, b_stride = 0;
  AmxFlushMode mode;  // (the adds into C; VDPBF16PS flushes as the tiles do whatever MXCSR says)

  static constexpr int64_t kPassChunks = 8;
  static constexpr bool kLoadsBInPlace = false;
  void prepare_a(uint32_t* tile) {
    for (int64_t i = 0; i < kAmxRows; ++i) {
      __m512i* row = reinterpret_cast<__m512i*>(tile + i * kAmxPairs);
      _mm512_storeu_si512(row, chain_words_avx512(_mm512_loadu_si512(row)));
    }
  }
  void prepare_b(uint32_t* rows, int64_t stride) {
    for (int64_t k = 0; k < kAmxPairs / 2; ++k) {
      for (int64_t half = 0; half < 2; ++half) {
        char* x = reinterpret_cast<char*>(rows + 16 * half) + 2 * k * stride;
        __m512i even, odd;
        chain_rows_avx512(_mm512_loadu_si512(x), _mm512_loadu_si512(x + stride), &even, &odd);
        _mm512_storeu_si512(x, even);
        _mm512_storeu_si512(x + stride, odd);
      }
    }
  }
  void load_ab(const void* a0, const void* a1, int64_t a_row_stride, const void* b0, const void* b1,
               int64_t b_row_stride, bool b_prepared) {
    a_tile[0] = static_cast<const char*>(a0), a_tile[1] = static_cast<const char*>(a1), a_stride = a_row_stride;
    if (b_prepared) {
      b_tile[0] = static_cast<const char*>(b0), b_tile[1] = static_cast<const char*>(b1), b_stride = b_row_stride;
    } else {
      for (int64_t k = 0; k < kAmxPairs / 2; ++k) {
        for (int64_t half = 0; half < 2; ++half) {
          const char* x = static_cast<const char*>(half == 0 ? b0 : b1) + 2 * k * b_row_stride;
          __m512i even, odd;
          chain_rows_avx512(_mm512_loadu_si512(x), _mm512_loadu_si512(x + b_row_stride), &even, &odd);
          _mm512_store_si512(b[2 * k] + 16 * half, even);
          _mm512_store_si512(b[2 * k + 1] + 16 * half, odd);
        }
      }
      b_tile[0] = reinterpret_cast<const char*>(b[0]), b_tile[1] = reinterpret_cast<const char*>(b[0] + 16);
      b_stride = sizeof b[0];
    }
  }
  // C (32 x 32) += A (32 x 16 pairs) * B (16 pairs x 32), four rows at a time: per row and 16 columns
  // an even and an odd chain from zero, 8 instructions each.
  void dot() {
    c_fresh ? rows<true>() : rows<false>();
    c_fresh = false;
  }
  template <bool kFresh>
  void rows() {
    constexpr int kRows = 4;
    for (int64_t i0 = 0; i0 < kAmxBlock; i0 += kRows) {
      const uint32_t* a_row[kRows];
      for (int r = 0; r < kRows; ++r)
        a_row[r] = reinterpret_cast<const uint32_t*>(a_tile[(i0 + r) / kAmxRows] + (i0 + r) % kAmxRows * a_stride);
      __m512 even[kRows][2], odd[kRows][2];
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) even[r][0] = even[r][1] = odd[r][0] = odd[r][1] = _mm512_setzero_ps();
#pragma GCC unroll 1
      for (int k = 0; k < kAmxPairs / 2; ++k) {
        const char* even_row = b_tile[0] + 2 * k * b_stride;
        const __m512bh even_b0 = (__m512bh)_mm512_loadu_si512(even_row);
        const __m512bh even_b1 = (__m512bh)_mm512_loadu_si512(even_row + (b_tile[1] - b_tile[0]));
        const __m512bh odd_b0 = (__m512bh)_mm512_loadu_si512(even_row + b_stride);
        const __m512bh odd_b1 = (__m512bh)_mm512_loadu_si512(even_row + b_stride + (b_tile[1] - b_tile[0]));
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          const __m512bh even_a = (__m512bh)_mm512_set1_epi32(static_cast<int>(a_row[r][k]));
          const __m512bh odd_a = (__m512bh)_mm512_set1_epi32(static_cast<int>(a_row[r][8 + k]));
          even[r][0] = _mm512_dpbf16_ps(even[r][0], even_a, even_b0);
          even[r][1] = _mm512_dpbf16_ps(even[r][1], even_a, even_b1);
          odd[r][0] = _mm512_dpbf16_ps(odd[r][0], odd_a, odd_b0);
          odd[r][1] = _mm512_dpbf16_ps(odd[r][1], odd_a, odd_b1);
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        float* entry = c_row(i0 + r);
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) {
          // (a fresh entry is +0 + the sum: a sum of -0 gives +0, as the tiles' zeroed C does)
          const __m512 before = kFresh ? _mm512_setzero_ps() : _mm512_loadu_ps(entry + 16 * v);
          _mm512_storeu_ps(entry + 16 * v, _mm512_add_ps(before, _mm512_add_ps(even[r][v], odd[r][v])));
        }
      }
    }
  }
};

}  // namespace

ACLNN_AMX_DEFINE_PRODUCTS(avx512_bf16, avx512_bf16_tiles)

}  // namespace aclnn_cpu
