// The row kernels of row_kernels.h as templates over one instruction set's vectors, included only by
// the per-instruction-set translation units (row_kernels_*.cpp), inside their anonymous namespace:
// every function here gets internal linkage there, and it calls nothing from outside (no std::
// templates), so no code compiled for one instruction set can be shared with another.
//
// Ops supplies (all static): kLanes, the floats of its vector type T (16 or 8: a 16-lane vector of
// the rows' layout is kRowLanes / kLanes of them, its parts); zero(), splat(float), load(const
// float*), mask_first(n) (a Mask of the first n < kLanes lanes), load_masked(const float*, Mask) (those
// lanes, zeros in the others: entries past them may be loaded, never multiplied), store_masked(float*,
// T, Mask) (those lanes only), kCheapMasks (whether a masked load costs what a load does), store(float*,
// T), add(T, T), madd(a, b, c) = c + a * b (fused where the set has FMA), in_register(T&) (keeps a
// loaded vector in registers, not a memory operand of each use), kPrefetchEachRow (whether
// weight_rows' prefetch steps once per row, or, where the rows' loop needs every general register,
// once per pass) and kFaultFreeMasks (whether the set reads sources in place: then also mask_lanes(lo,
// hi) and no_lanes(), Masks of lanes [lo, hi) and of none, and load_lanes(address, Mask), a load of the
// mask's lanes, zeros in the others, that touches no other lane). Nothing here may be included outside
// such a translation unit.

inline int64_t lesser(int64_t a, int64_t b) { return a < b ? a : b; }

// Output positions [w0, w0 + kLanes * kVec) of channels [co0, co0 + kCo) of kRows forward rows (row i's
// staged source row at src_rows[i], its channel 0's output at out_rows[i]). Rows side by side give a
// one-channel (depthwise) chunk independent chains enough to keep the FMA units busy: one row's
// accumulators, each a chain over the taps, leave them half idle (the chains' latency). Each entry's
// chain is the same whatever kRows, kVec and the vector width are. Vectors past the width are computed
// from the staged rows' padding and not stored.
template <class Ops, int kCo, int kVec, int kRows>
void forward_chunk(const ForwardRows& job, const float* const (&src_rows)[kRows], float* const (&out_rows)[kRows],
                   int64_t co0, int64_t w0) {
  using T = typename Ops::T;
  constexpr int kLanes = Ops::kLanes;
  // (Every loop over kRows, kCo and kVec unrolled, so that the accumulators stay in registers: else GCC
  // keeps them in a stack array, each multiply-add a load and a store.)
  T acc[kRows][kCo][kVec], chains[kRows][kVec];  // (chains: the sum of the chains before, kCo 1)
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int co = 0; co < kCo; ++co) {
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) acc[i][co][v] = chains[i][v] = Ops::zero();
    }
  }
  // (with one channel: taps left in the current chain)
  const int64_t chain_taps = job.chain_taps > 0 ? job.chain_taps : job.taps * job.channels;
  int64_t chain_left = chain_taps;
  for (int64_t c = 0; c < job.channels; ++c) {
    const float* weights = job.weights + c * job.taps * kForwardBlock + co0;
    for (int64_t t = 0; t < job.taps; ++t, weights += kForwardBlock) {
      const int64_t at = c * job.channel_stride + w0 + job.tap[t];
      // Every row's source vectors first, then each weight broadcast once for all of them: the
      // accumulators, the source vectors and one weight in registers (on AVX2 all 16 of them).
      if constexpr (kCo == 1) {  // each source vector meets one weight: loaded into its multiply-add
        const T w = Ops::splat(weights[0]);
#pragma GCC unroll 4
        for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
          for (int v = 0; v < kVec; ++v)
            acc[i][0][v] = Ops::madd(w, Ops::load(src_rows[i] + at + kLanes * v), acc[i][0][v]);
        }
        // A chain ends (after chain_taps taps, or a channel's last one where chains are set): its sum
        // added to the chains' before.
        if (--chain_left == 0 || (job.chain_taps > 0 && t + 1 == job.taps)) {
          chain_left = chain_taps;
#pragma GCC unroll 4
          for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
            for (int v = 0; v < kVec; ++v)
              chains[i][v] = Ops::add(chains[i][v], acc[i][0][v]), acc[i][0][v] = Ops::zero();
          }
        }
        continue;
      }
      T x[kRows][kVec];
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
        for (int v = 0; v < kVec; ++v) x[i][v] = Ops::load(src_rows[i] + at + kLanes * v);
      }
#pragma GCC unroll 8
      for (int co = 0; co < kCo; ++co) {
        const T w = Ops::splat(weights[co]);
#pragma GCC unroll 4
        for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
          for (int v = 0; v < kVec; ++v) acc[i][co][v] = Ops::madd(w, x[i][v], acc[i][co][v]);
        }
      }
    }
  }
  const int64_t channels = lesser(kCo, job.out_channels - co0);
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int co = 0; co < kCo; ++co) {
      if (co >= channels) break;
      float* out = out_rows[i] + (co0 + co) * job.out_channel_stride + w0;
      const T bias = Ops::splat(job.bias != nullptr ? job.bias[co0 + co] : 0.0f);
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) {
        const int64_t count = lesser(kLanes, job.width - w0 - kLanes * v);
        T result = kCo == 1 ? chains[i][v] : acc[i][co][v];
        if (job.bias != nullptr) result = Ops::add(result, bias);
        if (count == kLanes) {
          Ops::store(out + kLanes * v, result);
        } else if (count > 0) {
          Ops::store_masked(out + kLanes * v, result, Ops::mask_first(count));
        }
      }
    }
  }
}

// forward_chunk for the last `left` (< kVec) vectors of a row: a template per count, so that no vector
// wholly past the width is computed.
template <class Ops, int kCo, int kVec, int kRows>
void forward_tail(const ForwardRows& job, const float* const (&src_rows)[kRows], float* const (&out_rows)[kRows],
                  int64_t co0, int64_t w0, int64_t left) {
  if constexpr (kVec > 1) {
    if (left == kVec - 1) return forward_chunk<Ops, kCo, kVec - 1, kRows>(job, src_rows, out_rows, co0, w0);
    forward_tail<Ops, kCo, kVec - 1, kRows>(job, src_rows, out_rows, co0, w0, left);
  }
}

// Rows [r, r + kRows) of forward_rows, in blocks of kCo channels x kLanes * kVec positions (fewer
// vectors at the end of a row that needs fewer).
template <class Ops, int kCo, int kVec, int kRows>
void forward_row_group(const ForwardRows& job, int64_t r) {
  constexpr int kLanes = Ops::kLanes;
  const float* src_rows[kRows];
  float* out_rows[kRows];
#pragma GCC unroll 4
  for (int i = 0; i < kRows; ++i)
    src_rows[i] = job.src + job.row_base[r + i], out_rows[i] = job.out + (r + i) * job.width;
  for (int64_t co0 = 0; co0 < job.out_channels; co0 += kCo) {
    int64_t w0 = 0;
    for (; w0 + kLanes * (kVec - 1) < job.width; w0 += kLanes * kVec)
      forward_chunk<Ops, kCo, kVec, kRows>(job, src_rows, out_rows, co0, w0);
    const int64_t left = (job.width - w0 + kLanes - 1) / kLanes;  // vectors left, fewer than kVec
    if (left > 0) forward_tail<Ops, kCo, kVec, kRows>(job, src_rows, out_rows, co0, w0, left);
  }
}

// forward_rows, kRows rows at a time; the rows left one at a time, or with groups of three, in pairs
// (taking a row from the groups before where one is left: a row alone has a third of the chains). One
// call for all the rows of a slice, not a call per row (a depthwise row is only a few vectors, too
// little work to pay for a call).
template <class Ops, int kCo, int kVec, int kRows = 1>
void forward_rows(const ForwardRows& job) {
  int64_t r = 0, end = job.rows;
  if constexpr (kRows == 3) {
    const int64_t left = job.rows % kRows, pairs = left == 1 && job.rows > 1 ? 2 : left == 2 ? 1 : 0;
    end = job.rows - 2 * pairs;
  }
  for (; r + kRows <= end; r += kRows) forward_row_group<Ops, kCo, kVec, kRows>(job, r);
  if constexpr (kRows == 3) {
    for (; r + 2 <= job.rows; r += 2) forward_row_group<Ops, kCo, kVec, 2>(job, r);
  }
  for (; r < job.rows; ++r) forward_row_group<Ops, kCo, kVec, 1>(job, r);
}

// A source read in place (ForwardRows::source_row): the lanes of each vector u of a row (positions
// [16u, 16u + 16)) that kernel column kw may read, those whose entry lies inside the source row
// (column w + tap_column[kw], the first kernel row's taps) and whose position lies inside the output
// row; worked out once per job.
template <class Ops, int kKw>
struct InPlaceColumns {
  typename Ops::Mask lanes[kMaxInPlaceVectors][kKw];
  explicit InPlaceColumns(const ForwardRows& job) {
    constexpr int kLanes = Ops::kLanes;
    for (int64_t u = 0; u * kLanes < job.width; ++u) {
      for (int kw = 0; kw < kKw; ++kw) {
        const int64_t w = kLanes * u, x = w + job.tap_column[kw];  // the vector's first position and entry
        const int64_t lo = x < 0 ? -x : 0;
        const int64_t hi = lesser(lesser(kLanes, job.source_width - x), job.width - w);
        lanes[u][kw] = hi > lo ? Ops::mask_lanes(lo, hi) : Ops::no_lanes();
      }
    }
  }
};
// Where a source comes from: staged rows, or the user's rows read in place (kInPlaceEdge: with rows
// outside the plane among those read).
enum class Source { kStaged, kInPlace, kInPlaceEdge };

// forward_band_chunk's loads (source row j of the band, kernel column kw, vector v): from the user's
// rows in place, of each load only the lanes whose entry lies inside the source plane (InPlaceColumns'),
// the others zero as the staged padding's (a source row outside the plane, in a band at its edge, all
// zeros), the address as an integer (it may lie outside the tensor where no lane is read) ...
template <class Ops, int kRows, int kKw, int kVec, Source kSource>
struct BandLoads {
  using Mask = typename Ops::Mask;
  static constexpr bool kEdge = kSource == Source::kInPlaceEdge;
  uintptr_t src;
  Mask columns[kKw][kVec];
  bool inside[kRows];
  BandLoads(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place, int64_t r, int64_t w0)
      : src(reinterpret_cast<uintptr_t>(job.src) + static_cast<uintptr_t>(job.row_base[r] + w0) * sizeof(float)) {
    const auto& all = in_place->lanes;
#pragma GCC unroll 8
    for (int kw = 0; kw < kKw; ++kw) {
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) columns[kw][v] = all[w0 / Ops::kLanes + v][kw];
    }
#pragma GCC unroll 16
    for (int j = 0; j < kRows; ++j) {
      inside[j] = !kEdge || (job.source_row[r] + j >= 0 && job.source_row[r] + j < job.source_height);
    }
  }
  typename Ops::T operator()(const ForwardRows& job, int j, int kw, int v) const {
    if (kEdge && !inside[j]) return Ops::zero();
    const int64_t at = j * job.row_step + job.tap[kw] + Ops::kLanes * v;
    return Ops::load_lanes(src + static_cast<uintptr_t>(at) * sizeof(float), columns[kw][v]);
  }
};
// ... or from staged rows, whole.
template <class Ops, int kRows, int kKw, int kVec>
struct BandLoads<Ops, kRows, kKw, kVec, Source::kStaged> {
  const float* src;
  BandLoads(const ForwardRows& job, const InPlaceColumns<Ops, kKw>*, int64_t r, int64_t w0)
      : src(job.src + job.row_base[r] + w0) {}
  typename Ops::T operator()(const ForwardRows& job, int j, int kw, int v) const {
    return Ops::load(src + j * job.row_step + job.tap[kw] + Ops::kLanes * v);
  }
};

// Rows [r, r + kBand) of one plane of a one-channel forward_rows whose taps are a kKh x kKw grid
// (ForwardRows' grid structure, chains of kKw taps), positions [w0, w0 + kLanes * kVec): each source
// vector (staged, or read in place) loaded once per kernel column for every band row it reaches (kernel
// row kh meets row i at source row i + kh), not once per tap. Row i's products still come in tap order,
// (kh, kw), each kernel row one chain from zero added to the chains before as it ends: forward_chunk's
// sums, bit for bit. Vectors past the width are computed (from the staged rows' padding, or zeros) and
// not stored.
template <class Ops, int kBand, int kVec, int kKh, int kKw, Source kSource>
void forward_band_chunk(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place, int64_t r, int64_t w0) {
  using T = typename Ops::T;
  constexpr int kLanes = Ops::kLanes;
  const BandLoads<Ops, kBand + kKh - 1, kKw, kVec, kSource> load(job, in_place, r, w0);
  T acc[kBand][kVec], chains[kBand][kVec];
#pragma GCC unroll 8
  for (int i = 0; i < kBand; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVec; ++v) acc[i][v] = chains[i][v] = Ops::zero();
  }
#pragma GCC unroll 16
  for (int j = 0; j < kBand + kKh - 1; ++j) {  // the band's staged source rows
#pragma GCC unroll 8
    for (int kw = 0; kw < kKw; ++kw) {
      T x[kVec];
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) x[v] = load(job, j, kw, v);
#pragma GCC unroll 8
      for (int i = 0; i < kBand; ++i) {
        if (j - i < 0 || j - i >= kKh) continue;
        const T w = Ops::splat(job.weights[((j - i) * kKw + kw) * kForwardBlock]);
#pragma GCC unroll 4
        for (int v = 0; v < kVec; ++v) acc[i][v] = Ops::madd(w, x[v], acc[i][v]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < kBand; ++i) {  // kernel row j - i of row i ends
      if (j - i < 0 || j - i >= kKh) continue;
#pragma GCC unroll 4
      for (int v = 0; v < kVec; ++v) chains[i][v] = Ops::add(chains[i][v], acc[i][v]), acc[i][v] = Ops::zero();
    }
  }
  const T bias = Ops::splat(job.bias != nullptr ? job.bias[0] : 0.0f);
#pragma GCC unroll 8
  for (int i = 0; i < kBand; ++i) {
    float* out = job.out + (r + i) * job.width + w0;
#pragma GCC unroll 4
    for (int v = 0; v < kVec; ++v) {
      const int64_t count = lesser(kLanes, job.width - w0 - kLanes * v);
      const T result = job.bias != nullptr ? Ops::add(chains[i][v], bias) : chains[i][v];
      if (count == kLanes) {
        Ops::store(out + kLanes * v, result);
      } else if (count > 0) {
        Ops::store_masked(out + kLanes * v, result, Ops::mask_first(count));
      }
    }
  }
}

// forward_band_chunk for the last `left` (< the row's kVec) vectors of a band: a template per count.
template <class Ops, int kBand, int kVec, int kKh, int kKw, Source kSource>
void forward_band_tail(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place, int64_t r, int64_t w0,
                       int64_t left) {
  if (left >= kVec) return forward_band_chunk<Ops, kBand, kVec, kKh, kKw, kSource>(job, in_place, r, w0);
  if constexpr (kVec > 1) forward_band_tail<Ops, kBand, kVec - 1, kKh, kKw, kSource>(job, in_place, r, w0, left);
}

// forward_band_chunk over a band's positions: chunks of kVec vectors, the last with as many as it needs.
template <class Ops, int kBand, int kVec, int kKh, int kKw, Source kSource>
void forward_band_row_from(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place, int64_t r) {
  constexpr int kLanes = Ops::kLanes;
  int64_t w0 = 0;
  for (; w0 + kLanes * (kVec - 1) < job.width; w0 += kLanes * kVec)
    forward_band_chunk<Ops, kBand, kVec, kKh, kKw, kSource>(job, in_place, r, w0);
  const int64_t left = (job.width - w0 + kLanes - 1) / kLanes;  // vectors left, fewer than kVec
  if constexpr (kVec > 1) {
    if (left > 0) forward_band_tail<Ops, kBand, kVec - 1, kKh, kKw, kSource>(job, in_place, r, w0, left);
  }
}
// (in place: null for a staged source)
template <class Ops, int kBand, int kVec, int kKh, int kKw>
void forward_band_row(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place, int64_t r) {
  if constexpr (Ops::kFaultFreeMasks) {
    if (in_place != nullptr) {
      if (job.source_row[r] >= 0 && job.source_row[r] + kBand + kKh - 1 <= job.source_height)
        return forward_band_row_from<Ops, kBand, kVec, kKh, kKw, Source::kInPlace>(job, in_place, r);
      return forward_band_row_from<Ops, kBand, kVec, kKh, kKw, Source::kInPlaceEdge>(job, in_place, r);
    }
  }
  forward_band_row_from<Ops, kBand, kVec, kKh, kKw, Source::kStaged>(job, nullptr, r);
}

// The last `rows` (< kBand + 1) rows of a plane as one band: a template per count.
template <class Ops, int kBand, int kVec, int kKh, int kKw>
void forward_band_left(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place, int64_t r, int64_t rows) {
  if (rows >= kBand) return forward_band_row<Ops, kBand, kVec, kKh, kKw>(job, in_place, r);
  if constexpr (kBand > 1) forward_band_left<Ops, kBand - 1, kVec, kKh, kKw>(job, in_place, r, rows);
}

// forward_rows for one output channel whose taps are a kKh x kKw grid (ForwardRows::grid_rows kKh,
// chains of kKw taps): each plane's rows in bands of kBand (forward_band_chunk), the rows left over in
// a smaller band; the source staged or read in place (forward_rows).
template <class Ops, int kBand, int kVec, int kKh, int kKw>
void forward_band_rows_from(const ForwardRows& job, const InPlaceColumns<Ops, kKw>* in_place) {
  for (int64_t p0 = 0; p0 < job.rows; p0 += job.plane_rows) {
    const int64_t p1 = lesser(job.rows, p0 + job.plane_rows);
    int64_t r = p0;
    for (; r + kBand <= p1; r += kBand) forward_band_row<Ops, kBand, kVec, kKh, kKw>(job, in_place, r);
    if constexpr (kBand > 1) {
      if (r < p1) forward_band_left<Ops, kBand - 1, kVec, kKh, kKw>(job, in_place, r, p1 - r);
    }
  }
}
template <class Ops, int kBand, int kVec, int kKh, int kKw>
void forward_band_rows(const ForwardRows& job) {
  if constexpr (Ops::kFaultFreeMasks) {
    if (job.source_row != nullptr) {
      const InPlaceColumns<Ops, kKw> in_place(job);
      return forward_band_rows_from<Ops, kBand, kVec, kKh, kKw>(job, &in_place);
    }
  }
  forward_band_rows_from<Ops, kBand, kVec, kKh, kKw>(job, nullptr);
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

// One pass of weight_rows over the slice's rows at one column vector's part (its lanes from the
// taps' offsets `tap` and from `dy`, the block's first dY part at row 0): for each row, the kTb taps'
// source vectors (masked to the first lanes when kMasked: no source entry past the row's width is
// multiplied), then each output channel's dY vector (at fixed offsets from `dy`), loaded once for its
// kTb multiply-adds. The accumulators are copied into locals for the pass, so that they stay in
// registers.
template <class Ops, int kCb, int kTb, bool kMasked>
inline __attribute__((always_inline)) void weight_pass(const WeightRows& job, const float* src, const float* dy,
                                                       const int64_t* tap, typename Ops::Mask mask,
                                                       typename Ops::T (&sums)[kCb][kTb], LinePrefetch& prefetch) {
  using T = typename Ops::T;
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
  using T = typename Ops::T;
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
    typename Ops::T (&acc)[kRows * kPos][kBlocks * kRowLanes / Ops::kLanes]) {
  using T = typename Ops::T;
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
        const T x = Ops::splat(d[r * row_step + j]);
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
    typename Ops::T (&acc)[kRows * kPos][kBlocks * kRowLanes / Ops::kLanes]) {
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
  using T = typename Ops::T;
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
