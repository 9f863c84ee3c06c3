// AVX2 + FMA row kernels: a 16-lane vector is two ymm registers. Forward rows in blocks of 4
// channels x 16 positions (8 accumulator registers), or 1 x 32 for one output channel; weight rows
// in blocks of 2 channels x 2 taps (8), or 1 x 4 for one; input rows in chunks of 6 positions x 16
// channels (12). Compiled with -mavx2 -mfma; called only
// when the CPU has both.
#include <immintrin.h>

#include "kernels/direct/row_kernels.h"

namespace aclnn_cpu {
namespace {

struct avx2_ops {
  struct T {
    __m256 lo, hi;
  };
  static T zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static T splat(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
  static T load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  struct Mask {
    __m256i lo, hi;
  };
  static constexpr bool kCheapMasks = false;
  static Mask mask_first(int64_t n) {  // lane i is loaded where i < n
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return {_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane),
            _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n) - 8), lane)};
  }
  static T load_masked(const float* p, Mask m) {
    return {_mm256_maskload_ps(p, m.lo), _mm256_maskload_ps(p + 8, m.hi)};
  }
  static void store(float* p, T v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static void in_register(T& v) { asm("" : "+x"(v.lo), "+x"(v.hi)); }
  static void store_masked(float* p, T v, Mask m) {
    _mm256_maskstore_ps(p, m.lo, v.lo);
    _mm256_maskstore_ps(p + 8, m.hi, v.hi);
  }
  static T add(T a, T b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static T madd(T a, T b, T c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
};

#include "kernels/direct/row_kernels_impl.h"

void forward_rows_avx2(const ForwardRows& job) {
  if (job.out_channels == 1) return forward_rows<avx2_ops, 1, 2, 2>(job);
  forward_rows<avx2_ops, 4, 1>(job);
}
int64_t weight_block_avx2(int64_t out_channels) { return out_channels == 1 ? 1 : 2; }
void weight_rows_avx2(const WeightRows& job) {
  if (job.out_channels == 1) return weight_rows<avx2_ops, 1, 4>(job);
  weight_rows<avx2_ops, 2, 2>(job);
}

void input_rows_avx2(const InputRows& job) { input_rows<avx2_ops, 1, 6>(job); }

}  // namespace

extern const RowKernels kRowKernelsAvx2 = {Isa::kAvx2, forward_rows_avx2, weight_rows_avx2, weight_block_avx2,
                                           input_rows_avx2};

}  // namespace aclnn_cpu
