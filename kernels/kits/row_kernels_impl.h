// The forward row kernels of row_kernels.h (forward_rows, forward_band_rows) as templates over one
// instruction set's vectors (the weight and input ones: row_kernels_weight_input_impl.h), included only by
// the kits (kit_*.cpp, one translation unit per instruction set), inside their anonymous namespace:
// every function here gets internal linkage there, and it calls nothing from outside (no std::
// templates), so no code compiled for one instruction set can be shared with another.
//
// Ops supplies (all static): kLanes, the floats of its vector type Vec (16 or 8: a 16-lane vector of
// the rows' layout is kRowLanes / kLanes of them, its parts); zero(), broadcast(float), load(const
// float*), mask_first(n) (a Mask of the first n < kLanes lanes), load_masked(const float*, Mask) (those
// lanes, zeros in the others: entries past them may be loaded, never multiplied), store_masked(float*,
// Vec, Mask) (those lanes only), kCheapMasks (whether a masked load costs what a load does), store(float*,
// Vec), add(Vec, Vec), madd(a, b, c) = c + a * b (fused where the set has FMA), in_register(Vec&) (keeps a
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
  using T = typename Ops::Vec;
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
        const T w = Ops::broadcast(weights[0]);
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
        const T w = Ops::broadcast(weights[co]);
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
      const T bias = Ops::broadcast(job.bias != nullptr ? job.bias[co0 + co] : 0.0f);
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
  typename Ops::Vec operator()(const ForwardRows& job, int j, int kw, int v) const {
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
  typename Ops::Vec operator()(const ForwardRows& job, int j, int kw, int v) const {
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
  using T = typename Ops::Vec;
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
        const T w = Ops::broadcast(job.weights[((j - i) * kKw + kw) * kForwardBlock]);
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
  const T bias = Ops::broadcast(job.bias != nullptr ? job.bias[0] : 0.0f);
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
