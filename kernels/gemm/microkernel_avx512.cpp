// AVX-512F micro-kernel: 8 x 32 tile, 16 accumulators (zmm), B read as two vectors per p and
// each A entry broadcast. Compiled with -mavx512f -mfma; called only when the CPU has AVX-512F.
#include <immintrin.h>

#include "kernels/gemm/microkernel.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = 8, kNr = 32;

void run_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
  __m512 acc[kMr][2];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = load_c ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
    acc[i][1] = load_c ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    _mm512_storeu_ps(c + i * ldc, acc[i][0]);
    _mm512_storeu_ps(c + i * ldc + 16, acc[i][1]);
  }
}

}  // namespace

extern const MicroKernel kMicroKernelAvx512 = {Isa::kAvx512, kMr, kNr, run_avx512};

}  // namespace aclnn_cpu
