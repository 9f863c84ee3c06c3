// Short runs of floats copied, widened from BF16 or zeroed inline: the runs of the staging and im2col loops are often
// a row of 28 or 56 floats, where a call to memmove or memset per run costs more than the work.
// (Fixed-size memcpy compiles to one vector move; a plain loop would be turned back into a call.)
#pragma once

#include <cstdint>
#include <cstring>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace aclnn_cpu {

// to[i] = from[i] for i < n.
inline void copy_run(const float* from, int64_t n, float* to) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(to + i, from + i, 8 * sizeof(float));
  for (; i + 2 <= n; i += 2) std::memcpy(to + i, from + i, 2 * sizeof(float));
  if (i < n) to[i] = from[i];
}

// to[i] = from[2i] for i < n (a stride-2 phase), reading nothing past from[2(n-1)].
inline void copy_run_even(const float* from, int64_t n, float* to) {
  int64_t i = 0;
#ifdef __SSE2__
  for (; i + 4 < n; i += 4) {  // (reads from[2i .. 2i+7]: never past from[2(n-1)])
    _mm_storeu_ps(to + i,
                  _mm_shuffle_ps(_mm_loadu_ps(from + 2 * i), _mm_loadu_ps(from + 2 * i + 4), _MM_SHUFFLE(2, 0, 2, 0)));
  }
#endif
  for (; i < n; ++i) to[i] = from[2 * i];
}

// to[i] = the BF16 value from[i] for i < n (exact: its bits are the float's top half).
inline void widen_bf16_run(const uint16_t* from, int64_t n, float* to) {
  int64_t i = 0;
#ifdef __SSE2__
  const __m128i zero = _mm_setzero_si128();
  for (; i + 8 <= n; i += 8) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), _mm_unpacklo_epi16(zero, bits));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 4), _mm_unpackhi_epi16(zero, bits));
  }
#endif
  for (; i < n; ++i) {
    const uint32_t bits = uint32_t{from[i]} << 16;
    std::memcpy(to + i, &bits, sizeof(bits));
  }
}

// to[i] = 0 for i < n.
inline void zero_run(float* to, int64_t n) {
  static constexpr float kZeros[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(to + i, kZeros, sizeof(kZeros));
  for (; i + 2 <= n; i += 2) std::memcpy(to + i, kZeros, 2 * sizeof(float));
  if (i < n) to[i] = 0.0f;
}

}  // namespace aclnn_cpu
