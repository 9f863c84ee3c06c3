// AVX2 + FMA row kernels: a 16-lane vector is two ymm registers. Forward rows in blocks of 4
// channels x 16 positions (8 accumulator registers), or 1 x 32 for one output channel; input rows in
// chunks of 6 positions x 16 channels (12); weight rows by their own kernel (weight_halves_avx2), a
// vector's two halves one after the other, in blocks of 4 channels x 3 taps of one half (12), 2 x 4
// below 4 channels, 1 x 9 for one. Compiled with -mavx2 -mfma; called only when the CPU has both.
#include <immintrin.h>

#include "kernels/common/keep_in_register.h"
#include "kernels/direct/row_kernels.h"

namespace aclnn_cpu {
namespace {

// The template's 16-lane vector as two ymm registers, for input_rows (the one template AVX2
// instantiates: its forward and weight rows have kernels of their own, below).
struct avx2_ops {
  struct T {
    __m256 lo, hi;
  };
  static T zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static T splat(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
  static T load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void store(float* p, T v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static void in_register(T& v) { keep_in_register(v.lo), keep_in_register(v.hi); }
  static T madd(T a, T b, T c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
};

#include "kernels/direct/row_kernels_impl.h"

// Stores the first `count` (< 8) lanes of v at p, nothing past them (vmaskmovps stores are microcoded
// on AMD's cores).
inline void store_first_avx2(float* p, __m256 v, int64_t count) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  for (int64_t l = 0; l < count; ++l) p[l] = lanes[l];
}

// forward_rows on AVX2, in units of 8 positions: kRows rows x kCo channels x kV units of accumulators
// (12 of AVX2's 16 registers: with 8, as the template's 16-lane blocks give, the FMA units wait on the
// chains' latency), each entry's chain over (channel, tap) in order as the template's. Units past the
// width are computed from the staged rows' padding and not stored.
template <int kCo, int kV, int kRows>
inline __attribute__((always_inline)) void forward_units_avx2(const ForwardRows& job, int64_t r, int64_t co0,
                                                              int64_t w0) {
  __m256 acc[kRows][kCo][kV];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int co = 0; co < kCo; ++co) {
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) acc[i][co][v] = _mm256_setzero_ps();
    }
  }
  const float* src[kRows];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) src[i] = job.src + job.row_base[r + i] + w0;
  const float* weights = job.weights + co0;
  for (int64_t c = 0; c < job.channels; ++c) {
    for (int64_t t = 0; t < job.taps; ++t, weights += kForwardBlock) {
      const int64_t at = c * job.channel_stride + job.tap[t];
      if (kCo == 1) {  // each source vector meets one weight: loaded into the multiply-add
        const __m256 w = _mm256_broadcast_ss(weights);
#pragma GCC unroll 4
        for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
          for (int v = 0; v < kV; ++v)
            acc[i][0][v] = _mm256_fmadd_ps(w, _mm256_loadu_ps(src[i] + at + 8 * v), acc[i][0][v]);
        }
        continue;
      }
      __m256 x[kRows][kV];
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
        for (int v = 0; v < kV; ++v) x[i][v] = _mm256_loadu_ps(src[i] + at + 8 * v);
      }
#pragma GCC unroll 4
      for (int co = 0; co < kCo; ++co) {
        const __m256 w = _mm256_broadcast_ss(weights + co);
#pragma GCC unroll 4
        for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
          for (int v = 0; v < kV; ++v) acc[i][co][v] = _mm256_fmadd_ps(w, x[i][v], acc[i][co][v]);
        }
      }
    }
  }
  const int64_t channels = lesser(kCo, job.out_channels - co0);
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int co = 0; co < kCo; ++co) {
      if (co >= channels) break;
      float* out = job.out + (co0 + co) * job.out_channel_stride + (r + i) * job.width + w0;
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) {
        const int64_t count = lesser(8, job.width - w0 - 8 * v);
        if (count == 8) {
          _mm256_storeu_ps(out + 8 * v, acc[i][co][v]);
        } else if (count > 0) {
          store_first_avx2(out + 8 * v, acc[i][co][v], count);
        }
      }
    }
  }
}

// Rows [r, r + kRows) in blocks of kCo channels x kV units (fewer units at the end of a row).
template <int kCo, int kV, int kRows>
void forward_row_units_avx2(const ForwardRows& job, int64_t r) {
  for (int64_t co0 = 0; co0 < job.out_channels; co0 += kCo) {
    int64_t w0 = 0;
    for (; w0 + 8 * (kV - 1) < job.width; w0 += 8 * kV) forward_units_avx2<kCo, kV, kRows>(job, r, co0, w0);
    if constexpr (kV > 1) {
      const int64_t left = (job.width - w0 + 7) / 8;  // units left, fewer than kV
      if (left > 0) {
        if (kV > 2 && left == 2) forward_units_avx2<kCo, (kV > 2 ? 2 : 1), kRows>(job, r, co0, w0);
        if (kV > 3 && left == 3) forward_units_avx2<kCo, (kV > 3 ? 3 : 1), kRows>(job, r, co0, w0);
        if (left == 1) forward_units_avx2<kCo, 1, kRows>(job, r, co0, w0);
      }
    }
  }
}

// forward_rows, kRows (3) rows at a time; the last 1 or 2 rows in pairs, taking a row from the groups
// before where needed (one row alone has a quarter of the chains).
template <int kCo, int kV, int kRows>
void forward_rows_units_avx2(const ForwardRows& job) {
  static_assert(kRows == 3, "pairs for what is left");
  const int64_t left = job.rows % kRows, pairs = left == 1 && job.rows > 1 ? 2 : left == 2 ? 1 : 0;
  const int64_t end = job.rows - 2 * pairs;
  int64_t r = 0;
  for (; r + kRows <= end; r += kRows) forward_row_units_avx2<kCo, kV, kRows>(job, r);
  for (; r + 2 <= job.rows; r += 2) forward_row_units_avx2<kCo, kV, 2>(job, r);
  if (r < job.rows) forward_row_units_avx2<kCo, kV, 1>(job, r);
}

void forward_rows_avx2(const ForwardRows& job) {
  if (job.out_channels == 1) return forward_rows_units_avx2<1, 4, 3>(job);
  forward_rows_units_avx2<4, 1, 3>(job);
}
// One pass of weight_halves_avx2 over the slice's rows for one half vector (8 lanes): kTb source
// loads (lanes past the width cleared by an AND with the 8 masks at `keep` when kMasked, so that an
// infinity there makes no NaN), then each channel's dY half loaded once for its kTb multiply-adds.
// The masks are loaded again for every row, and live only while the source halves are cleared: the
// kCb * kTb accumulators, the source halves and a dY half take all 16 registers.
template <int kCb, int kTb, bool kMasked>
inline __attribute__((always_inline)) void weight_half_pass_avx2(const float* src, const int64_t* row_base,
                                                                 int64_t rows, const float* dy, int64_t dy_row_stride,
                                                                 const int64_t (&tap)[kTb], const float* keep,
                                                                 __m256 (&acc)[kCb][kTb]) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + row_base[r];
    keep_in_register(s);  // (a pointer of its own: each tap's load then s + tap[k] in one address, not a sum first)
    __m256 x[kTb];
    __m256 mask = _mm256_setzero_ps();
    if (kMasked) {
      const float* masks = keep;
      keep_in_register(masks);  // (not hoisted out of the loop into a register of its own)
      mask = _mm256_load_ps(masks);
    }
#pragma GCC unroll 9
    for (int k = 0; k < kTb; ++k) {
      x[k] = _mm256_loadu_ps(s + tap[k]);
      if (kMasked) x[k] = _mm256_and_ps(x[k], mask);
    }
    const float* d = dy + r * dy_row_stride;
#pragma GCC unroll 8
    for (int b = 0; b < kCb; ++b) {
      __m256 dv = _mm256_loadu_ps(d + b * kRowLanes);
      keep_in_register(dv);  // one load for kTb products (GCC would fold a load into each)
#pragma GCC unroll 9
      for (int k = 0; k < kTb; ++k) acc[b][k] = _mm256_fmadd_ps(dv, x[k], acc[b][k]);
    }
  }
}

// weight_rows on AVX2: each 16-lane vector taken as two halves of 8 lanes, all of a block's low halves
// over the slice and then all its high halves. Lanes are independent chains, and each still takes the
// slice's (column vector, row) pairs in order: the same sums as weight_rows. A block of kCb channels x
// kTb taps then holds kCb * kTb registers of accumulators, not twice as many (which spill: blocks of
// whole vectors reload accumulators and the job's fields from the stack every row). The last vector's
// halves are cleared past the width by an AND (vmaskmovps is slow on AMD's cores), and a half wholly
// past it is skipped: its products are zeros, which change no sum (a sum from +0 is never -0). The
// prefetch runs take a step per pass, off the rows' loop (their counters would take general registers
// the loop needs).
template <int kCb, int kTb>
void weight_halves_avx2(const WeightRows& job) {
  constexpr int kHalf = kRowLanes / 2;
  const float* const src = job.src;
  const int64_t* const row_base = job.row_base;
  const int64_t rows = job.rows, width = job.width, dy_row_stride = job.dy_row_stride, dy_channels = job.dy_channels;
  const int64_t vectors = (width + kRowLanes - 1) / kRowLanes;
  const int64_t blocks = (job.out_channels + kCb - 1) / kCb * ((job.taps + kTb - 1) / kTb);
  LinePrefetch prefetch(job, 2 * blocks * vectors);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int half = 0; half < 2; ++half) {
    const int64_t lane0 = half * kHalf;
    for (int64_t co0 = 0; co0 < job.out_channels; co0 += kCb) {
      for (int64_t t0 = 0; t0 < job.taps; t0 += kTb) {
        int64_t tap[kTb];
        for (int k = 0; k < kTb; ++k) tap[k] = job.tap[lesser(t0 + k, job.taps - 1)] + lane0;
        __m256 acc[kCb][kTb];
        for (int b = 0; b < kCb; ++b) {
          for (int k = 0; k < kTb; ++k) acc[b][k] = _mm256_setzero_ps();
        }
        const float* dy = job.dy + co0 * kRowLanes + lane0;  // the block's first dY half, at row 0
        int64_t at = 0;
        for (; width - at - lane0 >= kHalf; at += kRowLanes) {
          prefetch.step();
          weight_half_pass_avx2<kCb, kTb, false>(src + at, row_base, rows, dy + at * dy_channels, dy_row_stride, tap,
                                                 nullptr, acc);
        }
        const int64_t inside = width - at - lane0;  // lanes of a last, partial half inside the width
        if (inside > 0) {                           // (the last pass of every chain of the block)
          prefetch.step();
          alignas(32) float keep[kHalf];
          _mm256_store_ps(keep, _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(inside)), lane)));
          weight_half_pass_avx2<kCb, kTb, true>(src + at, row_base, rows, dy + at * dy_channels, dy_row_stride, tap,
                                                keep, acc);
        }
        const int64_t channels = lesser(kCb, job.out_channels - co0), taps = lesser(kTb, job.taps - t0);
        for (int b = 0; b < channels; ++b) {
          for (int k = 0; k < taps; ++k) {
            float* lanes = job.lanes + (co0 + b) * job.lanes_channel_stride + (t0 + k) * kRowLanes + lane0;
            _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_loadu_ps(lanes), acc[b][k]));
          }
        }
      }
    }
  }
}

int64_t weight_block_avx2(int64_t out_channels) { return out_channels == 1 ? 1 : out_channels < 4 ? 2 : 4; }
void weight_rows_avx2(const WeightRows& job) {
  if (job.out_channels == 1) return weight_halves_avx2<1, 9>(job);
  if (job.out_channels < 4) return weight_halves_avx2<2, 4>(job);
  weight_halves_avx2<4, 3>(job);
}

void input_rows_avx2(const InputRows& job) { input_rows<avx2_ops, 1, 6>(job); }

}  // namespace

extern const RowKernels kRowKernelsAvx2 = {Isa::kAvx2, forward_rows_avx2, weight_rows_avx2, weight_block_avx2,
                                           input_rows_avx2};

}  // namespace aclnn_cpu
