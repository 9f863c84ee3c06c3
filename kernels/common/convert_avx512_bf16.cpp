// Float -> BF16 narrowing with AVX512_BF16's VCVTNEPS2BF16: one instruction for 16 values where
// floats_to_bf16_avx512 takes eleven, the same bits. The instruction rounds to nearest even as
// Eigen::bfloat16 does, but flushes denormal inputs to zero and keeps a NaN's payload, so a block of
// 16 holding a denormal or a NaN (VFPCLASSPS, AVX512DQ) goes through floats_to_bf16_avx512 instead.
// (A normal float never narrows to a BF16 denormal: both have float's exponent range.) Compiled with
// -mavx512f -mavx512dq -mavx512bf16; called only through the AVX512_BF16 kit's conversions (the AVX-512 kit on CPUs
// with all three).
#include <immintrin.h>

#include "kernels/common/convert.h"

namespace aclnn_cpu {

void floats_to_bf16_avx512bf16(const float* in, uint16_t* out, int64_t n) {
  // VFPCLASSPS categories: quiet NaN (0x01), denormal (0x20), signalling NaN (0x80).
  constexpr int kNanOrDenormal = 0x01 | 0x20 | 0x80;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 values = _mm512_loadu_ps(in + i);
    if (_mm512_fpclass_ps_mask(values, kNanOrDenormal) != 0) {
      floats_to_bf16_avx512(in + i, out + i, 16);
      continue;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(values)));
  }
  if (i < n) floats_to_bf16_avx512(in + i, out + i, n - i);  // the last 1-15 (masked there)
}

}  // namespace aclnn_cpu
