// INT8 rows (channels) interleaved into channels-last u8 (v + 128) in baseline vector instructions (SSE2 on
// x86-64, NEON on aarch64, scalar elsewhere): the quantized convolution's channels-last copy for its byte
// tile (kernels/quant/direct_s8.cpp), 4 or 16 channels and 16 positions at a time.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace aclnn_cpu {

// dst[j * dst_stride + i] = rows[i][j] + 128 (as u8) for i < 4 and j < columns (at most 16; each row
// is read 16 bytes long).
inline void interleave_4x16_u8(const int8_t* const rows[4], uint8_t* dst, int64_t dst_stride, int columns = 16) {
  uint8_t quads[64];  // quads[4j + i]
#if defined(__SSE2__)
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  __m128i r[4];
  for (int i = 0; i < 4; ++i) r[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[i])), flip);
  const __m128i low01 = _mm_unpacklo_epi8(r[0], r[1]), high01 = _mm_unpackhi_epi8(r[0], r[1]);
  const __m128i low23 = _mm_unpacklo_epi8(r[2], r[3]), high23 = _mm_unpackhi_epi8(r[2], r[3]);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(quads), _mm_unpacklo_epi16(low01, low23));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(quads + 16), _mm_unpackhi_epi16(low01, low23));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(quads + 32), _mm_unpacklo_epi16(high01, high23));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(quads + 48), _mm_unpackhi_epi16(high01, high23));
#elif defined(__aarch64__)
  const uint8x16_t flip = vdupq_n_u8(0x80);
  uint8x16x4_t in;
  in.val[0] = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(rows[0])), flip);
  in.val[1] = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(rows[1])), flip);
  in.val[2] = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(rows[2])), flip);
  in.val[3] = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(rows[3])), flip);
  vst4q_u8(quads, in);
#else
  for (int j = 0; j < 16; ++j) {
    for (int i = 0; i < 4; ++i) quads[4 * j + i] = static_cast<uint8_t>(rows[i][j] + 128);
  }
#endif
  if (dst_stride == 4) {
    std::memcpy(dst, quads, static_cast<size_t>(4 * columns));
    return;
  }
  for (int j = 0; j < columns; ++j) std::memcpy(dst + j * dst_stride, quads + 4 * j, 4);
}

// dst[j * dst_stride + i] = rows[i][j] + 128 (as u8) for i < 16 and j < columns (at most 16; each row is
// read 16 bytes long): 16 channels of each position side by side.
inline void interleave_16x16_u8(const int8_t* const rows[16], uint8_t* dst, int64_t dst_stride, int columns = 16) {
#if defined(__SSE2__)
  // Four rows at a time into quads (quads[g][m]: positions 4m .. 4m + 3, channels 4g .. 4g + 3), then each
  // position's four quads side by side (a 4 x 4 transposition of 32-bit lanes).
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  __m128i quads[4][4];
  for (int g = 0; g < 4; ++g) {
    __m128i r[4];
    for (int i = 0; i < 4; ++i) {
      r[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[4 * g + i])), flip);
    }
    const __m128i low01 = _mm_unpacklo_epi8(r[0], r[1]), high01 = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i low23 = _mm_unpacklo_epi8(r[2], r[3]), high23 = _mm_unpackhi_epi8(r[2], r[3]);
    quads[g][0] = _mm_unpacklo_epi16(low01, low23), quads[g][1] = _mm_unpackhi_epi16(low01, low23);
    quads[g][2] = _mm_unpacklo_epi16(high01, high23), quads[g][3] = _mm_unpackhi_epi16(high01, high23);
  }
  for (int m = 0; m < 4; ++m) {
    const __m128i t0 = _mm_unpacklo_epi32(quads[0][m], quads[1][m]), t1 = _mm_unpackhi_epi32(quads[0][m], quads[1][m]);
    const __m128i t2 = _mm_unpacklo_epi32(quads[2][m], quads[3][m]), t3 = _mm_unpackhi_epi32(quads[2][m], quads[3][m]);
    const __m128i position[4] = {_mm_unpacklo_epi64(t0, t2), _mm_unpackhi_epi64(t0, t2), _mm_unpacklo_epi64(t1, t3),
                                 _mm_unpackhi_epi64(t1, t3)};
    for (int k = 0; k < 4 && 4 * m + k < columns; ++k) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (4 * m + k) * dst_stride), position[k]);
    }
  }
#else
  // (four quads a position, from interleave_4x16_u8's)
  uint8_t quads[4][64];
  for (int g = 0; g < 4; ++g) interleave_4x16_u8(rows + 4 * g, quads[g], 4);
  for (int j = 0; j < columns; ++j) {
    for (int g = 0; g < 4; ++g) std::memcpy(dst + j * dst_stride + 4 * g, quads[g] + 4 * j, 4);
  }
#endif
}

}  // namespace aclnn_cpu
