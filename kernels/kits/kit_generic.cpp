// The baseline kit (kit.h), built for the baseline instruction set: one ops type on 4-float vectors,
// NEON on aarch64, where every step is a fused multiply-add as in the x86 AVX kits (the same bits) and
// FLOAT16/BF16 operands widen in registers; SSE2 on x86-64, which has no FMA, so there the product is
// rounded first, and no FLOAT16 conversions. The GEMM's MicroTile: a 6 x 8 tile in 12 accumulators
// (6 x 4 for a last column sliver with at most 4 valid columns), results narrowed lane by lane through
// Eigen's conversions (once per result). The row kernels, a 16-lane vector of the rows' layout as four
// of the set's vectors: forward rows in blocks of 2 channels x 16 positions, weight rows in blocks of 2
// channels x 1 tap (one output channel: 1 x 16 and 1 x 2), input rows in chunks of 2 positions x 16
// channels. The Winograd transforms, and on aarch64 the AMX tiles' order on the FMAs. Also the one
// ordered table of kits (isa_kit).
#include <Eigen/Core>
#include <cstring>

#include "kernels/amx/amx_fma_tiles.h"
#include "kernels/common/keep_in_register.h"
#include "kernels/common/transpose_4x4.h"
#include "kernels/kits/kit.h"
#include "kernels/kits/microkernel_tile.h"

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
struct generic_ops {
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
#else
struct generic_ops {
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
#endif
using Tile = MicroTile<generic_ops, 6, 2>;

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

// The row kernels' 16-lane vector: four of the set's vectors, each step the set's on each (the same
// fused multiply-add on aarch64, product then sum on x86-64).
struct generic_row_ops {
  struct Vec {
    generic_ops::Vec q[4];
  };
  static constexpr int kLanes = 16;
  static constexpr bool kPrefetchEachRow = true;
  static Vec broadcast(float x) {
    const generic_ops::Vec q = generic_ops::broadcast(x);
    return {{q, q, q, q}};
  }
  static Vec zero() { return broadcast(0.0f); }
  static Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  using Mask = int64_t;  // the number of lanes
  static constexpr bool kCheapMasks = false;
  static constexpr bool kFaultFreeMasks = false;  // (every source staged)
  static Mask mask_first(int64_t n) { return n; }
  static Vec load_masked(const float* p, Mask n) {
    float first[kRowLanes] = {};
    std::memcpy(first, p, static_cast<size_t>(n) * sizeof(float));
    return load(first);
  }
  static void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static void in_register(Vec&) {}
  static void store_masked(float* p, Vec v, Mask n) { std::memcpy(p, &v, static_cast<size_t>(n) * sizeof(float)); }
  static Vec add(Vec a, Vec b) {
    for (int i = 0; i < 4; ++i) a.q[i] = generic_ops::add(a.q[i], b.q[i]);
    return a;
  }
  static Vec madd(Vec a, Vec b, Vec c) {
    for (int i = 0; i < 4; ++i) c.q[i] = generic_ops::madd(a.q[i], b.q[i], c.q[i]);
    return c;
  }
};

#include "kernels/kits/row_kernels_impl.h"
#include "kernels/kits/row_kernels_weight_input_impl.h"

void forward_rows_generic(const ForwardRows& job) {
  if (job.out_channels == 1) return forward_rows<generic_row_ops, 1, 1>(job);
  forward_rows<generic_row_ops, 2, 1>(job);
}
int64_t weight_block_generic(int64_t out_channels) { return out_channels == 1 ? 1 : 2; }
void weight_rows_generic(const WeightRows& job) {
  if (job.out_channels == 1) return weight_rows<generic_row_ops, 1, 2>(job);
  weight_rows<generic_row_ops, 2, 1>(job);
}

bool reads_in_place_generic(const ForwardRows&) { return generic_row_ops::kFaultFreeMasks; }
void input_rows_generic(const InputRows& job) { input_rows<generic_row_ops, 1, 2>(job); }

#include "kernels/kits/winograd_transforms_impl.h"

}  // namespace

#if defined(__aarch64__)
// The AMX tiles' order on this set's FMAs (kernels/amx/amx_fma_tiles.h): the kit's fma_pairs.
using FmaTiles = AmxFmaTiles<generic_ops, 4, 2>;
ACLNN_AMX_DEFINE_PRODUCTS(fma_neon, FmaTiles)
constexpr AmxProducts kFmaPairs = {amx_pair_rows_fma_neon, amx_pair_a_rows_fma_neon};
#else
constexpr AmxProducts kFmaPairs = {};  // (SSE2 has no FMA)
#endif

void interleave_6_portable(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows<6>(rows, stride, depth, out);
}
void interleave_8_portable(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows<8>(rows, stride, depth, out);
}

extern constexpr IsaKit kKitGeneric = {Isa::kGeneric,
                                       Tile::kernel(Isa::kGeneric, interleave_6_portable, interleave_8_portable),
                                       {Isa::kGeneric, forward_rows_generic, weight_rows_generic, weight_block_generic,
                                        input_rows_generic, 0, reads_in_place_generic},
                                       transforms_of<generic_ops>(),
                                       kFmaPairs,
                                       nullptr,
                                       &kDeformKernelsGeneric,
                                       &kQuantKernelsGeneric};

float sum_lanes(float* lanes) {
  for (int width = kRowLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

namespace {

// A kit, and what the CPU must have beyond the kit's set (null: nothing more; detected_isa() checks
// the sets).
struct KitEntry {
  const IsaKit* kit;
  bool (*cpu_check)();
};

}  // namespace

std::vector<const IsaKit*> runnable_kits(Isa isa) {
  // The kits built, widest first.
  static const KitEntry kKits[] = {
#ifdef ACLNN_HAVE_X86_KERNELS
      {&kKitAvx512Bf16, cpu_has_avx512_bf16},
      {&kKitAvx512, nullptr},
      {&kKitAvx2, nullptr},
#endif
      {&kKitGeneric, nullptr},
  };
  std::vector<const IsaKit*> kits;
  for (const KitEntry& entry : kKits) {
    if (entry.kit->isa <= isa && (entry.cpu_check == nullptr || entry.cpu_check())) kits.push_back(entry.kit);
  }
  return kits;  // (the generic kit last: never empty)
}

const IsaKit& isa_kit(Isa isa) {
  // (the table walked once per set: the checks ask cpuid)
  static const IsaKit* const kChosen[] = {runnable_kits(Isa::kGeneric).front(), runnable_kits(Isa::kAvx2).front(),
                                          runnable_kits(Isa::kAvx512).front()};
  return *kChosen[static_cast<int>(isa)];
}

CpuFeatures cpu_features() {
  CpuFeatures cpu = CpuFeatures::current();
  cpu.kit = &isa_kit(cpu.isa);
  cpu.conversions = cpu.kit->conversions;
  return cpu;
}

}  // namespace aclnn_cpu
