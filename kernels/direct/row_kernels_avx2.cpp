// AVX2 + FMA row kernels: row_kernels_impl.h on ymm vectors, a 16-lane vector of the rows' layout
// taken as two parts of 8. Forward rows in blocks of 4 channels x 8 positions x 3 rows (12
// accumulators), or 1 x 32 x 3 for one output channel; weight rows in blocks of 4 channels x 3 taps
// (12), 2 x 4 below 4 channels, 1 x 9 for one; input rows in chunks of 6 positions x 16 channels (12).
// Twelve of the 16 registers hold accumulators: with 8, the FMA units wait on the chains' latency.
// Compiled with -mavx2 -mfma; called only when the CPU has both.
#include <immintrin.h>

#include "kernels/common/keep_in_register.h"
#include "kernels/direct/row_kernels.h"

namespace aclnn_cpu {
namespace {

struct avx2_ops {
  using T = __m256;
  static constexpr int kLanes = 8;
  // The prefetch steps once per pass: in the rows' loop its counters would take general registers the
  // loop needs.
  static constexpr bool kPrefetchEachRow = false;
  static T zero() { return _mm256_setzero_ps(); }
  static T splat(float x) { return _mm256_set1_ps(x); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  // A masked load is a load and an AND (vmaskmovps is microcoded on AMD's cores): the lanes past the
  // first n are read, and cleared before any product (an infinity there makes no NaN).
  static constexpr bool kCheapMasks = false;
  static constexpr bool kFaultFreeMasks = false;  // (every source staged)
  struct Mask {
    __m256 keep;
    int64_t count;
  };
  static Mask mask_first(int64_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return {_mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane)), n};
  }
  static T load_masked(const float* p, Mask m) { return _mm256_and_ps(_mm256_loadu_ps(p), m.keep); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  // The first lanes stored one by one, nothing past them (vmaskmovps stores are microcoded on AMD's cores).
  static void store_masked(float* p, T v, Mask m) {
    alignas(32) float lanes[kLanes];
    _mm256_store_ps(lanes, v);
    for (int64_t l = 0; l < m.count; ++l) p[l] = lanes[l];
  }
  static void in_register(T& v) { keep_in_register(v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T madd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
};

#include "kernels/direct/row_kernels_impl.h"
#include "kernels/direct/row_kernels_weight_input_impl.h"

void forward_rows_avx2(const ForwardRows& job) {
  // (one channel: 3 rows x 2 vectors, so that the accumulators and the sums of the kernel rows' chains
  // both stay in the 16 registers)
  // (one channel of 3 x 3 taps on a grid: each source vector loaded once for the rows it reaches)
  if (job.out_channels == 1 && job.channels == 1 && job.grid_rows == 3 && job.taps == 9 && job.chain_taps == 3)
    return forward_band_rows<avx2_ops, 2, 2, 3, 3>(job);
  if (job.out_channels == 1) return forward_rows<avx2_ops, 1, 2, 3>(job);
  forward_rows<avx2_ops, 4, 1, 3>(job);
}
int64_t weight_block_avx2(int64_t out_channels) { return out_channels == 1 ? 1 : out_channels < 4 ? 2 : 4; }
void weight_rows_avx2(const WeightRows& job) {
  if (job.out_channels == 1) return weight_rows<avx2_ops, 1, 9>(job);
  if (job.out_channels < 4) return weight_rows<avx2_ops, 2, 4>(job);
  weight_rows<avx2_ops, 4, 3>(job);
}

bool reads_in_place_avx2(const ForwardRows&) { return avx2_ops::kFaultFreeMasks; }
void input_rows_avx2(const InputRows& job) { input_rows<avx2_ops, 1, 6>(job); }

}  // namespace

extern const RowKernels kRowKernelsAvx2 = {
    Isa::kAvx2, forward_rows_avx2, weight_rows_avx2, weight_block_avx2, input_rows_avx2, 0, reads_in_place_avx2};

}  // namespace aclnn_cpu
