// F16C conversions (kernels/common/convert.h). Compiled with -mavx2 -mf16c; called only when
// f16c_conversions() says the CPU has both. Only intrinsics here (no shared inline code).
#include <immintrin.h>

#include "kernels/common/convert.h"

namespace aclnn_cpu {

void halves_to_floats_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  if (i < n) {  // the last 1-7 through a zero-padded block of 8
    alignas(16) uint16_t last[8] = {};
    alignas(32) float wide[8];
    for (int64_t j = 0; j < n - i; ++j) last[j] = in[i + j];
    _mm256_store_ps(wide, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(last))));
    for (int64_t j = 0; j < n - i; ++j) out[i + j] = wide[j];
  }
}

void floats_to_halves_avx2(const float* in, uint16_t* out, int64_t n) {
  constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), kNearestEven));
  }
  if (i < n) {  // the last 1-7 through a zero-padded block of 8
    alignas(32) float last[8] = {};
    alignas(16) uint16_t narrow[8];
    for (int64_t j = 0; j < n - i; ++j) last[j] = in[i + j];
    _mm_store_si128(reinterpret_cast<__m128i*>(narrow), _mm256_cvtps_ph(_mm256_load_ps(last), kNearestEven));
    for (int64_t j = 0; j < n - i; ++j) out[i + j] = narrow[j];
  }
}

}  // namespace aclnn_cpu
