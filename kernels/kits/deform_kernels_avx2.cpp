// The deformable sampling loops on AVX2 (kernels/kits/deform_kernels.h), in deform_kernels_generic.cpp's
// order: the columns 4 points at a time, each point's neighbours loaded as two float pairs (upper row,
// lower row) and transposed into one vector per neighbour, products and sums in the written order; the
// neighbour sums a point at a time, its two pairs widened into one vector of doubles. A pair sits at any
// float address, so it is loaded with MOVQ's unaligned form, never through a double pointer. Compiled with -mavx2 only
// (no FMA to fuse) and without contraction; the AVX2 and AVX-512 kits take it (AVX-512 CPUs have AVX2).
#include <immintrin.h>

#include "kernels/kits/deform_kernels.h"

namespace aclnn_cpu {
namespace {

// The floats at[0], at[1] in the low half, zeros above (8-byte load with no alignment demand).
inline __m128 load_pair(const float* at) {
  return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at)));
}

// Points j .. j+3's neighbour pairs (x0, x1) at `row` and (x2, x3) a pitch below, as one vector per neighbour.
inline void load_neighbours(const float* plane, int64_t pitch, const int32_t* base, __m128 x[4]) {
  __m128 upper[4], lower[4];
  for (int q = 0; q < 4; ++q) {
    const float* at = plane + base[q];
    upper[q] = load_pair(at);
    lower[q] = load_pair(at + pitch);
  }
  const __m128 top01 = _mm_movelh_ps(upper[0], upper[1]), top23 = _mm_movelh_ps(upper[2], upper[3]);
  const __m128 bottom01 = _mm_movelh_ps(lower[0], lower[1]), bottom23 = _mm_movelh_ps(lower[2], lower[3]);
  x[0] = _mm_shuffle_ps(top01, top23, _MM_SHUFFLE(2, 0, 2, 0));
  x[1] = _mm_shuffle_ps(top01, top23, _MM_SHUFFLE(3, 1, 3, 1));
  x[2] = _mm_shuffle_ps(bottom01, bottom23, _MM_SHUFFLE(2, 0, 2, 0));
  x[3] = _mm_shuffle_ps(bottom01, bottom23, _MM_SHUFFLE(3, 1, 3, 1));
}

void sample_avx2(const float* plane, int64_t pitch, const int32_t* base, const float* weights, int64_t stride,
                 int64_t count, float* out) {
  const float *w0 = weights, *w1 = w0 + stride, *w2 = w1 + stride, *w3 = w2 + stride;
  int64_t j = 0;
  for (; j + 4 <= count; j += 4) {
    __m128 x[4];
    load_neighbours(plane, pitch, base + j, x);
    const __m128 pair = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(w0 + j), x[0]), _mm_mul_ps(_mm_loadu_ps(w1 + j), x[1]));
    const __m128 three = _mm_add_ps(pair, _mm_mul_ps(_mm_loadu_ps(w2 + j), x[2]));
    _mm_storeu_ps(out + j, _mm_add_ps(three, _mm_mul_ps(_mm_loadu_ps(w3 + j), x[3])));
  }
  for (; j < count; ++j) {
    const float *upper = plane + base[j], *lower = upper + pitch;
    out[j] = ((w0[j] * upper[0] + w1[j] * upper[1]) + w2[j] * lower[0]) + w3[j] * lower[1];
  }
}

void neighbour_sums_avx2(const float* plane, int64_t pitch, const int32_t* base, const float* gradient, int64_t count,
                         double* sums) {
  for (int64_t j = 0; j < count; ++j) {
    const float* upper = plane + base[j];
    const __m128 top = load_pair(upper);
    const __m128 bottom = load_pair(upper + pitch);
    const __m256d values = _mm256_cvtps_pd(_mm_movelh_ps(top, bottom));  // x0 x1 x2 x3
    const __m256d carried = _mm256_set1_pd(static_cast<double>(gradient[j]));
    double* s = sums + 4 * j;
    _mm256_storeu_pd(s, _mm256_add_pd(_mm256_loadu_pd(s), _mm256_mul_pd(carried, values)));
  }
}

}  // namespace

extern const DeformKernels kDeformKernelsAvx2 = {sample_avx2, neighbour_sums_avx2};

}  // namespace aclnn_cpu
