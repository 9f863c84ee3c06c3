// AVX-512F float -> BF16 narrowing (convert.h), 16 values per step with the mask registers: the
// same integer rounding as floats_to_bf16_avx2, so the same bits, in about a third of its
// instructions (it was a sixth of a BF16 1x1 layer's gradInput, storing the result). Compiled with
// -mavx512f; called only when the CPU has AVX-512F and ACLNN_CONVBWD_ISA allows it
// (avx512_conversions()).
#include <immintrin.h>

#include "kernels/common/convert.h"

namespace aclnn_cpu {
namespace {

// (The zero-masking forms of the shift and the narrowing: GCC 12 warns that the plain ones' undefined
// pass-through register may be used uninitialised.)
constexpr __mmask16 kAll = 0xFFFF;

// BF16 bits of 16 floats in the low halves of 32-bit lanes: rounded to nearest even; a NaN becomes
// the quiet NaN 0x7FC0 with its sign (as Eigen::bfloat16's conversion does).
inline __m512i bf16_bits_avx512(__m512i bits) {
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

}  // namespace

void floats_to_bf16_avx512(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i narrow = bf16_bits_avx512(_mm512_loadu_si512(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_maskz_cvtepi32_epi16(kAll, narrow));
  }
  if (i < n) {  // the last 1-15: masked (nothing past the run is read or written)
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i narrow = bf16_bits_avx512(_mm512_maskz_loadu_epi32(tail, in + i));
    _mm512_mask_cvtepi32_storeu_epi16(out + i, tail, narrow);
  }
}

}  // namespace aclnn_cpu
