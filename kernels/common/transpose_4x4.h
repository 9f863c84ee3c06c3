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

// dst[j * dst_stride + i] = rows[i][j] for i, j < 4 (four rows anywhere in memory), plus add[j] in dst
// row j where `add` is given (one rounding each, as a scalar add's).
inline void transpose_4x4_rows(const float* const rows[4], float* dst, int64_t dst_stride, const float* add = nullptr) {
#if defined(__SSE2__)
  __m128 r0 = _mm_loadu_ps(rows[0]), r1 = _mm_loadu_ps(rows[1]);
  __m128 r2 = _mm_loadu_ps(rows[2]), r3 = _mm_loadu_ps(rows[3]);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  if (add != nullptr) {
    r0 = _mm_add_ps(r0, _mm_set1_ps(add[0])), r1 = _mm_add_ps(r1, _mm_set1_ps(add[1]));
    r2 = _mm_add_ps(r2, _mm_set1_ps(add[2])), r3 = _mm_add_ps(r3, _mm_set1_ps(add[3]));
  }
  _mm_storeu_ps(dst, r0), _mm_storeu_ps(dst + dst_stride, r1);
  _mm_storeu_ps(dst + 2 * dst_stride, r2), _mm_storeu_ps(dst + 3 * dst_stride, r3);
#elif defined(__aarch64__)
  const float32x4x4_t in = {vld1q_f32(rows[0]), vld1q_f32(rows[1]), vld1q_f32(rows[2]), vld1q_f32(rows[3])};
  float buffer[16];
  vst4q_f32(buffer, in);  // interleaved: buffer[4j + i] = rows[i][j]
  for (int j = 0; j < 4; ++j) {
    const float32x4_t row = vld1q_f32(buffer + 4 * j);
    vst1q_f32(dst + j * dst_stride, add != nullptr ? vaddq_f32(row, vdupq_n_f32(add[j])) : row);
  }
#else
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) dst[j * dst_stride + i] = add != nullptr ? rows[i][j] + add[j] : rows[i][j];
  }
#endif
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 4, plus add[j] in dst row j where given.
inline void transpose_4x4(const float* src, int64_t src_stride, float* dst, int64_t dst_stride,
                          const float* add = nullptr) {
  const float* const rows[4] = {src, src + src_stride, src + 2 * src_stride, src + 3 * src_stride};
  transpose_4x4_rows(rows, dst, dst_stride, add);
}

// Two 4 x 4 blocks transposed into interleaved columns: dst[j * dst_stride + 2i] = a[i * src_stride + j]
// and dst[j * dst_stride + 2i + 1] = b[i * src_stride + j] for i, j < 4 (a stride-2 row's two phases),
// plus add[j] in dst row j where `add` is given.
inline void transpose_4x4_pairs(const float* a, const float* b, int64_t src_stride, float* dst, int64_t dst_stride,
                                const float* add = nullptr) {
#if defined(__SSE2__)
  __m128 a0 = _mm_loadu_ps(a), a1 = _mm_loadu_ps(a + src_stride);
  __m128 a2 = _mm_loadu_ps(a + 2 * src_stride), a3 = _mm_loadu_ps(a + 3 * src_stride);
  __m128 b0 = _mm_loadu_ps(b), b1 = _mm_loadu_ps(b + src_stride);
  __m128 b2 = _mm_loadu_ps(b + 2 * src_stride), b3 = _mm_loadu_ps(b + 3 * src_stride);
  _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
  _MM_TRANSPOSE4_PS(b0, b1, b2, b3);
  __m128 as[4] = {a0, a1, a2, a3}, bs[4] = {b0, b1, b2, b3};
  for (int j = 0; j < 4 && add != nullptr; ++j) {
    as[j] = _mm_add_ps(as[j], _mm_set1_ps(add[j]));
    bs[j] = _mm_add_ps(bs[j], _mm_set1_ps(add[j]));
  }
  for (int j = 0; j < 4; ++j) {
    _mm_storeu_ps(dst + j * dst_stride, _mm_unpacklo_ps(as[j], bs[j]));
    _mm_storeu_ps(dst + j * dst_stride + 4, _mm_unpackhi_ps(as[j], bs[j]));
  }
#else
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      dst[j * dst_stride + 2 * i] = add != nullptr ? a[i * src_stride + j] + add[j] : a[i * src_stride + j];
      dst[j * dst_stride + 2 * i + 1] = add != nullptr ? b[i * src_stride + j] + add[j] : b[i * src_stride + j];
    }
  }
#endif
}

}  // namespace aclnn_cpu
