// Float -> FLOAT16 / BF16 narrowing of 16 floats in a zmm register, for translation units compiled
// with -mavx512f only (convert_avx512.cpp, kernels/kits/kit_avx512.cpp): rounded once to nearest even,
// as Eigen's conversions do (a BF16 NaN becomes the quiet NaN 0x7FC0 with its sign).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace aclnn_cpu {
namespace narrow_avx512 {

// (The zero-masking forms of the shift and the narrowing: GCC 12 warns that the plain ones' undefined
// pass-through register may be used uninitialised.)
constexpr __mmask16 kAll = 0xFFFF;

// BF16 bits of 16 floats in the low halves of 32-bit lanes: the integer rounding of floats_to_bf16_avx2.
inline __m512i bf16_bits(__m512i bits) {
  const __m512i high = _mm512_maskz_srli_epi32(kAll, bits, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_maskz_srli_epi32(kAll, _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  // (high & 0x8000) | 0x7FC0: the sign over the quiet NaN (ternary logic: A & B | C)
  const __m512i quiet = _mm512_ternarylogic_epi32(high, _mm512_set1_epi32(0x8000), _mm512_set1_epi32(0x7FC0), 0xEA);
  return _mm512_mask_blend_epi32(nan, rounded, quiet);
}

// Stores 16 floats at `out` as BF16 (`bf16`) or FLOAT16 values.
inline void store16(uint16_t* out, __m512 values, bool bf16) {
  const __m256i narrow = bf16 ? _mm512_maskz_cvtepi32_epi16(kAll, bf16_bits(_mm512_castps_si512(values)))
                              : _mm512_maskz_cvtps_ph(kAll, values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), narrow);
}

// Stores the first lanes of 16 floats (those set in `lanes`) at `out` as BF16 (`bf16`) or FLOAT16 values,
// writing nothing past them (the same bits as store16).
inline void store16_masked(uint16_t* out, __m512 values, bool bf16, __mmask16 lanes) {
  const __m512i bits =
      bf16 ? bf16_bits(_mm512_castps_si512(values))
           : _mm512_maskz_cvtepu16_epi32(
                 kAll, _mm512_maskz_cvtps_ph(kAll, values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm512_mask_cvtepi32_storeu_epi16(out, lanes, bits);  // (the bits in 32-bit lanes, stored masked)
}

}  // namespace narrow_avx512
}  // namespace aclnn_cpu
