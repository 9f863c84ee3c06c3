// A 4 x 4 block of floats transposed in baseline vector instructions (SSE2 on x86-64, NEON on
// aarch64, scalar elsewhere): the portable packers' building block.
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace aclnn_cpu {

// dst[j * dst_stride + i] = rows[i][j] for i, j < 4 (four rows anywhere in memory).
inline void transpose_4x4_rows(const float* const rows[4], float* dst, int64_t dst_stride) {
#if defined(__SSE2__)
  __m128 r0 = _mm_loadu_ps(rows[0]), r1 = _mm_loadu_ps(rows[1]);
  __m128 r2 = _mm_loadu_ps(rows[2]), r3 = _mm_loadu_ps(rows[3]);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(dst, r0), _mm_storeu_ps(dst + dst_stride, r1);
  _mm_storeu_ps(dst + 2 * dst_stride, r2), _mm_storeu_ps(dst + 3 * dst_stride, r3);
#elif defined(__aarch64__)
  const float32x4x4_t in = {vld1q_f32(rows[0]), vld1q_f32(rows[1]), vld1q_f32(rows[2]), vld1q_f32(rows[3])};
  float buffer[16];
  vst4q_f32(buffer, in);  // interleaved: buffer[4j + i] = rows[i][j]
  for (int j = 0; j < 4; ++j) vst1q_f32(dst + j * dst_stride, vld1q_f32(buffer + 4 * j));
#else
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) dst[j * dst_stride + i] = rows[i][j];
  }
#endif
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 4.
inline void transpose_4x4(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  const float* const rows[4] = {src, src + src_stride, src + 2 * src_stride, src + 3 * src_stride};
  transpose_4x4_rows(rows, dst, dst_stride);
}

}  // namespace aclnn_cpu
