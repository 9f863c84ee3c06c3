// Packing help for the AVX translation units only (kit_avx2.cpp, kit_avx512.cpp,
// compiled with -mavx2 / -mavx512f): 8 x 8 transposes in ymm registers. Everything here has
// internal linkage, so no copy compiled for one instruction set can stand in for another's.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace aclnn_cpu {
namespace {

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 8.
inline void transpose_8x8_avx(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);  // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));  // a0 b0 c0 d0 | a4 b4 c4 d4
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(dst + j * dst_stride, _mm256_permute2f128_ps(r[j], r[j + 4], 0x20));
    _mm256_storeu_ps(dst + (j + 4) * dst_stride, _mm256_permute2f128_ps(r[j], r[j + 4], 0x31));
  }
}

// out[p * W + w] = rows[w * stride + p] for w < W (a multiple of 8), p < depth: W rows read side
// by side, as the packed slivers of microkernel.h want them.
template <int W>
void interleave_rows_avx(const float* rows, int64_t stride, int64_t depth, float* out) {
  static_assert(W % 8 == 0, "whole 8 x 8 blocks");
  int64_t p = 0;
  for (; p + 8 <= depth; p += 8) {
    for (int w = 0; w < W; w += 8) transpose_8x8_avx(rows + w * stride + p, stride, out + p * W + w, W);
  }
  for (; p < depth; ++p) {
    for (int w = 0; w < W; ++w) out[p * W + w] = rows[w * stride + p];
  }
}

}  // namespace
}  // namespace aclnn_cpu
