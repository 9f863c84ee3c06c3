// The row kernels of row_kernels.h as templates over one instruction set's 16-lane vector, included
// only by the per-instruction-set translation units (row_kernels_*.cpp), inside their anonymous
// namespace: every function here gets internal linkage there, and it calls nothing from outside
// (no std:: templates), so no code compiled for one instruction set can be shared with another.
//
// Ops supplies (all static): a type T of 16 floats; zero(), splat(float), load(const float*),
// mask_first(n) (a Mask of the first n < 16 lanes), load_masked(const float*, Mask) (those lanes,
// zeros in the others, which are never read), store_masked(float*, T, Mask) (those lanes only),
// kCheapMasks (whether a masked load costs what a load does), store(float*, T), add(T, T),
// madd(a, b, c) = c + a * b (fused where the set has FMA) and in_register(T&) (keeps a loaded
// vector in registers, not a memory operand of each use). Nothing here may be included outside
// such a translation unit.

inline int64_t lesser(int64_t a, int64_t b) { return a < b ? a : b; }

// Output positions [w0, w0 + 16 * kVec) of channels [co0, co0 + kCo) of kRows forward rows (row i's
// staged source row at src_rows[i], its channel 0's output at out_rows[i]). Rows side by side give a
// one-channel (depthwise) chunk independent chains enough to keep the FMA units busy: one row's four
// accumulators, each a chain over the taps, leave them half idle (the chains' latency). Each entry's
// chain is the same whatever kRows is.
template <class Ops, int kCo, int kVec, int kRows>
void forward_chunk(const ForwardRows& job, const float* const (&src_rows)[kRows], float* const (&out_rows)[kRows],
                   int64_t co0, int64_t w0) {
  using T = typename Ops::T;
  // (Every loop over kRows, kCo and kVec unrolled, so that the accumulators stay in registers: else GCC
  // keeps them in a stack array, each multiply-add a load and a store.)
  T acc[kRows][kCo][kVec];
#pragma GCC unroll 2
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int co = 0; co < kCo; ++co) {
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) acc[i][co][v] = Ops::zero();
    }
  }
  for (int64_t c = 0; c < job.channels; ++c) {
    const float* weights = job.weights + c * job.taps * kForwardBlock + co0;
    for (int64_t t = 0; t < job.taps; ++t, weights += kForwardBlock) {
      const int64_t at = c * job.channel_stride + w0 + job.tap[t];
#pragma GCC unroll 2
      for (int i = 0; i < kRows; ++i) {
        T x[kVec];
#pragma GCC unroll 4
        for (int v = 0; v < kVec; ++v) x[v] = Ops::load(src_rows[i] + at + kRowLanes * v);
#pragma GCC unroll 8
        for (int co = 0; co < kCo; ++co) {
          const T w = Ops::splat(weights[co]);
#pragma GCC unroll 4
          for (int v = 0; v < kVec; ++v) acc[i][co][v] = Ops::madd(w, x[v], acc[i][co][v]);
        }
      }
    }
  }
  const int64_t channels = lesser(kCo, job.out_channels - co0);
#pragma GCC unroll 2
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int co = 0; co < channels; ++co) {
      float* out = out_rows[i] + (co0 + co) * job.out_channel_stride + w0;
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) {
        const int64_t count = lesser(kRowLanes, job.width - w0 - kRowLanes * v);
        if (count == kRowLanes) {
          Ops::store(out + kRowLanes * v, acc[i][co][v]);
        } else if (count > 0) {
          Ops::store_masked(out + kRowLanes * v, acc[i][co][v], Ops::mask_first(count));
        }
      }
    }
  }
}

// Rows [r, r + kRows) of forward_rows, in blocks of kCo channels x 16 * kVec positions (16 at a time at
// the end of a row that needs fewer).
template <class Ops, int kCo, int kVec, int kRows>
void forward_row_group(const ForwardRows& job, int64_t r) {
  const float* src_rows[kRows];
  float* out_rows[kRows];
#pragma GCC unroll 2
  for (int i = 0; i < kRows; ++i)
    src_rows[i] = job.src + job.row_base[r + i], out_rows[i] = job.out + (r + i) * job.width;
  for (int64_t co0 = 0; co0 < job.out_channels; co0 += kCo) {
    for (int64_t w0 = 0; w0 < job.width;) {
      if (job.width - w0 > kRowLanes * (kVec - 1)) {
        forward_chunk<Ops, kCo, kVec, kRows>(job, src_rows, out_rows, co0, w0);
        w0 += kRowLanes * kVec;
      } else {
        forward_chunk<Ops, kCo, 1, kRows>(job, src_rows, out_rows, co0, w0);
        w0 += kRowLanes;
      }
    }
  }
}

// forward_rows, kRows rows at a time (the last ones alone). One call for all the rows of a slice, not a
// call per row (a depthwise row is only 4 blocks, too little work to pay for a call).
template <class Ops, int kCo, int kVec, int kRows = 1>
void forward_rows(const ForwardRows& job) {
  int64_t r = 0;
  for (; r + kRows <= job.rows; r += kRows) forward_row_group<Ops, kCo, kVec, kRows>(job, r);
  for (; r < job.rows; ++r) forward_row_group<Ops, kCo, kVec, 1>(job, r);
}

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

// One pass of weight_rows over the slice's rows at column vector `at`: for each row, the kTb taps'
// source vectors (masked to the first lanes when kMasked: no source entry past the row's width is
// read), then each output channel's dY vector (at fixed offsets from `dy`, the block's first at row
// 0), loaded once for its kTb multiply-adds. The accumulators are copied into locals for the pass,
// so that they stay in registers.
template <class Ops, int kCb, int kTb, bool kMasked>
inline __attribute__((always_inline)) void weight_pass(const WeightRows& job, const float* dy, const int64_t* tap,
                                                       int64_t at, typename Ops::Mask mask,
                                                       typename Ops::T (&sums)[kCb][kTb], LinePrefetch& prefetch) {
  using T = typename Ops::T;
  T acc[kCb][kTb];
#pragma GCC unroll 8
  for (int b = 0; b < kCb; ++b) {
#pragma GCC unroll 9
    for (int k = 0; k < kTb; ++k) acc[b][k] = sums[b][k];
  }
  for (int64_t r = 0; r < job.rows; ++r) {
    prefetch.step();
    const float* src = job.src + job.row_base[r] + at;
    T x[kTb];
#pragma GCC unroll 9
    for (int k = 0; k < kTb; ++k) x[k] = kMasked ? Ops::load_masked(src + tap[k], mask) : Ops::load(src + tap[k]);
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

// weight_rows in blocks of kCb output channels x kTb taps, each block's kCb * kTb lane vectors held in
// registers over the whole slice. A block reaching past the taps computes repeats of the last one,
// past the channels dY's zero slots, and stores only the real ones.
template <class Ops, int kCb, int kTb>
void weight_rows(const WeightRows& job) {
  using T = typename Ops::T;
  // (a step per row of each pass)
  LinePrefetch prefetch(job, (job.out_channels + kCb - 1) / kCb * ((job.taps + kTb - 1) / kTb) *
                                 ((job.width + kRowLanes - 1) / kRowLanes) * job.rows);
  for (int64_t co0 = 0; co0 < job.out_channels; co0 += kCb) {
    for (int64_t t0 = 0; t0 < job.taps; t0 += kTb) {
      const float* dy = job.dy + co0 * kRowLanes;  // the block's first vector, at row 0 and column 0
      int64_t tap[kTb];
      for (int k = 0; k < kTb; ++k) tap[k] = job.tap[lesser(t0 + k, job.taps - 1)];
      T acc[kCb][kTb];
      for (int b = 0; b < kCb; ++b) {
        for (int k = 0; k < kTb; ++k) acc[b][k] = Ops::zero();
      }
      // Column vectors outermost, then rows: the last, partial vector's mask is fixed for its pass.
      if constexpr (Ops::kCheapMasks) {  // one pass body, every vector masked (to all lanes but the last)
        for (int64_t at = 0; at < job.width; at += kRowLanes) {
          weight_pass<Ops, kCb, kTb, true>(job, dy + at * job.dy_channels, tap, at,
                                           Ops::mask_first(lesser(kRowLanes, job.width - at)), acc, prefetch);
        }
      } else {
        int64_t at = 0;
        for (; at + kRowLanes <= job.width; at += kRowLanes) {
          weight_pass<Ops, kCb, kTb, false>(job, dy + at * job.dy_channels, tap, at, Ops::mask_first(0), acc, prefetch);
        }
        if (at < job.width) {
          weight_pass<Ops, kCb, kTb, true>(job, dy + at * job.dy_channels, tap, at, Ops::mask_first(job.width - at),
                                           acc, prefetch);
        }
      }
      const int64_t channels = lesser(kCb, job.out_channels - co0), taps = lesser(kTb, job.taps - t0);
      for (int b = 0; b < channels; ++b) {
        for (int k = 0; k < taps; ++k) {
          float* lanes = job.lanes + (co0 + b) * job.lanes_channel_stride + (t0 + k) * kRowLanes;
          Ops::store(lanes, Ops::add(Ops::load(lanes), acc[b][k]));
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
                                                       typename Ops::Mask mask, typename Ops::T (&sums)[kKh * kKw]) {
  using T = typename Ops::T;
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
  using T = typename Ops::T;
  static_assert(Ops::kCheapMasks, "every vector is loaded under a mask");
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

// One tap of input_chunk, over every output channel: positions [kLo, kPos - kHi) of the chunk (the
// others read the padding's zeros there), each dY entry splatted once for the kBlocks weight vectors.
template <class Ops, int kBlocks, int kPos, int kLo, int kHi>
__attribute__((always_inline)) inline void input_tap(const InputRows& job, const float* w, const float* d,
                                                     typename Ops::T (&acc)[kPos][kBlocks]) {
  using T = typename Ops::T;
  for (int64_t co = 0; co < job.channels; ++co, w += kRowLanes, d += job.dy_channel_stride) {
    // The dY entries of the output channel 8 ahead (both lines the chunk may span): the staged rows
    // of a 1-D layer are channels a long row apart, a stride the hardware prefetchers do not follow.
    prefetch_floats_ahead(d, 8 * job.dy_channel_stride);
    prefetch_floats_ahead(d, 8 * job.dy_channel_stride + kPos - 1);
    // (one load for kPos products: the vectors held in registers, not folded into each multiply-add)
    T w0 = Ops::load(w), w1 = kBlocks > 1 ? Ops::load(w + job.weight_block_stride) : w0;
    Ops::in_register(w0);
    Ops::in_register(w1);
    const T wv[2] = {w0, w1};
#pragma GCC unroll 16
    for (int j = kLo; j < kPos - kHi; ++j) {
      const T x = Ops::splat(d[j]);
#pragma GCC unroll 2
      for (int b = 0; b < kBlocks; ++b) acc[j][b] = Ops::madd(x, wv[b], acc[j][b]);
    }
  }
}

// input_rows' blocks [b0, b0 + kBlocks) x positions [j0, j0 + kPos): kPos x kBlocks accumulators. A
// tap whose first or last one or two positions of the chunk read only padding leaves them out (on rows
// of 7 positions and 3 taps: 2 of every 21 products); more than that (a wide dilation), its zeros are
// multiplied.
template <class Ops, int kBlocks, int kPos>
void input_chunk(const InputRows& job, int64_t b0, int64_t j0) {
  using T = typename Ops::T;
  T acc[kPos][kBlocks];
#pragma GCC unroll 16
  for (int j = 0; j < kPos; ++j) {
#pragma GCC unroll 2
    for (int b = 0; b < kBlocks; ++b) acc[j][b] = Ops::zero();
  }
  const float* block = job.weights + b0 * job.weight_block_stride;
  for (int64_t t = 0; t < job.taps; ++t) {
    const float* w = block + job.weight_tap[t];
    const float* d = job.dy + job.dy_tap[t] + j0;
    const int64_t lo = std::clamp<int64_t>(job.tap_first[t] - j0, 0, kPos);
    const int64_t hi = std::clamp<int64_t>(j0 + kPos - job.tap_end[t], 0, kPos);
    if (lo + hi >= kPos) continue;  // the chunk's positions all read padding for this tap
    if constexpr (kPos > 4) {
      const int64_t edges = lo * 3 + hi;  // (lo, hi) with each at most 2
      if (lo <= 2 && hi <= 2 && edges != 0) {
        switch (edges) {
          case 1: input_tap<Ops, kBlocks, kPos, 0, 1>(job, w, d, acc); continue;
          case 2: input_tap<Ops, kBlocks, kPos, 0, 2>(job, w, d, acc); continue;
          case 3: input_tap<Ops, kBlocks, kPos, 1, 0>(job, w, d, acc); continue;
          case 4: input_tap<Ops, kBlocks, kPos, 1, 1>(job, w, d, acc); continue;
          case 6: input_tap<Ops, kBlocks, kPos, 2, 0>(job, w, d, acc); continue;
          default: break;  // (1, 2), (2, 1), (2, 2): all positions, zeros included
        }
      }
    }
    input_tap<Ops, kBlocks, kPos, 0, 0>(job, w, d, acc);
  }
#pragma GCC unroll 16
  for (int j = 0; j < kPos; ++j) {
#pragma GCC unroll 2
    for (int b = 0; b < kBlocks; ++b) Ops::store(job.out + ((b0 + b) * job.width + j0 + j) * kRowLanes, acc[j][b]);
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
// most kPos positions, the row cut into chunks of equal size (within one).
template <class Ops, int kBlocks, int kPos>
void input_rows(const InputRows& job) {
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
