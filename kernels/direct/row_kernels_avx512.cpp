// AVX-512 row kernels: a 16-lane vector is one zmm register. Forward rows in blocks of 8 channels x
// 32 positions (16 accumulators), or 1 x 64 for one output channel; weight rows in blocks of 8
// channels x 3 taps (24 accumulators), 4 x 3 for fewer channels, or 1 x 9 for one; input rows in
// chunks of 14 positions x 32 channels (28 accumulators).
// Compiled with -mavx512f -mfma; called only when the CPU has both.
#include <immintrin.h>

#include "kernels/common/keep_in_register.h"
#include "kernels/direct/row_kernels.h"

namespace aclnn_cpu {
namespace {

struct avx512_ops {
  using T = __m512;
  static constexpr int kLanes = 16;
  static constexpr bool kPrefetchEachRow = true;
  static T zero() { return _mm512_setzero_ps(); }
  static T splat(float x) { return _mm512_set1_ps(x); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  using Mask = __mmask16;
  static constexpr bool kCheapMasks = true;  // a masked load costs what a load does
  static Mask mask_first(int64_t n) { return static_cast<Mask>((1u << n) - 1); }
  static T load_masked(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static void in_register(T& v) { keep_in_register(v); }
  static void store_masked(float* p, T v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  // Lanes [lo, hi) (0 <= lo < hi <= 16), none, and a load of only the mask's lanes from an address that
  // may lie outside any object where no lane is read (a masked-out lane is never touched: no fault).
  static constexpr bool kFaultFreeMasks = true;
  static Mask mask_lanes(int64_t lo, int64_t hi) { return static_cast<Mask>(((1u << hi) - 1) & ~((1u << lo) - 1)); }
  static Mask no_lanes() { return 0; }
  static T load_lanes(uintptr_t at, Mask m) { return _mm512_maskz_loadu_ps(m, reinterpret_cast<const void*>(at)); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T madd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
};

#include "kernels/direct/row_kernels_impl.h"
#include "kernels/direct/row_kernels_weight_input_impl.h"

// One channel of 3 x 3 taps on a grid: each source vector loaded once for the rows it reaches (its
// source staged, or read in place).
bool band_job(const ForwardRows& job) {
  return job.out_channels == 1 && job.channels == 1 && job.grid_rows == 3 && job.taps == 9 && job.chain_taps == 3;
}
// (rows read in place: the 3 x 3 bands, rows of at most kMaxInPlaceVectors vectors)
bool reads_in_place_avx512(const ForwardRows& job) {
  return band_job(job) && job.width <= kMaxInPlaceVectors * kRowLanes;
}
void forward_rows_avx512(const ForwardRows& job) {
  if (band_job(job)) return forward_band_rows<avx512_ops, 4, 2, 3, 3>(job);
  if (job.out_channels == 1) return forward_rows<avx512_ops, 1, 4, 3>(job);
  forward_rows<avx512_ops, 8, 2>(job);
}
int64_t weight_block_avx512(int64_t out_channels) { return out_channels == 1 ? 1 : out_channels < 8 ? 4 : 8; }
void weight_rows_avx512(const WeightRows& job) {
  if (job.out_channels == 1 && job.grid_rows == 3 && job.taps == 9) return weight_band_rows<avx512_ops, 8, 3, 3>(job);
  if (job.out_channels == 1) return weight_rows<avx512_ops, 1, 9>(job);
  if (job.out_channels < 8) return weight_rows<avx512_ops, 4, 3>(job);
  weight_rows<avx512_ops, 8, 3>(job);
}

// (two rows of 7 positions, a 7 x 7 plane's, in the registers of a chunk of 14)
constexpr int64_t kPairedRowWidth = 7;
void input_rows_avx512(const InputRows& job) { input_rows<avx512_ops, 2, 14, kPairedRowWidth>(job); }

}  // namespace

extern const RowKernels kRowKernelsAvx512 = {Isa::kAvx512,         forward_rows_avx512, weight_rows_avx512,
                                             weight_block_avx512,  input_rows_avx512,   kPairedRowWidth,
                                             reads_in_place_avx512};

}  // namespace aclnn_cpu
