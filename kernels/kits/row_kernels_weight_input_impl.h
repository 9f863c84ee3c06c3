// The weight and input row kernels of row_kernels.h (weight_rows, weight_band_rows, input_rows) as
// templates over one instruction set's vectors: the companion of row_kernels_impl.h (which holds the
// forward ones and says what Ops supplies), included right after it, under the same rules, only by the
// kits (kit_*.cpp), inside their anonymous namespace.

// WeightRows' prefetch runs, spread evenly over `steps` steps (addresses as integers: nothing is
// dereferenced), into L2 (locality 2): the data is for a slice after the next one, and brought into
// L1 it would only push out this slice's operands. (The output run too is read: a store then finds
// its line in L2. A prefetch for writing would need PRFCHW, which not every AVX2 CPU has.)
struct LinePrefetch {
  static constexpr int kRuns = WeightRows::kPrefetchRuns;
  uintptr_t next[kRuns];
  int64_t left[kRuns], per_step[kRuns];
  LinePrefetch(const WeightRows& job, int64_t steps) {
    for (int i = 0; i < kRuns; ++i) {
      next[i] = reinterpret_cast<uintptr_t>(job.prefetch_from[i]);
      left[i] = job.prefetch_lines[i];
      per_step[i] = steps > 0 ? (left[i] + steps - 1) / steps : 0;
    }
  }
  void step() {
#pragma GCC unroll 3
    for (int i = 0; i < kRuns; ++i) {
      for (int64_t j = 0; j < per_step[i] && left[i] > 0; ++j, --left[i], next[i] += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(next[i]), 0, 2);
    }
  }
};

// One pass of weight_rows over the slice's rows at one column vector's part (its lanes from the
// taps' offsets `tap` and from `dy`, the block's first dY part at row 0): for each row, the kTb taps'
// source vectors (masked to the first lanes when kMasked: no source entry past the row's width is
// multiplied), then each output channel's dY vector (at fixed offsets from `dy`), loaded once for its
// kTb multiply-adds. The accumulators are copied into locals for the pass, so that they stay in
// registers.
template <class Ops, int kCb, int kTb, bool kMasked>
inline __attribute__((always_inline)) void weight_pass(const WeightRows& job, const float* src, const float* dy,
                                                       const int64_t* tap, typename Ops::Mask mask,
                                                       typename Ops::Vec (&sums)[kCb][kTb], LinePrefetch& prefetch) {
  using T = typename Ops::Vec;
  T acc[kCb][kTb];
#pragma GCC unroll 8
  for (int b = 0; b < kCb; ++b) {
#pragma GCC unroll 9
    for (int k = 0; k < kTb; ++k) acc[b][k] = sums[b][k];
  }
  if (!Ops::kPrefetchEachRow) prefetch.step();
  for (int64_t r = 0; r < job.rows; ++r) {
    if (Ops::kPrefetchEachRow) prefetch.step();
    const float* row = src + job.row_base[r];
    keep_in_register(row);  // (a pointer of its own: each tap's load one address, row + tap[k], not a sum first)
    T x[kTb];
#pragma GCC unroll 9
    for (int k = 0; k < kTb; ++k) x[k] = kMasked ? Ops::load_masked(row + tap[k], mask) : Ops::load(row + tap[k]);
    const float* dy_row = dy + r * job.dy_row_stride;
#pragma GCC unroll 8
    for (int b = 0; b < kCb; ++b) {
      T d = Ops::load(dy_row + b * kRowLanes);
      Ops::in_register(d);  // one load for kTb products (GCC would fold a load into each)
#pragma GCC unroll 9
      for (int k = 0; k < kTb; ++k) acc[b][k] = Ops::madd(d, x[k], acc[b][k]);
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < kCb; ++b) {
#pragma GCC unroll 9
    for (int k = 0; k < kTb; ++k) sums[b][k] = acc[b][k];
  }
}

// weight_rows in blocks of kCb output channels x kTb taps, each block's kCb * kTb vectors held in
// registers over the whole slice: one part of every column vector at a time (all the first parts of a
// block, then all its second ones: lanes are independent chains, each still taking the slice's (column
// vector, row) pairs in order, the same sums whatever the vector width). A block reaching past the taps
// computes repeats of the last one, past the channels dY's zero slots, and stores only the real ones.
// A part wholly past the width is skipped (its products are zeros, which change no sum: a sum from +0
// is never -0).
template <class Ops, int kCb, int kTb>
void weight_rows(const WeightRows& job) {
  using T = typename Ops::Vec;
  constexpr int kLanes = Ops::kLanes, kParts = kRowLanes / kLanes;
  const int64_t vectors = (job.width + kRowLanes - 1) / kRowLanes;
  const int64_t blocks = (job.out_channels + kCb - 1) / kCb * ((job.taps + kTb - 1) / kTb);
  LinePrefetch prefetch(job, kParts * blocks * vectors * (Ops::kPrefetchEachRow ? job.rows : 1));
  for (int part = 0; part < kParts; ++part) {
    const int64_t lane0 = part * kLanes;
    for (int64_t co0 = 0; co0 < job.out_channels; co0 += kCb) {
      for (int64_t t0 = 0; t0 < job.taps; t0 += kTb) {
        const float* dy = job.dy + co0 * kRowLanes + lane0;  // the block's first dY part, at row 0
        int64_t tap[kTb];
        for (int k = 0; k < kTb; ++k) tap[k] = job.tap[lesser(t0 + k, job.taps - 1)] + lane0;
        T acc[kCb][kTb];
        for (int b = 0; b < kCb; ++b) {
          for (int k = 0; k < kTb; ++k) acc[b][k] = Ops::zero();
        }
        // Column vectors outermost, then rows: the last, partial vector's mask is fixed for its pass.
        int64_t at = 0;
        if constexpr (Ops::kCheapMasks) {  // one pass body, every vector masked (to all lanes but the last)
          for (; job.width - at - lane0 > 0; at += kRowLanes) {
            weight_pass<Ops, kCb, kTb, true>(job, job.src + at, dy + at * job.dy_channels, tap,
                                             Ops::mask_first(lesser(kLanes, job.width - at - lane0)), acc, prefetch);
          }
        } else {
          for (; job.width - at - lane0 >= kLanes; at += kRowLanes) {
            weight_pass<Ops, kCb, kTb, false>(job, job.src + at, dy + at * job.dy_channels, tap, Ops::mask_first(0),
                                              acc, prefetch);
          }
          if (job.width - at - lane0 > 0) {
            weight_pass<Ops, kCb, kTb, true>(job, job.src + at, dy + at * job.dy_channels, tap,
                                             Ops::mask_first(job.width - at - lane0), acc, prefetch);
          }
        }
        const int64_t channels = lesser(kCb, job.out_channels - co0), taps = lesser(kTb, job.taps - t0);
        for (int b = 0; b < channels; ++b) {
          for (int k = 0; k < taps; ++k) {
            float* lanes = job.lanes + (co0 + b) * job.lanes_channel_stride + (t0 + k) * kRowLanes + lane0;
            Ops::store(lanes, Ops::add(Ops::load(lanes), acc[b][k]));
          }
        }
      }
    }
  }
}

// Rows [r0, r0 + kBand) of one plane at column vector `at`, for one output channel whose taps are a
// kKh x kKw grid over rows a staged row apart (WeightRows' grid structure): the band's dY vectors
// loaded once, each staged source row once per kernel column for every band row it reaches (every
// loop unrolled: the reach of each load is known when compiled). A tap's lanes take the band's rows
// in order (kernel row b meets row i at source row i + b), as weight_pass takes them: the same sums.
template <class Ops, int kBand, int kKh, int kKw>
inline __attribute__((always_inline)) void weight_band(const WeightRows& job, const float* dy, int64_t r0, int64_t at,
                                                       typename Ops::Mask mask, typename Ops::Vec (&sums)[kKh * kKw]) {
  using T = typename Ops::Vec;
  T acc[kKh * kKw];
#pragma GCC unroll 25
  for (int t = 0; t < kKh * kKw; ++t) acc[t] = sums[t];
  T d[kBand];
#pragma GCC unroll 16
  for (int i = 0; i < kBand; ++i) {
    d[i] = Ops::load(dy + (r0 + i) * job.dy_row_stride);
    Ops::in_register(d[i]);
  }
  const float* src = job.src + job.row_base[r0] + at;
#pragma GCC unroll 32
  for (int j = 0; j < kBand + kKh - 1; ++j) {
#pragma GCC unroll 5
    for (int k = 0; k < kKw; ++k) {
      const T x = Ops::load_masked(src + j * job.row_step + job.tap[k], mask);
#pragma GCC unroll 5
      for (int b = 0; b < kKh; ++b) {
        if (j - b >= 0 && j - b < kBand) acc[b * kKw + k] = Ops::madd(d[j - b], x, acc[b * kKw + k]);
      }
    }
  }
#pragma GCC unroll 25
  for (int t = 0; t < kKh * kKw; ++t) sums[t] = acc[t];
}

// weight_rows for one output channel whose taps are a kKh x kKw grid (WeightRows), on a set with
// cheap masks: each column vector's rows in bands of kBand within a plane (weight_band), the rows
// left over one at a time.
template <class Ops, int kBand, int kKh, int kKw>
void weight_band_rows(const WeightRows& job) {
  using T = typename Ops::Vec;
  static_assert(Ops::kCheapMasks && Ops::kLanes == kRowLanes, "whole 16-lane vectors, every one loaded under a mask");
  T acc[kKh * kKw];
  for (int t = 0; t < kKh * kKw; ++t) acc[t] = Ops::zero();
  // (a step per band, about)
  LinePrefetch prefetch(job, (job.width + kRowLanes - 1) / kRowLanes * ((job.rows + kBand - 1) / kBand));
  for (int64_t at = 0; at < job.width; at += kRowLanes) {
    const auto mask = Ops::mask_first(lesser(kRowLanes, job.width - at));
    const float* dy = job.dy + at * job.dy_channels;
    for (int64_t p0 = 0; p0 < job.rows; p0 += job.plane_rows) {
      const int64_t p1 = lesser(job.rows, p0 + job.plane_rows);
      int64_t r = p0;
      for (; r + kBand <= p1; r += kBand) {
        prefetch.step();
        weight_band<Ops, kBand, kKh, kKw>(job, dy, r, at, mask, acc);
      }
      for (; r < p1; ++r) weight_band<Ops, 1, kKh, kKw>(job, dy, r, at, mask, acc);
    }
  }
  for (int t = 0; t < kKh * kKw; ++t) {
    Ops::store(job.lanes + t * kRowLanes, Ops::add(Ops::load(job.lanes + t * kRowLanes), acc[t]));
  }
}

// A prefetch of the float `ahead` floats past p (an address computed as an integer: it may lie past
// the buffer, where a prefetch does nothing).
inline void prefetch_floats_ahead(const float* p, int64_t ahead) {
  __builtin_prefetch(
      reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(ahead) * sizeof(float)));
}

// One tap of input_chunk, over output channels [co0, co1): positions [kLo, kPos - kHi) of each of the
// chunk's kRows rows (the others read the padding's zeros there; row r's dY entries job.row_step floats
// after row 0's), each dY entry splatted once for the kBlocks blocks' weight vectors (kParts vectors each).
template <class Ops, int kBlocks, int kPos, int kRows, int kLo, int kHi>
__attribute__((always_inline)) inline void input_tap(
    const InputRows& job, const float* w, const float* d, int64_t co0, int64_t co1,
    typename Ops::Vec (&acc)[kRows * kPos][kBlocks * kRowLanes / Ops::kLanes]) {
  using T = typename Ops::Vec;
  constexpr int kLanes = Ops::kLanes, kVectors = kBlocks * kRowLanes / kLanes;
  static_assert(kVectors <= 2, "a block of 16 channels in one or two vectors, or two blocks in one each");
  w += co0 * kRowLanes, d += co0 * job.dy_channel_stride;
  const int64_t row_step = kRows > 1 ? job.row_step : 0;
  for (int64_t co = co0; co < co1; ++co, w += kRowLanes, d += job.dy_channel_stride) {
    // The dY entries of the output channel 8 ahead (both lines the chunk may span): the staged rows
    // of a 1-D layer are channels a long row apart, a stride the hardware prefetchers do not follow.
    prefetch_floats_ahead(d, 8 * job.dy_channel_stride);
    prefetch_floats_ahead(d, 8 * job.dy_channel_stride + (kRows - 1) * row_step + kPos - 1);
    // (one load for kPos products: the vectors held in registers, not folded into each multiply-add;
    // named, not an array, which GCC would keep in memory)
    constexpr int kParts = kRowLanes / kLanes;
    T w0 = Ops::load(w), w1 = kVectors > 1 ? Ops::load(w + (kParts > 1 ? kLanes : job.weight_block_stride)) : w0;
    Ops::in_register(w0);
    Ops::in_register(w1);
    const T wv[2] = {w0, w1};
#pragma GCC unroll 2
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 16
      for (int j = kLo; j < kPos - kHi; ++j) {
        const T x = Ops::broadcast(d[r * row_step + j]);
#pragma GCC unroll 4
        for (int q = 0; q < kVectors; ++q) acc[r * kPos + j][q] = Ops::madd(x, wv[q], acc[r * kPos + j][q]);
      }
    }
  }
}

// Output channels [co0, co1) of tap t of input_chunk. A tap whose first or last one or two positions
// of the chunk (of each of its rows) read only padding leaves them out (on rows of 7 positions and 3
// taps: 2 of every 21 products); more than that (a wide dilation), its zeros are multiplied.
template <class Ops, int kBlocks, int kPos, int kRows>
__attribute__((always_inline)) inline void input_tap_channels(
    const InputRows& job, const float* block, int64_t t, int64_t j0, int64_t co0, int64_t co1,
    typename Ops::Vec (&acc)[kRows * kPos][kBlocks * kRowLanes / Ops::kLanes]) {
  const float* w = block + job.weight_tap[t];
  const float* d = job.dy + job.dy_tap[t] + j0;
  const int64_t lo = job.tap_first[t] - j0 < 0 ? 0 : lesser(job.tap_first[t] - j0, kPos);
  const int64_t hi = j0 + kPos - job.tap_end[t] < 0 ? 0 : lesser(j0 + kPos - job.tap_end[t], kPos);
  if (lo + hi >= kPos) return;  // the chunk's positions all read padding for this tap
  if constexpr (kPos > 4) {
    const int64_t edges = lo * 3 + hi;  // (lo, hi) with each at most 2
    if (lo <= 2 && hi <= 2 && edges != 0) {
      switch (edges) {
        case 1: return input_tap<Ops, kBlocks, kPos, kRows, 0, 1>(job, w, d, co0, co1, acc);
        case 2: return input_tap<Ops, kBlocks, kPos, kRows, 0, 2>(job, w, d, co0, co1, acc);
        case 3: return input_tap<Ops, kBlocks, kPos, kRows, 1, 0>(job, w, d, co0, co1, acc);
        case 4: return input_tap<Ops, kBlocks, kPos, kRows, 1, 1>(job, w, d, co0, co1, acc);
        case 6: return input_tap<Ops, kBlocks, kPos, kRows, 2, 0>(job, w, d, co0, co1, acc);
        default: break;  // (1, 2), (2, 1), (2, 2): all positions, zeros included
      }
    }
  }
  input_tap<Ops, kBlocks, kPos, kRows, 0, 0>(job, w, d, co0, co1, acc);
}

// input_rows' blocks [b0, b0 + kBlocks) x positions [j0, j0 + kPos) of each of kRows rows (kRows 2:
// both rows whole, j0 0): kRows x kPos x kBlocks x kParts accumulators. The (tap, output channel)
// products of each output, taps.channels of them in that order, are summed as
// kernels/common/blocked_sum.h sums: chains of kSumBlock from zero (a chain may go on into the next
// tap), their sums added in order within groups of kSumGroup, the groups' sums added in order. (A tap
// the chunk leaves out changes no cut: its products are zeros.)
template <class Ops, int kBlocks, int kPos, int kRows = 1>
void input_chunk(const InputRows& job, int64_t b0, int64_t j0) {
  using T = typename Ops::Vec;
  constexpr int kLanes = Ops::kLanes, kParts = kRowLanes / kLanes, kVectors = kBlocks * kParts;
  constexpr int kAll = kRows * kPos;
  T acc[kAll][kVectors], group[kAll][kVectors], sum[kAll][kVectors];  // (group and sum in memory)
#pragma GCC unroll 16
  for (int j = 0; j < kAll; ++j) {
#pragma GCC unroll 4
    for (int q = 0; q < kVectors; ++q) acc[j][q] = group[j][q] = sum[j][q] = Ops::zero();
  }
  const float* block = job.weights + b0 * job.weight_block_stride;
  const int64_t products = job.taps * job.channels;
  for (int64_t r0 = 0; r0 < products; r0 += kSumBlock) {
    const int64_t r1 = lesser(products, r0 + kSumBlock);
    for (int64_t t = r0 / job.channels; t * job.channels < r1; ++t) {
      const int64_t first = t * job.channels;
      input_tap_channels<Ops, kBlocks, kPos, kRows>(job, block, t, j0, r0 > first ? r0 - first : 0,
                                                    lesser(job.channels, r1 - first), acc);
    }
    const bool group_ends = r1 % kSumGroup == 0 || r1 == products;
#pragma GCC unroll 16
    for (int j = 0; j < kAll; ++j) {
#pragma GCC unroll 4
      for (int q = 0; q < kVectors; ++q) {
        group[j][q] = Ops::add(group[j][q], acc[j][q]);
        acc[j][q] = Ops::zero();
        if (group_ends) sum[j][q] = Ops::add(sum[j][q], group[j][q]), group[j][q] = Ops::zero();
      }
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < kAll; ++j) {
#pragma GCC unroll 4
    for (int q = 0; q < kVectors; ++q) {
      Ops::store(job.out + ((b0 + q / kParts) * job.width * kRows + j0 + j) * kRowLanes + q % kParts * kLanes,
                 sum[j][q]);
    }
  }
}

// input_chunk for a chunk of n <= kPos positions (a template per count: no position is computed
// only to be dropped).
template <class Ops, int kBlocks, int kPos>
void input_chunk_of(const InputRows& job, int64_t b0, int64_t j0, int64_t n) {
  if (n == kPos) return input_chunk<Ops, kBlocks, kPos>(job, b0, j0);
  if constexpr (kPos > 1) input_chunk_of<Ops, kBlocks, kPos - 1>(job, b0, j0, n);
}

// input_rows in blocks of kBlocks x 16 channels (one at the end where fewer remain) and chunks of at
// most kPos positions, the row cut into chunks of equal size (within one); two rows of kPairWidth
// positions (where kPairWidth is not 0) in one chunk of both.
template <class Ops, int kBlocks, int kPos, int kPairWidth = 0>
void input_rows(const InputRows& job) {
  if constexpr (kPairWidth > 0) {
    if (job.rows == 2 && job.width == kPairWidth) {
      for (int64_t b0 = 0; b0 < job.blocks; b0 += kBlocks) {
        if (job.blocks - b0 >= kBlocks) {
          input_chunk<Ops, kBlocks, kPairWidth, 2>(job, b0, 0);
        } else {
          input_chunk<Ops, 1, kPairWidth, 2>(job, b0, 0);
        }
      }
      return;
    }
  }
  const int64_t chunks = (job.width + kPos - 1) / kPos;
  for (int64_t b0 = 0; b0 < job.blocks; b0 += kBlocks) {
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t j0 = job.width * c / chunks, n = job.width * (c + 1) / chunks - j0;
      if (job.blocks - b0 >= kBlocks) {
        input_chunk_of<Ops, kBlocks, kPos>(job, b0, j0, n);
      } else {
        input_chunk_of<Ops, 1, kPos>(job, b0, j0, n);
      }
    }
  }
}
