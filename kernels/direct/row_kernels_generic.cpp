// Portable row kernels, built for the baseline instruction set: a 16-lane vector is four 4-float
// vectors (SSE2 on x86-64, NEON on aarch64). On aarch64 every step is a fused multiply-add, as in
// the x86 AVX kernels; baseline x86-64 has none, so there the product is rounded first. Forward
// rows in blocks of 2 channels x 16 positions, weight rows in blocks of 2 channels x 1 tap (one
// output channel: 1 x 16 and 1 x 2), input rows in chunks of 2 positions x 16 channels.
#include <cstring>

#include "kernels/common/keep_in_register.h"
#include "kernels/direct/row_kernels.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace aclnn_cpu {
namespace {

#if defined(__aarch64__)
using Quad = float32x4_t;
Quad quad_splat(float x) { return vdupq_n_f32(x); }
Quad quad_madd(Quad a, Quad b, Quad c) { return vfmaq_f32(c, a, b); }  // c + a*b, one rounding
#else
typedef float Quad __attribute__((vector_size(16)));
Quad quad_splat(float x) { return Quad{x, x, x, x}; }
Quad quad_madd(Quad a, Quad b, Quad c) { return c + a * b; }
#endif

struct generic_ops {
  struct T {
    Quad q[4];
  };
  static constexpr int kLanes = 16;
  static constexpr bool kPrefetchEachRow = true;
  static T splat(float x) { return {{quad_splat(x), quad_splat(x), quad_splat(x), quad_splat(x)}}; }
  static T zero() { return splat(0.0f); }
  static T load(const float* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  using Mask = int64_t;  // the number of lanes
  static constexpr bool kCheapMasks = false;
  static constexpr bool kFaultFreeMasks = false;  // (every source staged)
  static Mask mask_first(int64_t n) { return n; }
  static T load_masked(const float* p, Mask n) {
    float first[kRowLanes] = {};
    std::memcpy(first, p, static_cast<size_t>(n) * sizeof(float));
    return load(first);
  }
  static void store(float* p, T v) { std::memcpy(p, &v, sizeof v); }
  static void in_register(T&) {}
  static void store_masked(float* p, T v, Mask n) { std::memcpy(p, &v, static_cast<size_t>(n) * sizeof(float)); }
  static T add(T a, T b) {
    for (int i = 0; i < 4; ++i) a.q[i] += b.q[i];
    return a;
  }
  static T madd(T a, T b, T c) {
    for (int i = 0; i < 4; ++i) c.q[i] = quad_madd(a.q[i], b.q[i], c.q[i]);
    return c;
  }
};

#include "kernels/direct/row_kernels_impl.h"
#include "kernels/direct/row_kernels_weight_input_impl.h"

void forward_rows_generic(const ForwardRows& job) {
  if (job.out_channels == 1) return forward_rows<generic_ops, 1, 1>(job);
  forward_rows<generic_ops, 2, 1>(job);
}
int64_t weight_block_generic(int64_t out_channels) { return out_channels == 1 ? 1 : 2; }
void weight_rows_generic(const WeightRows& job) {
  if (job.out_channels == 1) return weight_rows<generic_ops, 1, 2>(job);
  weight_rows<generic_ops, 2, 1>(job);
}

bool reads_in_place_generic(const ForwardRows&) { return generic_ops::kFaultFreeMasks; }
void input_rows_generic(const InputRows& job) { input_rows<generic_ops, 1, 2>(job); }

}  // namespace

extern const RowKernels kRowKernelsGeneric = {Isa::kGeneric,         forward_rows_generic, weight_rows_generic,
                                              weight_block_generic,  input_rows_generic,   0,
                                              reads_in_place_generic};

float sum_lanes(float* lanes) {
  for (int width = kRowLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

const RowKernels& row_kernels(Isa isa) {
#ifdef ACLNN_HAVE_X86_KERNELS
  if (isa == Isa::kAvx512) return kRowKernelsAvx512;
  if (isa == Isa::kAvx2) return kRowKernelsAvx2;
#endif
  (void)isa;
  return kRowKernelsGeneric;
}

}  // namespace aclnn_cpu
