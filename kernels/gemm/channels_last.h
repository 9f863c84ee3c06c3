// Shared by the channels-last entries (channels_last_input.cpp, channels_last_weight.cpp): what
// they accept, the rows they read, and the conversions of 16-bit operands as they are packed.
//
// Channels-last 1-D convolutions (ConvTbc's T x B x C tensors, and any NWC view): with unit channel
// stride, each sample's source and gradOutput are (positions x channels) matrices as they lie in
// memory, and each kernel tap is one GEMM on a row-shifted view of them. Float tensors are read and
// written in place: no dense copies, no column matrix. Stride 1, one group, any padding and dilation:
//   gradInput:  dX[s, :] = sum over taps k (in order) of dY[s + p - k*d, :] * W_k   (rows inside dY only)
//               and the forward product (a direct layer's output, a transposed layer's gradInput):
//               Y[t, :] = sum over taps k (in order) of X[t - p + k*d, :] * W_k^T  (rows inside X only)
//   gradWeight: W_k's gradient = sum over samples (in order) of dY^T * X[t - p + k*d, :]
//               (time-major rows: over positions, each position's samples in order)
// with W_k = W[:, :, k] (Cout x Cin). Every entry is summed in a fixed order inside one task (each
// product a blocked sum, blocked_sum.h, added to the entry), so results do not depend on the thread
// count.
//
// FLOAT16 and BF16 tensors are converted as they are packed, never copied whole: gradWeight packs both
// of its operands once per execution (from 16-bit rows: X^T as a PackedLeft, dY as a PackedRight), and
// gradInput widens each tap's dY rows of a chunk of rows into a small per-thread block before its GEMM
// (the GEMM reads that block in place as it reads float rows) and sums a 16-bit dX chunk in float, rounded once
// into the user's view when the chunk's taps are done. 16-bit weights are packed tap by tap from the
// user's tensor.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/matmul/bf16_pairs.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace channels_last {

// Tasks are cut for the thread count (kTasksPerThread per thread), not for a fixed count as elsewhere:
// every entry's chain of multiply-adds runs over the same taps, samples and positions in the same
// order however its rows and positions are blocked, so the blocking changes no bit, and fewer,
// larger products pack each operand fewer times.
constexpr int64_t kTasksPerThread = 3;
constexpr int64_t kMinWeightRows = 16;                // rows of a weight-gradient block, at least
constexpr int64_t kPackedBudget = int64_t{32} << 20;  // bytes of float operands packed once, at most

constexpr int64_t kChunkFloats = int64_t{1} << 17;  // floats of a gradInput chunk's rows, at most (pairs: a row block)
constexpr int64_t kLine = 384;                      // floats of a converted line on the stack (6 x 64, 32 x 12)

inline bool float_or_half(const View5& v) {
  return v.dtype == ACL_FLOAT || v.dtype == ACL_FLOAT16 || v.dtype == ACL_BF16;
}

inline bool rows_view(const View5& v, bool output) {
  return float_or_half(v) && (v.shape[1] == 1 || v.stride[1] == 1) && v.stride[0] >= 0 && v.stride[4] >= 0 &&
         !(output && may_overlap(v));
}

// A channels-last (N, C, 1, 1, T) view seen as (N, T, 1, 1, C): the channels of position t are row t
// of plane n, one run for read_row_floats and store_plane_floats.
inline View5 positions_as_planes(const View5& v) {
  View5 s = v;
  std::swap(s.shape[1], s.shape[4]);
  std::swap(s.stride[1], s.stride[4]);
  return s;
}

// The rows of a unit of work: sample n's positions, or (`flat`) every sample's, row r = position r / N
// of sample r % N (time-major, ConvTbc's own order).
struct UnitRows {
  bool flat;
  int64_t samples, n;
  int64_t sample(int64_t r) const { return flat ? r % samples : n; }
  int64_t position(int64_t r) const { return flat ? r / samples : r; }
  // Row r's first element (channel 0) in the view, and the distance between rows of a float matrix
  // over them (flat: interleaved_rows views only).
  int64_t element(const View5& v, int64_t r) const { return v.element(sample(r), 0, 0, 0, position(r)); }
  int64_t stride(const View5& v) const { return flat ? v.stride[0] : v.stride[4]; }
  const float* floats(const View5& v, int64_t r) const { return static_cast<const float*>(v.data) + element(v, r); }
};

// Rows [p0, p1) of a unit's (positions x channels) matrix, any dtype, converted to floats as they are
// packed into depths [p0, p1) of slivers W channels wide at `out` of `depth`:
//   out[(j / W) * W * depth + p * W + j % W] = row p's channel j (zero past the last)
// -- a PackedRight of the matrix (W = NR) or a PackedLeft of its transpose (W = MR). A row is
// converted kLine channels at a time (a multiple of W) into a line zero-padded to whole slivers
// (`conversions`: the plan's kit's, as for the other conversions below).
template <int W>
inline void pack_rows_converted(const View5& v, const UnitRows& unit, int64_t p0, int64_t p1, float* out, int64_t depth,
                                const Conversions16* conversions) {
  static_assert(kLine % W == 0, "a line holds whole slivers");
  const View5 planes = positions_as_planes(v);
  const int64_t channels = v.shape[1];
  float line[kLine];
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t c0 = 0; c0 < channels; c0 += kLine) {
      const int64_t run = std::min(kLine, channels - c0), padded = round_up(run, W);
      read_row_floats(planes, MathMode::kFull, unit.sample(p), unit.position(p), 0, 0, c0, 1, run, line, conversions);
      std::fill(line + run, line + padded, 0.0f);
      float* to = out + c0 / W * W * depth + p * W;
      for (int64_t j = 0; j < padded; j += W, to += W * depth) std::memcpy(to, line + j, W * sizeof(float));
    }
  }
}
inline void pack_rows_converted(const View5& v, const UnitRows& unit, int64_t p0, int64_t p1, int width, float* out,
                                int64_t depth, const Conversions16* conversions) {
  switch (width) {  // every micro-kernel's MR and NR
    case 6: return pack_rows_converted<6>(v, unit, p0, p1, out, depth, conversions);
    case 8: return pack_rows_converted<8>(v, unit, p0, p1, out, depth, conversions);
    case 16: return pack_rows_converted<16>(v, unit, p0, p1, out, depth, conversions);
    default: return pack_rows_converted<32>(v, unit, p0, p1, out, depth, conversions);
  }
}

// Tap k's W_k (Cout x Cin) of FLOAT16/BF16 (Cout, Cin, 1, 1, K) weights as a PackedRight of slivers
// `width` input channels wide (depth Cout), converted as it is packed: each input channel's Cout
// entries read as one line (one run in ConvTbc's (K, Cin, Cout) weights; a forward product's view,
// its first two axes swapped, reads them across instead).
inline void pack_tap_converted(const View5& wei, int64_t k, int width, float* out, const Conversions16* conversions) {
  View5 lines = wei;  // element (k, ci, 0, 0, co) = W[co, ci, k]
  std::swap(lines.shape[0], lines.shape[4]);
  std::swap(lines.stride[0], lines.stride[4]);
  const int64_t cout = wei.shape[0], cin = wei.shape[1];
  float line[kLine];
  for (int64_t ci = 0; ci < round_up(cin, width); ++ci) {
    float* to = out + ci / width * width * cout + ci % width;
    for (int64_t co0 = 0; co0 < cout; co0 += kLine) {
      const int64_t run = std::min(kLine, cout - co0);
      if (ci < cin) {
        read_row_floats(lines, MathMode::kFull, k, ci, 0, 0, co0, 1, run, line, conversions);
      } else {
        std::fill_n(line, run, 0.0f);
      }
      for (int64_t p = 0; p < run; ++p) to[(co0 + p) * width] = line[p];
    }
  }
}

// A (Cout, Cin, 1, 1, K) weight-shaped float array laid out as ConvTbc's (K, Cin, Cout).
inline View5 tbc_weight_view(const View5& like, float* data) {
  View5 f = like;
  f.data = data, f.dtype = ACL_FLOAT, f.offset = 0;
  f.stride[0] = 1, f.stride[1] = like.shape[0], f.stride[4] = like.shape[0] * like.shape[1];
  f.stride[2] = f.stride[3] = 0;
  return f;
}

// One tap's (Cout x Cin) slice of a (Cout, Cin, 1, 1, K) view as a matrix operand, when one of its
// two strides is 1.
// (FLOAT16/BF16 weights are converted into a float array of their own: any strides.)
inline bool matrix_view(const View5& v) {
  if (v.dtype == ACL_FLOAT16 || v.dtype == ACL_BF16) return true;
  return v.dtype == ACL_FLOAT && (v.shape[0] == 1 || v.shape[1] == 1 || v.stride[0] == 1 || v.stride[1] == 1) &&
         v.stride[0] >= 0 && v.stride[1] >= 0 && v.stride[4] >= 0;
}
inline bool unit_out(const View5& v) { return v.shape[0] == 1 || v.stride[0] == 1; }  // Cout is the unit-stride dim
inline MatrixRef tap_matrix(const View5& v, const float* data, int64_t k) {           // (Cout x Cin)
  const float* tap = data + k * v.stride[4];
  return unit_out(v) ? MatrixRef{tap, v.stride[1], true} : MatrixRef{tap, v.stride[0], false};
}

// 1-D along W, one group, stride 1, full-precision math.
inline bool geometry_fits(const ConvProblem& p) {
  const ConvGeometry& g = p.geometry;
  for (int a = 0; a < 2; ++a) {  // (an output row padded away from the source row meets none)
    if (g.src_size[a] != 1 || g.dst_size[a] != 1 || g.kernel[a] != 1 || g.pad[a] != 0) return false;
  }
  return g.groups == 1 && g.stride[2] == 1 && p.math == MathMode::kFull;
}

// FLOAT16/BF16 weights (Cout, Cin, 1, 1, K) into the float array `to` (tbc_weight_view).
// Calls body(co, ci, k0, count, taps) for every run of at most 64 taps of every (Cout, Cin) pair
// of a (Cout, Cin, 1, 1, K) weight-shaped view, one task per co; `taps` holds room for the run.
template <typename Body>
inline int for_each_tap_run(const View5& v, int threads, const char* what, Body body) {
  return run_tasks(v.shape[0], threads, what, [&](int64_t co) {
    constexpr int64_t kRun = 64;
    float taps[kRun];
    for (int64_t ci = 0; ci < v.shape[1]; ++ci) {
      for (int64_t k0 = 0; k0 < v.shape[4]; k0 += kRun) body(co, ci, k0, std::min(kRun, v.shape[4] - k0), taps);
    }
  });
}

// Whether the view's elements lie in memory in the order of the float array `like`
// (tbc_weight_view): the same strides on every axis of more than one entry (ConvTbc's own (K, Cin,
// Cout) weights). Then both are one contiguous run, converted in its memory order: a tap at a time
// each entry would be a cache line (and a page) of its own.
inline bool stored_like(const View5& v, const View5& like) {
  for (int a = 0; a < 5; ++a) {
    if (v.shape[a] > 1 && v.stride[a] != like.stride[a]) return false;
  }
  return true;
}

// The view as one row of numel() entries from its first (stored_like a dense array).
inline View5 as_one_row(View5 v) {
  const int64_t total = v.numel();
  for (int a = 0; a < 4; ++a) v.shape[a] = 1, v.stride[a] = 0;
  v.shape[4] = total, v.stride[4] = 1;
  return v;
}

// Calls body(first, count) for the pieces of [0, total), runs of 2^14 entries, a task each.
template <typename Body>
inline int for_each_piece(int64_t total, int threads, const char* what, Body body) {
  constexpr int64_t kRun = int64_t{1} << 14;
  return run_tasks(ceil_div(total, kRun), threads, what,
                   [&](int64_t t) { body(t * kRun, std::min(kRun, total - t * kRun)); });
}

inline int convert_weights(const View5& from, const View5& to, int threads, const Conversions16* conversions) {
  float* data = dense_float_data(to);
  if (stored_like(from, to)) {
    const View5 row = as_one_row(from);
    return for_each_piece(row.numel(), threads, "channels-last weights", [&](int64_t first, int64_t count) {
      read_row_floats(row, MathMode::kFull, 0, 0, 0, 0, first, 1, count, data + first, conversions);
    });
  }
  return for_each_tap_run(from, threads, "channels-last weights",
                          [&](int64_t co, int64_t ci, int64_t k0, int64_t count, float* taps) {
                            read_row_floats(from, MathMode::kFull, co, ci, 0, 0, k0, 1, count, taps, conversions);
                            for (int64_t k = 0; k < count; ++k) data[to.element(co, ci, 0, 0, k0 + k)] = taps[k];
                          });
}

// gradInput's two products as one: to[s, :] = sum over taps k (in order) of from[s + shift(k), :] * M_k
// (rows of `from` inside it only), M_k the (From x To) matrix taps[:, :, 0, 0, k]:
//   kBackwardData (a direct layer's gradInput): from = dY, to = dX, M_k = W_k, shift(k) = p - k*d;
//   kForward (a transposed layer's gradInput, a direct layer's output): from = X, to = Y, M_k = W_k^T
//   (W's first two axes swapped), shift(k) = k*d - p.
struct TapProduct {
  View5 from, to, taps;
  int64_t from_channels = 0, to_channels = 0, from_positions = 0, to_positions = 0;
  int64_t pad = 0, dilation = 1, taps_count = 0;
  bool forward = false;
  int64_t shift(int64_t k) const { return forward ? k * dilation - pad : pad - k * dilation; }
};
inline TapProduct tap_product(const ConvProblem& p) {
  const ConvGeometry& g = p.geometry;
  TapProduct t;
  t.forward = p.input_grad == InputGrad::kForward;
  t.to = p.grad_input, t.taps = p.wei;
  t.from = t.forward ? p.src : p.dst;
  if (t.forward) {
    std::swap(t.taps.shape[0], t.taps.shape[1]);
    std::swap(t.taps.stride[0], t.taps.stride[1]);
  }
  t.from_channels = t.forward ? g.src_channels_per_group : g.dst_channels_per_group;
  t.to_channels = t.forward ? g.dst_channels_per_group : g.src_channels_per_group;
  t.from_positions = t.forward ? g.src_size[2] : g.dst_size[2];
  t.to_positions = t.forward ? g.dst_size[2] : g.src_size[2];
  t.pad = g.pad[2], t.dilation = g.dilation[2], t.taps_count = g.kernel[2];
  return t;
}

// The tiles (amx.h) whose order BF16 `from` rows and W (inputs as they are) take for a TapProduct's
// pair products, or kNone: pairs of its From channels, side by side in its rows (unit channel stride,
// an even count).
inline AmxTiles input_pair_tiles(const ConvProblem& p, const TapProduct& t, AmxTiles engine) {
  if (t.from.stride[1] != 1 || t.from_channels % 2 != 0) return AmxTiles::kNone;
  return amx_pair_products(engine, t.from, p.wei, p.math);
}

// Whether a view holds its rows (position t, sample n) evenly spaced in t-major order, row t * N + n
// one sample stride after the one before it (ConvTbc's T x B x C tensors): then a tap's rows of every
// sample are one matrix, shifted by whole positions of N rows.
// (Rows of at least one channel, and N x T far within 64 bits: the view's elements are in memory.)
inline bool interleaved_rows(const View5& v) {
  return v.shape[0] > 1 && v.stride[0] > 0 && product_within(v.shape[0], v.shape[4], int64_t{1} << 58) &&
         v.stride[4] == v.shape[0] * v.stride[0];
}

// What the channels_last entries decide in supports() and plan from: pair products in the AMX tiles'
// order on `amx` (where the operands are BF16 pairs the CPU multiplies: `pairs`), else float products,
// and then interleaved rows (interleaved_rows, of `from` and `to`) tiled as one matrix of N x T rows.
struct ChannelsLastDecision final : EntryDecision {
  AmxTiles amx = AmxTiles::kNone;
  bool flat = false;
  ChoiceReasons reasons;
  std::string describe() const override { return reasons.text; }
};
inline ChannelsLastDecision decide_channels_last(const ConvProblem& p, AmxTiles pairs, const View5& from,
                                                 const View5& to) {
  const std::string& forced = p.forced_choices;
  ChannelsLastDecision d;
  if (take_choice(forced, "pairs", pairs != AmxTiles::kNone, true)) d.amx = pairs;
  d.flat =
      take_choice(forced, "flat", d.amx == AmxTiles::kNone && interleaved_rows(from) && interleaved_rows(to), true);
  d.reasons.note(forced, d.amx != AmxTiles::kNone, "pairs", "BF16 operands in the AMX tiles' order");
  d.reasons.note(forced, d.flat, "flat", "every sample's time-major rows tiled as one matrix");
  return d;
}

}  // namespace channels_last
}  // namespace aclnn_cpu
