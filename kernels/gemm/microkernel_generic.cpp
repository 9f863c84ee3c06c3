// Portable micro-kernel: 6 x 8 tile in 4-float vectors (SSE2 on x86-64, NEON on aarch64), built
// for the baseline instruction set. On aarch64 every step is a fused multiply-add (NEON has it),
// as in the x86 AVX kernels; baseline x86-64 has none, so there the product is rounded first.
#include <cstring>

#include "kernels/gemm/microkernel.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace aclnn_cpu {
namespace {

constexpr int kMr = 6, kNr = 8;

#if defined(__aarch64__)
using Vec = float32x4_t;
Vec splat(float x) { return vdupq_n_f32(x); }
Vec madd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }  // c + a*b, one rounding
#else
typedef float Vec __attribute__((vector_size(16)));
Vec splat(float x) { return Vec{x, x, x, x}; }
Vec madd(Vec a, Vec b, Vec c) { return c + a * b; }
#endif
Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

void run_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
  Vec acc[kMr][2];
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = load_c ? load(c + i * ldc) : splat(0.0f);
    acc[i][1] = load_c ? load(c + i * ldc + 4) : splat(0.0f);
  }
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const Vec b0 = load(b), b1 = load(b + 4);
    for (int i = 0; i < kMr; ++i) {
      const Vec ai = splat(a[i]);
      acc[i][0] = madd(ai, b0, acc[i][0]);
      acc[i][1] = madd(ai, b1, acc[i][1]);
    }
  }
  for (int i = 0; i < kMr; ++i) {
    store(c + i * ldc, acc[i][0]);
    store(c + i * ldc + 4, acc[i][1]);
  }
}

}  // namespace

extern const MicroKernel kMicroKernelGeneric = {Isa::kGeneric, kMr, kNr, run_generic};

const MicroKernel& micro_kernel(Isa isa) {
#ifdef ACLNN_HAVE_X86_KERNELS
  if (isa == Isa::kAvx512) return kMicroKernelAvx512;
  if (isa == Isa::kAvx2) return kMicroKernelAvx2;
#endif
  (void)isa;
  return kMicroKernelGeneric;
}

}  // namespace aclnn_cpu
