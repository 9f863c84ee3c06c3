// Portable micro-kernel: MicroTile (microkernel_tile.h) on 4-float vectors, a 6 x 8 tile in 12
// accumulators (6 x 4 for a last column sliver with at most 4 valid columns), built for the
// baseline instruction set: NEON on aarch64, where every step is a fused multiply-add as in the
// x86 AVX kernels (the same bits) and FLOAT16/BF16 operands widen in registers; SSE2 on x86-64,
// which has no FMA, so there the product is rounded first, and no FLOAT16 conversions. Results
// narrow lane by lane through Eigen's conversions (once per result).
#include <Eigen/Core>
#include <cstring>

#include "kernels/amx/amx_fma_tiles.h"
#include "kernels/common/transpose_4x4.h"
#include "kernels/matmul/microkernel.h"
#include "kernels/matmul/microkernel_tile.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace aclnn_cpu {
namespace {

// The BF16 value of `bits` (exact).
float bf16_value(uint16_t bits) {
  const uint32_t wide = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// out[l] = values[l] rounded once to nearest even, FLOAT16 (or, `bf16`, BF16), by Eigen's conversions,
// whose bits the AVX kernels' narrowing gives too (NaNs included).
template <int kLanes>
void narrow_lanes(const float* values, uint16_t* out, bool bf16) {
  for (int l = 0; l < kLanes; ++l) {
    out[l] = bf16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(values[l]))
                  : Eigen::numext::bit_cast<uint16_t>(Eigen::half(values[l]));
  }
}

#if defined(__aarch64__)
struct neon_ops {
  using Vec = float32x4_t;
  static constexpr int kLanes = 4;
  static constexpr bool kVectorConversions = true;
  static constexpr bool kBf16PairSplit = false;
  static Vec zero() { return vdupq_n_f32(0.0f); }
  static Vec broadcast(float x) { return vdupq_n_f32(x); }
  static Vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec madd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }  // c + a*b, one rounding
  static Vec add(Vec a, Vec b) { return vaddq_f32(a, b); }
  static void prefetch_a(const float*) {}
  template <bool kBf16>
  static Vec widen(const uint16_t* p) {
    const uint16x4_t bits = vld1_u16(p);
    return kBf16 ? vreinterpretq_f32_u32(vshll_n_u16(bits, 16)) : vcvt_f32_f16(vreinterpret_f16_u16(bits));
  }
  static Vec broadcast_bf16(const uint16_t* p) { return vdupq_n_f32(bf16_value(*p)); }
  // 4 BF16 pairs (32-bit words): their low halves (even entries) and high halves (odd ones) widened,
  // a denormal half as zero of its sign (AmxFmaTiles: as the tiles take BF16 inputs).
  static void widen_pairs(const uint32_t* p, Vec& even, Vec& odd) {
    const uint32x4_t words = vld1q_u32(p);
    even = flush_denormal(vshlq_n_u32(words, 16));
    odd = flush_denormal(vandq_u32(words, vdupq_n_u32(0xFFFF0000u)));
  }
  static Vec flush_denormal(uint32x4_t bits) {  // bits & (sign | all where the exponent is not zero)
    const uint32x4_t normal = vtstq_u32(bits, vdupq_n_u32(0x7F800000u));
    return vreinterpretq_f32_u32(vandq_u32(bits, vorrq_u32(normal, vdupq_n_u32(0x80000000u))));
  }
  static void store16(uint16_t* p, Vec v, bool bf16) {  // (once per result: lane by lane)
    float lanes[kLanes];
    vst1q_f32(lanes, v);
    narrow_lanes<kLanes>(lanes, p, bf16);
  }
};
using Tile = MicroTile<neon_ops, 6, 2>;
#else
struct sse2_ops {
  typedef float Vec __attribute__((vector_size(16)));
  static constexpr int kLanes = 4;
  // (SSE2 has no FLOAT16 conversions: plans widen whole rows once rather than in every tile)
  static constexpr bool kVectorConversions = false;
  static constexpr bool kBf16PairSplit = false;
  static Vec zero() { return Vec{0.0f, 0.0f, 0.0f, 0.0f}; }
  static Vec broadcast(float x) { return Vec{x, x, x, x}; }
  static Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static Vec madd(Vec a, Vec b, Vec c) { return c + a * b; }
  static Vec add(Vec a, Vec b) { return a + b; }
  static void prefetch_a(const float*) {}
  template <bool kBf16>
  static Vec widen(const uint16_t* p) {
    Vec v;
    for (int l = 0; l < kLanes; ++l) {
      v[l] = kBf16 ? bf16_value(p[l]) : static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(p[l]));
    }
    return v;
  }
  static Vec broadcast_bf16(const uint16_t* p) { return broadcast(bf16_value(*p)); }
  static void store16(uint16_t* p, Vec v, bool bf16) {
    float lanes[kLanes];
    store(lanes, v);
    narrow_lanes<kLanes>(lanes, p, bf16);
  }
};
using Tile = MicroTile<sse2_ops, 6, 2>;
#endif

// out[p * W + w] = rows[w * stride + p] for w < W, p < depth: W rows read side by side, in 4 x 4
// blocks (rows past the last multiple of 4 one by one).
template <int W>
void interleave_rows(const float* rows, int64_t stride, int64_t depth, float* out) {
  constexpr int kBlocked = W / 4 * 4;
  int64_t p = 0;
  for (; p + 4 <= depth; p += 4) {
    for (int w = 0; w < kBlocked; w += 4) transpose_4x4(rows + w * stride + p, stride, out + p * W + w, W);
    for (int w = kBlocked; w < W; ++w) {
      for (int q = 0; q < 4; ++q) out[(p + q) * W + w] = rows[w * stride + p + q];
    }
  }
  for (; p < depth; ++p) {
    for (int w = 0; w < W; ++w) out[p * W + w] = rows[w * stride + p];
  }
}

}  // namespace

#if defined(__aarch64__)
// The AMX tiles' order on this set's FMAs (kernels/amx/amx_fma_tiles.h), for amx_pair_rows and
// amx_pair_a_rows (amx.cpp).
using FmaTiles = AmxFmaTiles<neon_ops, 4, 2>;
ACLNN_AMX_DEFINE_PRODUCTS(fma_neon, FmaTiles)
#endif

void interleave_6_portable(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows<6>(rows, stride, depth, out);
}
void interleave_8_portable(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows<8>(rows, stride, depth, out);
}

extern const MicroKernel kMicroKernelGeneric =
    Tile::kernel(Isa::kGeneric, interleave_6_portable, interleave_8_portable);

const MicroKernel& micro_kernel(Isa isa) {
#ifdef ACLNN_HAVE_X86_KERNELS
  if (isa == Isa::kAvx512) return kMicroKernelAvx512;
  if (isa == Isa::kAvx2) return kMicroKernelAvx2;
#endif
  (void)isa;
  return kMicroKernelGeneric;
}

}  // namespace aclnn_cpu
