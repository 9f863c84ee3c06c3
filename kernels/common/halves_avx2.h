// FLOAT16/BF16 <-> float of 8 values in a ymm register, for translation units compiled with -mavx2
// -mf16c (convert_avx2.cpp, kernels/kits/kit_avx2.cpp): widened exactly; narrowed to BF16 rounded once to
// nearest even, as Eigen's conversions do (a NaN becomes the quiet NaN 0x7FC0 with its sign).
// Internal linkage: each unit keeps its own copy, compiled for its own instruction set.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace aclnn_cpu {

// 8 FLOAT16 (or, kBf16, BF16) values widened to floats (exact).
template <bool kBf16>
static inline __m256 widen8_avx2(const uint16_t* in) {
  const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  return kBf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16)) : _mm256_cvtph_ps(bits);
}

// BF16 bits of 8 floats (given as their bits) in the low halves of 32-bit lanes.
static inline __m256i bf16_bits_avx2(__m256i bits) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF))), 16);
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
  const __m256i quiet = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x8000)),
                                        _mm256_set1_epi32(0x7FC0));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

// The 8 BF16 values of 8 floats, in order.
static inline __m128i narrow_bf16_avx2(__m256 values) {
  const __m256i narrow = bf16_bits_avx2(_mm256_castps_si256(values));
  // 32 -> 16 bits (values fit): pack within lanes, then bring the two low quarters together.
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(narrow, narrow), 0x08));
}

}  // namespace aclnn_cpu
