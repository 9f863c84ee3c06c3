// The quantized convolution's float steps on AVX-512 (kernels/kits/quant_kernels.h, finish): each
// position's 16 channels in one register, rounded to BF16 by integer steps or to FLOAT16 by VCVTPS2PH (the
// same rounding as the AVX2 kit's F16C), then 8 positions x 16 channels transposed in 256-bit registers
// (channels 0-7 in the low lanes, 8-15 in the high) so that each channel's results are stored side by side.
// Compiled without contraction (src/CMakeLists.txt). The AVX-512 kit's QuantKernels take it.
#include <immintrin.h>

#include <cstdint>

#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {
namespace {

// 16 floats rounded to BF16 or FLOAT16 bits as round16_bits does (NaN: the quiet NaN of its sign).
__m256i round16_avx512(__m512 value, bool bf16) {
  const __m512i bits = _mm512_castps_si512(value);
  const __mmask16 nan = _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
  const __m512i sign = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x8000));
  __m512i rounded;
  if (bf16) {
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), odd), 16);
  } else {
    rounded = _mm512_cvtepu16_epi32(_mm512_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT));
  }
  const __m512i quiet = _mm512_or_si512(sign, _mm512_set1_epi32(bf16 ? 0x7FC0 : 0x7E00));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));  // (each lane below 2^16)
}

// The first `positions` of a channel's 8 results.
void store_positions(__m128i results, int positions, uint16_t* out) {
  if (positions == kQuantFinishPositions) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), results);
    return;
  }
  uint16_t bits[kQuantFinishPositions];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(bits), results);
  for (int j = 0; j < positions; ++j) out[j] = bits[j];
}

}  // namespace

void quant_finish_avx512(const int32_t* acc, int positions, const QuantChannelBlock& channels, bool bf16, int rows,
                         uint16_t* out, int64_t channel_stride) {
  const __m512 scale = _mm512_loadu_ps(channels.scale), bias = _mm512_loadu_ps(channels.bias);
  const __m512i int_bias = _mm512_loadu_si512(channels.int_bias);
  __m256i p[kQuantFinishPositions];  // position j's 16 results (zero past `positions`)
  for (int j = 0; j < kQuantFinishPositions; ++j) {
    if (j >= positions) {
      p[j] = _mm256_setzero_si256();
      continue;
    }
    const __m512i sum = _mm512_loadu_si512(acc + j * kQuantTileChannels);
    const __m512 value = channels.integer_bias
                             ? _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sum, int_bias)), scale)
                             : _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sum), scale), bias);
    p[j] = round16_avx512(value, bf16);
  }
  // The 8 x 8 transposition in each 128-bit half: channel r's 8 positions (low half) and channel r + 8's.
  const __m256i t0 = _mm256_unpacklo_epi16(p[0], p[1]), t1 = _mm256_unpackhi_epi16(p[0], p[1]);
  const __m256i t2 = _mm256_unpacklo_epi16(p[2], p[3]), t3 = _mm256_unpackhi_epi16(p[2], p[3]);
  const __m256i t4 = _mm256_unpacklo_epi16(p[4], p[5]), t5 = _mm256_unpackhi_epi16(p[4], p[5]);
  const __m256i t6 = _mm256_unpacklo_epi16(p[6], p[7]), t7 = _mm256_unpackhi_epi16(p[6], p[7]);
  const __m256i u0 = _mm256_unpacklo_epi32(t0, t2), u1 = _mm256_unpackhi_epi32(t0, t2);
  const __m256i u2 = _mm256_unpacklo_epi32(t1, t3), u3 = _mm256_unpackhi_epi32(t1, t3);
  const __m256i u4 = _mm256_unpacklo_epi32(t4, t6), u5 = _mm256_unpackhi_epi32(t4, t6);
  const __m256i u6 = _mm256_unpacklo_epi32(t5, t7), u7 = _mm256_unpackhi_epi32(t5, t7);
  const __m256i channel_rows[8] = {_mm256_unpacklo_epi64(u0, u4), _mm256_unpackhi_epi64(u0, u4),
                                   _mm256_unpacklo_epi64(u1, u5), _mm256_unpackhi_epi64(u1, u5),
                                   _mm256_unpacklo_epi64(u2, u6), _mm256_unpackhi_epi64(u2, u6),
                                   _mm256_unpacklo_epi64(u3, u7), _mm256_unpackhi_epi64(u3, u7)};
  for (int r = 0; r < 8; ++r) {
    if (r < rows) store_positions(_mm256_castsi256_si128(channel_rows[r]), positions, out + r * channel_stride);
    if (r + 8 < rows) {
      store_positions(_mm256_extracti128_si256(channel_rows[r], 1), positions, out + (r + 8) * channel_stride);
    }
  }
}

}  // namespace aclnn_cpu
