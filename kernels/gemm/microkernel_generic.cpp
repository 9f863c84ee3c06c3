// Portable micro-kernel: MicroTile (microkernel_tile.h) on 4-float vectors, a 6 x 8 tile in 12
// accumulators (6 x 4 for a last column sliver with at most 4 valid columns), built for the
// baseline instruction set: NEON on aarch64, where every step is a fused multiply-add as in the
// x86 AVX kernels (the same bits); SSE2 on x86-64, which has no FMA, so there the product is
// rounded first.
#include <cstring>

#include "kernels/gemm/microkernel.h"
#include "kernels/gemm/microkernel_tile.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace aclnn_cpu {
namespace {

#if defined(__aarch64__)
struct neon_ops {
  using Vec = float32x4_t;
  static constexpr int kLanes = 4;
  static Vec zero() { return vdupq_n_f32(0.0f); }
  static Vec broadcast(float x) { return vdupq_n_f32(x); }
  static Vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec madd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }  // c + a*b, one rounding
  static void prefetch_a(const float*) {}
};
using Tile = MicroTile<neon_ops, 6, 2>;
#else
struct sse2_ops {
  typedef float Vec __attribute__((vector_size(16)));
  static constexpr int kLanes = 4;
  static Vec zero() { return Vec{0.0f, 0.0f, 0.0f, 0.0f}; }
  static Vec broadcast(float x) { return Vec{x, x, x, x}; }
  static Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static Vec madd(Vec a, Vec b, Vec c) { return c + a * b; }
  static void prefetch_a(const float*) {}
};
using Tile = MicroTile<sse2_ops, 6, 2>;
#endif

}  // namespace

extern const MicroKernel kMicroKernelGeneric = Tile::float_kernel(Isa::kGeneric);

const MicroKernel& micro_kernel(Isa isa) {
#ifdef ACLNN_HAVE_X86_KERNELS
  if (isa == Isa::kAvx512) return kMicroKernelAvx512;
  if (isa == Isa::kAvx2) return kMicroKernelAvx2;
#endif
  (void)isa;
  return kMicroKernelGeneric;
}

}  // namespace aclnn_cpu
