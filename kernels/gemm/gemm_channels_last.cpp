// Channels-last 1-D convolutions (ConvTbc's T x B x C tensors, and any NWC view): with unit channel
// stride, each sample's source and gradOutput are (positions x channels) matrices as they lie in
// memory, and each kernel tap is one GEMM on a row-shifted view of them. Float tensors are read and
// written in place: no dense copies, no column matrix. Stride 1, one group, any padding and dilation:
//   gradInput:  dX[s, :] = sum over taps k (in order) of dY[s + p - k*d, :] * W_k   (rows inside dY only)
//   gradWeight: W_k's gradient = sum over samples (in order) of dY^T * X[t - p + k*d, :]
//               (time-major rows: over positions, each position's samples in order)
// with W_k = W[:, :, k] (Cout x Cin). Every entry is one chain of fused multiply-adds in a fixed
// order inside one task, so results do not depend on the thread count.
//
// FLOAT16 and BF16 tensors are converted as they are packed, never copied whole: gradWeight packs both
// of its operands once per execution (from 16-bit rows: X^T as a PackedLeft, dY as a PackedRight), and
// gradInput widens each tap's dY rows of a chunk of rows into a small per-thread block before its GEMM
// (the GEMM packs that block as it packs float rows) and sums a 16-bit dX chunk in float, rounded once
// into the user's view when the chunk's taps are done. 16-bit weights are packed tap by tap from the
// user's tensor.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/bf16_dot.h"
#include "kernels/gemm/sgemm.h"

namespace aclnn_cpu {
namespace {

// Tasks are cut for the thread count (kTasksPerThread per thread), not for a fixed count as elsewhere:
// every entry's chain of multiply-adds runs over the same taps, samples and positions in the same
// order however its rows and positions are blocked, so the blocking changes no bit, and fewer,
// larger products pack each operand fewer times.
constexpr int64_t kTasksPerThread = 3;
constexpr int64_t kMinWeightRows = 16;                // rows of a weight-gradient block, at least
constexpr int64_t kPackedBudget = int64_t{32} << 20;  // bytes of float operands packed once, at most

constexpr int64_t kChunkFloats = int64_t{1} << 17;  // floats of a 16-bit gradInput chunk's staged rows, at most
constexpr int64_t kLine = 384;                      // floats of a converted line on the stack (6 x 64, 32 x 12)

bool float_or_half(const View5& v) { return v.dtype == ACL_FLOAT || v.dtype == ACL_FLOAT16 || v.dtype == ACL_BF16; }

bool rows_view(const View5& v, bool output) {
  return float_or_half(v) && (v.shape[1] == 1 || v.stride[1] == 1) && v.stride[0] >= 0 && v.stride[4] >= 0 &&
         !(output && may_overlap(v));
}

// A channels-last (N, C, 1, 1, T) view seen as (N, T, 1, 1, C): the channels of position t are row t
// of plane n, one run for read_row_floats and store_plane_floats.
View5 positions_as_planes(const View5& v) {
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
// converted kLine channels at a time (a multiple of W) into a line zero-padded to whole slivers.
template <int W>
void pack_rows_converted(const View5& v, const UnitRows& unit, int64_t p0, int64_t p1, float* out, int64_t depth) {
  static_assert(kLine % W == 0, "a line holds whole slivers");
  const View5 planes = positions_as_planes(v);
  const int64_t channels = v.shape[1];
  float line[kLine];
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t c0 = 0; c0 < channels; c0 += kLine) {
      const int64_t run = std::min(kLine, channels - c0), padded = round_up(run, W);
      read_row_floats(planes, MathMode::kFull, unit.sample(p), unit.position(p), 0, 0, c0, 1, run, line);
      std::fill(line + run, line + padded, 0.0f);
      float* to = out + c0 / W * W * depth + p * W;
      for (int64_t j = 0; j < padded; j += W, to += W * depth) std::memcpy(to, line + j, W * sizeof(float));
    }
  }
}
void pack_rows_converted(const View5& v, const UnitRows& unit, int64_t p0, int64_t p1, int width, float* out,
                         int64_t depth) {
  switch (width) {  // every micro-kernel's MR and NR
    case 6: return pack_rows_converted<6>(v, unit, p0, p1, out, depth);
    case 8: return pack_rows_converted<8>(v, unit, p0, p1, out, depth);
    case 16: return pack_rows_converted<16>(v, unit, p0, p1, out, depth);
    default: return pack_rows_converted<32>(v, unit, p0, p1, out, depth);
  }
}

// Tap k's W_k (Cout x Cin) of FLOAT16/BF16 (Cout, Cin, 1, 1, K) weights as a PackedRight of slivers
// `width` input channels wide (depth Cout), converted as it is packed: each input channel's Cout
// entries read as one line (one run in ConvTbc's (K, Cin, Cout) weights).
void pack_tap_converted(const View5& wei, int64_t k, int width, float* out) {
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
        read_row_floats(lines, MathMode::kFull, k, ci, 0, 0, co0, 1, run, line);
      } else {
        std::fill_n(line, run, 0.0f);
      }
      for (int64_t p = 0; p < run; ++p) to[(co0 + p) * width] = line[p];
    }
  }
}

// A (Cout, Cin, 1, 1, K) weight-shaped float array laid out as ConvTbc's (K, Cin, Cout).
View5 tbc_weight_view(const View5& like, float* data) {
  View5 f = like;
  f.data = data, f.dtype = ACL_FLOAT, f.offset = 0;
  f.stride[0] = 1, f.stride[1] = like.shape[0], f.stride[4] = like.shape[0] * like.shape[1];
  f.stride[2] = f.stride[3] = 0;
  return f;
}

// One tap's (Cout x Cin) slice of a (Cout, Cin, 1, 1, K) view as a matrix operand, when one of its
// two strides is 1.
// (FLOAT16/BF16 weights are converted into a float array of their own: any strides.)
bool matrix_view(const View5& v) {
  if (v.dtype == ACL_FLOAT16 || v.dtype == ACL_BF16) return true;
  return v.dtype == ACL_FLOAT && (v.shape[0] == 1 || v.shape[1] == 1 || v.stride[0] == 1 || v.stride[1] == 1) &&
         v.stride[0] >= 0 && v.stride[1] >= 0 && v.stride[4] >= 0;
}
bool unit_out(const View5& v) { return v.shape[0] == 1 || v.stride[0] == 1; }  // Cout is the unit-stride dim
MatrixRef tap_matrix(const View5& v, const float* data, int64_t k) {           // (Cout x Cin)
  const float* tap = data + k * v.stride[4];
  return unit_out(v) ? MatrixRef{tap, v.stride[1], true} : MatrixRef{tap, v.stride[0], false};
}

// 1-D along W, one group, stride 1, full-precision math.
bool geometry_fits(const ConvProblem& p) {
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
int for_each_tap_run(const View5& v, int threads, const char* what, Body body) {
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
bool stored_like(const View5& v, const View5& like) {
  for (int a = 0; a < 5; ++a) {
    if (v.shape[a] > 1 && v.stride[a] != like.stride[a]) return false;
  }
  return true;
}

// The view as one row of numel() entries from its first (stored_like a dense array).
View5 as_one_row(View5 v) {
  const int64_t total = v.numel();
  for (int a = 0; a < 4; ++a) v.shape[a] = 1, v.stride[a] = 0;
  v.shape[4] = total, v.stride[4] = 1;
  return v;
}

// Calls body(first, count) for the pieces of [0, total), runs of 2^14 entries, a task each.
template <typename Body>
int for_each_piece(int64_t total, int threads, const char* what, Body body) {
  constexpr int64_t kRun = int64_t{1} << 14;
  return run_tasks(ceil_div(total, kRun), threads, what,
                   [&](int64_t t) { body(t * kRun, std::min(kRun, total - t * kRun)); });
}

int convert_weights(const View5& from, const View5& to, int threads) {
  float* data = dense_float_data(to);
  if (stored_like(from, to)) {
    const View5 row = as_one_row(from);
    return for_each_piece(row.numel(), threads, "channels-last weights", [&](int64_t first, int64_t count) {
      read_row_floats(row, MathMode::kFull, 0, 0, 0, 0, first, 1, count, data + first);
    });
  }
  return for_each_tap_run(from, threads, "channels-last weights",
                          [&](int64_t co, int64_t ci, int64_t k0, int64_t count, float* taps) {
                            read_row_floats(from, MathMode::kFull, co, ci, 0, 0, k0, 1, count, taps);
                            for (int64_t k = 0; k < count; ++k) data[to.element(co, ci, 0, 0, k0 + k)] = taps[k];
                          });
}

// Whether BF16 dY and W (inputs as they are) take bf16 pair products (bf16_dot.h) for gradInput:
// pairs of output channels, side by side in dY's rows (unit channel stride, an even count).
bool input_pairs_apply(const ConvProblem& p) {
  return bf16_pair_products(p.dst, p.wei, p.math) && p.dst.stride[1] == 1 && p.geometry.dst_channels_per_group % 2 == 0;
}

// Whether a view holds its rows (position t, sample n) evenly spaced in t-major order, row t * N + n
// one sample stride after the one before it (ConvTbc's T x B x C tensors): then a tap's rows of every
// sample are one matrix, shifted by whole positions of N rows.
// (Rows of at least one channel, and N x T far within 64 bits: the view's elements are in memory.)
bool interleaved_rows(const View5& v) {
  return v.shape[0] > 1 && v.stride[0] > 0 && product_within(v.shape[0], v.shape[4], int64_t{1} << 58) &&
         v.stride[4] == v.shape[0] * v.stride[0];
}

// Per (sample, tile of positions): the tile's dX rows zeroed, then each tap's product added. Each
// tap's W_k is packed once per execution (every task multiplies by it). With bf16 pair products,
// dY's rows are read in place from the user's BF16 tensor, each tap's W_k packed in pairs.
// Interleaved rows (interleaved_rows: ConvTbc's) are tiled as one matrix of N x T rows instead, each
// tap's product over every sample's rows at once: the packed operand's slivers are then 8
// neighbouring rows, not 8 positions of one sample N rows apart (32 KiB with fairseq's B 16 x C 512).
// Each entry's chain (taps in order, output channels in order) is the same: so are the bits.
// A tile with FLOAT16/BF16 dY or dX goes in chunks of rows (kChunkFloats): each tap's dY rows of the
// chunk widened into a per-thread block, a 16-bit dX chunk summed in a per-thread float block and
// rounded into the user's view after the last tap (the same chains again).
class ChannelsLastInput final : public ConvStep {
 public:
  ChannelsLastInput(const ConvProblem& p, PlanBuilder& b) : p_(p), threads_(b.threads()), dot_(input_pairs_apply(p)) {
    const ConvGeometry& g = p.geometry;
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group;
    if (dot_ && p.wei.dtype != ACL_FLOAT) {  // pack_pairs_right reads float weights
      weights_ = b.book_scratch("channels_last.weights", static_cast<uint64_t>(p.wei.numel()), sizeof(float));
    }
    flat_ = !dot_ && interleaved_rows(p.dst) && interleaved_rows(p.grad_input);
    const int64_t rows = flat_ ? g.batch * g.src_size[2] : g.src_size[2];  // dX rows of a unit
    const int64_t tasks_per_unit =
        flat_ ? kTasksPerThread * threads_ : ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, g.batch));
    tile_ = std::max<int64_t>(1, ceil_div(rows, tasks_per_unit));
    tiles_ = ceil_div(rows, tile_);
    blocking_ = plan_gemm_blocking(tile_, cin, cout);
    // (a tile cut into equal chunks of at most kChunkFloats, or of one GEMM row block where that is
    // more: a small last chunk would multiply by all of W_k as often as a whole one does)
    const bool staged = !dot_ && p.dst.dtype != ACL_FLOAT, summed = p.grad_input.dtype != ACL_FLOAT;
    const int64_t chunk_rows = std::max<int64_t>(1, kChunkFloats / std::max(cin, cout));
    const int64_t most = std::max(blocking_.mc, chunk_rows / blocking_.mc * blocking_.mc);
    chunk_ = staged || summed ? ceil_div(tile_, ceil_div(tile_, most)) : tile_;
    if (staged) staged_ = b.book_scratch("channels_last.gradOutput_rows", chunk_ * cout, sizeof(float), threads_);
    if (summed) summed_ = b.book_scratch("channels_last.gradInput_rows", chunk_ * cin, sizeof(float), threads_);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    tap_floats_ = packed_right_floats(blocking_, cin, cout);
    if (dot_) {  // W_k in pairs; a chunk's dY row offsets; the pairs' channel offsets
      tap_floats_ = packed_pairs_right_words(cin, cout / 2);
      row_offsets_ = b.book_scratch("channels_last.row_offsets", chunk_, sizeof(int64_t), threads_);
      pair_offsets_ = b.book_scratch("channels_last.pair_offsets", cout / 2, sizeof(int64_t));
    }
    const int64_t taps = g.kernel[2], huge = int64_t{1} << 58;
    packed_ = b.book_scratch("channels_last.packed_weights",
                             product_within(taps, tap_floats_, huge) ? uint64_t(taps * tap_floats_) : UINT64_MAX,
                             sizeof(float));
  }
  int64_t tasks() const override { return flat_ ? tiles_ : p_.geometry.batch * tiles_; }
  std::string detail() const override {
    return isa_detail(blocking_) + (dot_ ? ":bf16_dot" : "") + (flat_ ? ":interleaved" : "") +
           (chunk_ < tile_ ? ":chunks=" + std::to_string(ceil_div(tile_, chunk_)) : "");
  }

  int run(const Workspace& w, const StepInputs&) const override {
    const ConvGeometry& g = p_.geometry;
    const View5 wei = weights_ >= 0 ? tbc_weight_view(p_.wei, w.at<float>(weights_)) : p_.wei;
    if (weights_ >= 0) {
      const int status = convert_weights(p_.wei, wei, threads_);
      if (status != ACLNN_SUCCESS) return status;
    }
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group, pairs = cout / 2;
    void* packed = w.at<float>(packed_);
    int status = run_tasks(g.kernel[2], threads_, "channels-last gradInput", [&](int64_t k) {  // W_k
      if (dot_) {  // in pairs (column ci of W_k: Cout floats)
        pack_pairs_right(dense_float_data(wei) + k * wei.stride[4], wei.stride[1], cin, pairs,
                         static_cast<uint32_t*>(packed) + k * tap_floats_, pairs, 0, 0);
      } else if (wei.dtype == ACL_FLOAT) {
        pack_right(blocking_, cout, cin, tap_matrix(wei, dense_float_data(wei), k),
                   static_cast<float*>(packed) + k * tap_floats_);
      } else {
        pack_tap_converted(wei, k, right_sliver_columns(blocking_), static_cast<float*>(packed) + k * tap_floats_);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    int64_t* pair_offsets = dot_ ? w.at<int64_t>(pair_offsets_) : nullptr;
    for (int64_t q = 0; q < (dot_ ? pairs : 0); ++q) pair_offsets[q] = 2 * q;
    const View5 &dy = p_.dst, &dx = p_.grad_input;
    const View5 dy_positions = positions_as_planes(dy), dx_positions = positions_as_planes(dx);  // a row per position
    const int64_t rows = flat_ ? g.batch * g.src_size[2] : g.src_size[2];
    const int64_t dy_rows = flat_ ? g.batch * g.dst_size[2] : g.dst_size[2], scale = flat_ ? g.batch : 1;
    return run_tasks(tasks(), threads_, "channels-last gradInput", [&](int64_t t) {
      const UnitRows unit{flat_, g.batch, flat_ ? 0 : t / tiles_};
      const int64_t r0 = t % tiles_ * tile_, r1 = std::min(rows, r0 + tile_);
      float* pack = w.at<float>(pack_, thread_index());
      float* staged = w.at<float>(staged_, thread_index());
      float* summed = w.at<float>(summed_, thread_index());
      int64_t* offsets = dot_ ? w.at<int64_t>(row_offsets_, thread_index()) : nullptr;
      for (int64_t c0 = r0; c0 < r1; c0 += chunk_) {
        const int64_t c1 = std::min(r1, c0 + chunk_);
        // dX rows [c0, c1) in place (float), or in `summed` (row r at (r - c0) * Cin)
        float* out = summed != nullptr ? summed : static_cast<float*>(dx.data) + unit.element(dx, c0);
        const int64_t ld = summed != nullptr ? cin : unit.stride(dx);
        for (int64_t r = c0; r < c1; ++r) std::fill_n(out + (r - c0) * ld, cin, 0.0f);
        for (int64_t k = 0; k < g.kernel[2]; ++k) {
          const int64_t shift = (g.pad[2] - k * g.dilation[2]) * scale;  // dY row of dX row r: r + shift
          const int64_t first = std::max(c0, -shift), last = std::min(c1, dy_rows - shift);
          if (first >= last) continue;
          float* c = out + (first - c0) * ld;
          // dX[first:last, :] (rows x Cin) += dY[first+shift : last+shift, :] (rows x Cout) * W_k (Cout x Cin)
          if (dot_) {  // dY's rows read in place from the user's BF16 tensor, in pairs of channels
            for (int64_t r = first; r < last; ++r) offsets[r - first] = unit.element(dy, r + shift);
            const PackedPairsRight w_k{static_cast<const uint32_t*>(packed) + k * tap_floats_, pairs, 0};
            bf16_dot_a_rows(blocking_, last - first, cin, pairs, static_cast<const uint16_t*>(dy.data), offsets,
                            pair_offsets, w_k, true, c, ld);
            continue;
          }
          for (int64_t r = first; r < last && staged != nullptr; ++r) {  // FLOAT16/BF16 rows widened
            read_row_floats(dy_positions, MathMode::kFull, unit.sample(r + shift), unit.position(r + shift), 0, 0, 0, 1,
                            cout, staged + (r - first) * cout);
          }
          const MatrixRef a = staged != nullptr ? MatrixRef{staged, cout, false}
                                                : MatrixRef{unit.floats(dy, first + shift), unit.stride(dy), false};
          sgemm(blocking_, pack, last - first, cin, cout, a,
                PackedRight{static_cast<const float*>(packed) + k * tap_floats_, cout}, true, c, ld);
        }
        for (int64_t r = c0; r < c1 && summed != nullptr; ++r) {
          store_plane_floats(summed + (r - c0) * cin, dx_positions, unit.sample(r), unit.position(r), 0, cin);
        }
      }
    });
  }

 private:
  ConvProblem p_;
  int threads_;
  bool dot_;           // bf16 pair products (input_pairs_apply): dY read in place, W_k packed in pairs
  bool flat_ = false;  // interleaved rows (interleaved_rows), tiled as one matrix
  WorkspaceLedger::Handle weights_ = -1;  // dot_'s FLOAT16/BF16 weights as floats (tbc_weight_view)
  int64_t tile_ = 1, tiles_ = 1, chunk_ = 1, tap_floats_ = 0;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;    // per thread
  WorkspaceLedger::Handle packed_ = -1;  // each tap's W_k as a PackedRight (dot_: PackedPairsRight)
  WorkspaceLedger::Handle row_offsets_ = -1, pair_offsets_ = -1;  // dot_: per thread; shared
  // Per thread: a chunk's FLOAT16/BF16 dY rows widened (chunk_ x Cout), a 16-bit dX chunk's sums (chunk_ x Cin)
  WorkspaceLedger::Handle staged_ = -1, summed_ = -1;
};

// Per (tap, block of result rows): the block's products over every sample, in sample order (time-major
// rows, interleaved_rows: one product over the N x T rows, positions in order, each position's
// samples in order, every operand's packed sliver from neighbouring rows). The
// result is W_k's gradient (Cout x Cin) or its transpose (Cin x Cout), whichever grad_weight's
// strides store row-major. The right operand (dY, or X) of each sample is packed once per execution
// when it fits kPackedBudget (every tap and block multiplies by a depth range of it); FLOAT16/BF16
// operands always are, both of them, converted as they are packed (their workspace is what float
// copies of them would take, and nothing else reads them).
//
// BF16 X and dY (inputs as they are) take bf16 pair products where the CPU has them (bf16_dot.h),
// pairs of positions: each sample's X as pairs of rows from an even row and from an odd row
// ([pair][channel] words: a tap's shift may be odd), dY as PackedPairsRight from even rows. A tap's
// range of dY rows is then an odd first row alone, pairs, and an odd last row alone (each with a
// zero partner), in that order.
bool weight_pairs_apply(const ConvProblem& p) {
  return bf16_pair_products(p.src, p.dst, p.math) && p.src.stride[1] == 1 && p.dst.stride[1] == 1 &&
         p.grad_weight.dtype != ACL_FLOAT;
}

class ChannelsLastWeight final : public ConvStep {
 public:
  ChannelsLastWeight(const ConvProblem& p, PlanBuilder& b)
      : p_(p),
        threads_(b.threads()),
        dot_(weight_pairs_apply(p)),
        converted_(!dot_ && (p.src.dtype != ACL_FLOAT || p.dst.dtype != ACL_FLOAT)) {
    const ConvGeometry& g = p.geometry;
    if (p.grad_weight.dtype != ACL_FLOAT) {  // computed as floats laid out as (K, Cin, Cout), then rounded
      result_ = b.book_scratch("channels_last.gradWeight", static_cast<uint64_t>(p.grad_weight.numel()), sizeof(float));
    }
    transposed_ = result_ >= 0 || unit_out(p.grad_weight);
    rows_ = transposed_ ? g.src_channels_per_group : g.dst_channels_per_group;
    cols_ = transposed_ ? g.dst_channels_per_group : g.src_channels_per_group;
    const int64_t wanted = ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, g.kernel[2]));
    block_ = std::max<int64_t>(1, std::min(rows_, std::max(kMinWeightRows, ceil_div(rows_, wanted))));
    blocks_ = ceil_div(rows_, block_);
    // Time-major rows: every sample's rows as one matrix, a tap's product over all of them.
    flat_ = !dot_ && interleaved_rows(p.src) && interleaved_rows(p.dst);
    units_ = flat_ ? 1 : g.batch, scale_ = flat_ ? g.batch : 1;
    blocking_ = plan_gemm_blocking(block_, cols_, saturating_product(g.dst_size[2], scale_));
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    depth_ = (transposed_ ? g.dst_size[2] : g.src_size[2]) * scale_;  // rows of the packed operand, per unit
    sample_floats_ = packed_right_floats(blocking_, cols_, depth_);
    const int64_t huge = int64_t{1} << 58;
    if (dot_) {
      plan_pairs(b);
    } else if (converted_ || product_within(units_, sample_floats_, kPackedBudget / 4)) {
      // (FLOAT16/BF16 operands are always packed: converted once, as they are packed)
      packed_ = b.book_scratch(
          "channels_last.packed_operand",
          product_within(units_, sample_floats_, huge) ? uint64_t(units_ * sample_floats_) : UINT64_MAX, sizeof(float));
      plan_packed_left(b);
    }
  }
  int64_t tasks() const override { return p_.geometry.kernel[2] * blocks_; }
  std::string detail() const override {
    return isa_detail(blocking_) + (transposed_ ? ":transposed" : "") + (dot_ ? ":bf16_dot" : "") +
           (flat_ ? ":interleaved" : "");
  }

  int run(const Workspace& w, const StepInputs&) const override {
    if (dot_) return run_pairs(w);
    const ConvGeometry& g = p_.geometry;
    const View5 &x = p_.src, &dy = p_.dst;
    const View5 out = result_ >= 0 ? tbc_weight_view(p_.grad_weight, w.at<float>(result_)) : p_.grad_weight;
    float* grad_weight = dense_float_data(out);
    const int64_t ldc = transposed_ ? out.stride[1] : out.stride[0];
    float* packed = packed_ >= 0 ? w.at<float>(packed_) : nullptr;
    float* packed_left = w.at<float>(packed_left_);
    int status = ACLNN_SUCCESS;
    if (packed != nullptr) {  // each unit's dY (T' x Cout) or X (T x Cin); and the other's transpose
      // (flat_: the one unit in pieces of rows, a task each)
      const int64_t pieces = flat_ ? kTargetTasks : 1;
      status = run_tasks(units_ * pieces, threads_, "channels-last gradWeight", [&](int64_t t) {
        const int64_t n = t / pieces, piece = t % pieces;
        const int64_t step = ceil_div(depth_, pieces), p0 = std::min(depth_, piece * step);
        pack_rows(transposed_ ? dy : x, n, p0, std::min(depth_, p0 + step), false, packed + n * sample_floats_, depth_);
        if (packed_left != nullptr) {
          const int64_t left_step = ceil_div(left_depth_, pieces), q0 = std::min(left_depth_, piece * left_step);
          pack_rows(transposed_ ? x : dy, n, q0, std::min(left_depth_, q0 + left_step), true,
                    packed_left + n * left_floats_, left_depth_);
        }
      });
      if (status != ACLNN_SUCCESS) return status;
    }
    status = run_tasks(tasks(), threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t k = t / blocks_, r0 = t % blocks_ * block_, r1 = std::min(rows_, r0 + block_);
      float* c = grad_weight + k * out.stride[4] + r0 * ldc;
      float* pack = w.at<float>(pack_, thread_index());
      const int64_t shift = k * g.dilation[2] - g.pad[2];  // source row of dY row t: t + shift
      const int64_t first = std::max<int64_t>(0, -shift), last = std::min(g.dst_size[2], g.src_size[2] - shift);
      bool written = false;
      for (int64_t n = 0; n < units_ && first < last; ++n, written = true) {
        // transposed: C (rows x Cout) += X[first+shift : last+shift, r0:r1]^T (rows x T') * dY[first:last, :] (T' x
        // Cout) else:       C (rows x Cin)  += dY[first:last, r0:r1]^T (rows x T') * X[first+shift : last+shift, :] (T'
        // x Cin)
        // (flat_: positions of all samples, scale_ rows each)
        const int64_t x0 = (first + shift) * scale_, d0 = first * scale_, count = (last - first) * scale_;
        const PackedRight right{packed + n * sample_floats_, depth_, transposed_ ? d0 : x0};
        if (packed_left != nullptr) {  // rows r0.. start a sliver (block_ is a multiple of MR)
          const PackedLeft left{packed_left + n * left_floats_ + r0 * left_depth_, left_depth_, transposed_ ? x0 : d0};
          sgemm(blocking_, r1 - r0, cols_, count, left, right, written, c, ldc);
          continue;
        }
        // (float operands only: FLOAT16/BF16 ones are always packed, both)
        const UnitRows unit{flat_, g.batch, n};
        const MatrixRef xs{unit.floats(x, x0), unit.stride(x), transposed_};
        const MatrixRef ds{unit.floats(dy, d0), unit.stride(dy), !transposed_};
        const MatrixRef a = transposed_ ? xs : ds, bm = transposed_ ? ds : xs;
        const MatrixRef rows{a.data + r0, a.ld, true};
        if (packed != nullptr) {
          sgemm(blocking_, pack, r1 - r0, cols_, count, rows, right, written, c, ldc);
        } else {
          sgemm(blocking_, pack, r1 - r0, cols_, count, rows, bm, written, c, ldc);
        }
      }
      if (!written) {  // no sample, or the tap never meets the source
        for (int64_t r = 0; r < r1 - r0; ++r) std::fill_n(c + r * ldc, cols_, 0.0f);
      }
    });
    if (status != ACLNN_SUCCESS || result_ < 0) return status;
    return store_result(w);
  }

 private:
  // The float result (tbc_weight_view) rounded into the user's gradWeight, each (Cout, Cin)'s K taps.
  int store_result(const Workspace& w) const {
    const View5 out = tbc_weight_view(p_.grad_weight, w.at<float>(result_));
    const float* grad_weight = dense_float_data(out);
    const View5& user = p_.grad_weight;
    if (stored_like(user, out)) {
      const View5 row = as_one_row(user);
      return for_each_piece(row.numel(), threads_, "channels-last gradWeight", [&](int64_t first, int64_t count) {
        store_plane_floats(grad_weight + first, row, 0, 0, first, count);
      });
    }
    return for_each_tap_run(user, threads_, "channels-last gradWeight",
                            [&](int64_t co, int64_t ci, int64_t k0, int64_t count, float* taps) {
                              for (int64_t k = 0; k < count; ++k)
                                taps[k] = grad_weight[out.element(co, ci, 0, 0, k0 + k)];
                              store_plane_floats(taps, user, co, ci, k0, count);
                            });
  }

  // Rows [p0, p1) of unit n's X or dY (its positions x channels) into depths [p0, p1) of a PackedLeft
  // of its transpose (`left`: rows_ channels) or a PackedRight of it (cols_ channels) of `depth`:
  // FLOAT16/BF16 rows converted as they are packed.
  void pack_rows(const View5& v, int64_t n, int64_t p0, int64_t p1, bool left, float* out, int64_t depth) const {
    const UnitRows unit{flat_, p_.geometry.batch, n};
    if (v.dtype != ACL_FLOAT) {
      pack_rows_converted(v, unit, p0, p1, left ? left_sliver_rows(blocking_) : right_sliver_columns(blocking_), out,
                          depth);
    } else if (p1 > p0 && left) {
      pack_left(blocking_, rows_, p1 - p0, MatrixRef{unit.floats(v, p0), unit.stride(v), true}, out, depth, p0);
    } else if (p1 > p0) {
      pack_right(blocking_, p1 - p0, cols_, MatrixRef{unit.floats(v, p0), unit.stride(v), false}, out, depth, p0);
    }
  }

  // The left operand (X^T, transposed_, or dY^T: rows_ x positions) of every sample packed once as
  // well, where it fits the budget beside the right ones: each tap reads it at its own depth offset,
  // instead of every (tap, block) task packing its rows again (K times over in all). Its blocks of
  // rows then start slivers: block_ a multiple of MR (the blocking changes no bit).
  void plan_packed_left(PlanBuilder& b) {
    const ConvGeometry& g = p_.geometry;
    left_depth_ = (transposed_ ? g.src_size[2] : g.dst_size[2]) * scale_;
    left_floats_ = packed_left_floats(blocking_, rows_, left_depth_);
    const int64_t budget = kPackedBudget / 4 - units_ * sample_floats_;
    if (!converted_ && (g.kernel[2] < 2 || !product_within(units_, left_floats_, budget))) return;
    const int64_t mr = left_sliver_rows(blocking_);
    block_ = std::max(mr, block_ / mr * mr);  // (rounded down: no fewer tasks)
    blocks_ = ceil_div(rows_, block_);
    packed_left_ = b.book_scratch(
        "channels_last.packed_left",
        product_within(units_, left_floats_, int64_t{1} << 58) ? uint64_t(units_ * left_floats_) : UINT64_MAX,
        sizeof(float));
  }

  // dot_'s workspace: X's pairs of rows (both parities) and dY's PackedPairsRight for every sample,
  // the pair columns, and per thread a block's row offsets and a single row's pairs with zero partners.
  void plan_pairs(PlanBuilder& b) {
    const ConvGeometry& g = p_.geometry;
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group, huge = int64_t{1} << 58;
    x_pairs_ = ceil_div(g.src_size[2], 2), dy_pairs_ = ceil_div(g.dst_size[2], 2);
    x_words_ = product_within(2 * x_pairs_, cin, huge) ? 2 * x_pairs_ * cin : huge;
    dy_words_ = packed_pairs_right_words(cout, dy_pairs_);
    packed_x_ = b.book_scratch("channels_last.input_pairs",
                               product_within(g.batch, x_words_, huge) ? uint64_t(g.batch * x_words_) : UINT64_MAX,
                               sizeof(uint32_t));
    packed_ = b.book_scratch("channels_last.gradOutput_pairs",
                             product_within(g.batch, dy_words_, huge) ? uint64_t(g.batch * dy_words_) : UINT64_MAX,
                             sizeof(uint32_t));
    pair_columns_ = b.book_scratch("channels_last.pair_columns", dy_pairs_, sizeof(int64_t));
    block_rows_ = b.book_scratch("channels_last.block_rows", block_, sizeof(int64_t), threads_);
    single_x_ = b.book_scratch("channels_last.single_input", cin, sizeof(uint32_t), threads_);
    single_dy_ =
        b.book_scratch("channels_last.single_gradOutput", round_up(cout, kBf16DotColumns), sizeof(uint32_t), threads_);
  }

  // dot_'s run: C (Cin x Cout rows r0..r1 of tap k's dW^T) += X[t + shift, r0:r1]^T * dY[t, :] over each
  // sample's rows t in pairs, X's pairs read in place.
  int run_pairs(const Workspace& w) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group;
    const auto* x16 = static_cast<const uint16_t*>(p_.src.data);
    const auto* dy16 = static_cast<const uint16_t*>(p_.dst.data);
    auto x_row = [&](int64_t n, int64_t t) { return x16 + p_.src.element(n, 0, 0, 0, t); };
    auto dy_row = [&](int64_t n, int64_t t) { return dy16 + p_.dst.element(n, 0, 0, 0, t); };
    uint32_t* packed_x = w.at<uint32_t>(packed_x_);
    uint32_t* packed_dy = w.at<uint32_t>(packed_);
    // X: pair q of parity `par` holds rows 2q + par and 2q + par + 1 (zero past the last row).
    int status = run_tasks(g.batch * 2, threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t n = t / 2, par = t % 2;
      uint32_t* out = packed_x + n * x_words_ + par * x_pairs_ * cin;
      for (int64_t q = 0; q < x_pairs_; ++q, out += cin) {
        const int64_t row = 2 * q + par;
        const uint16_t* even = row < g.src_size[2] ? x_row(n, row) : nullptr;
        const uint16_t* odd = row + 1 < g.src_size[2] ? x_row(n, row + 1) : nullptr;
        for (int64_t c = 0; c < cin; ++c) out[c] = bf16_pair(even ? even[c] : 0, odd ? odd[c] : 0);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(g.batch, threads_, "channels-last gradWeight", [&](int64_t n) {  // dY in slivers of 32 columns
      for (int64_t q = 0; q < dy_pairs_; ++q) {
        const uint16_t* even = dy_row(n, 2 * q);
        const uint16_t* odd = 2 * q + 1 < g.dst_size[2] ? dy_row(n, 2 * q + 1) : nullptr;
        for (int64_t j0 = 0; j0 < cout; j0 += kBf16DotColumns) {
          uint32_t* to = packed_dy + n * dy_words_ + j0 * dy_pairs_ + q * kBf16DotColumns;
          for (int64_t j = j0; j < j0 + kBf16DotColumns; ++j)
            to[j - j0] = j < cout ? bf16_pair(even[j], odd ? odd[j] : 0) : 0;
        }
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    int64_t* columns = w.at<int64_t>(pair_columns_);
    for (int64_t q = 0; q < dy_pairs_; ++q) columns[q] = 2 * q * cin;  // pair q of X's pairs (in BF16 entries)
    float* grad_weight = w.at<float>(result_);                         // (K, Cin, Cout) floats
    status = run_tasks(tasks(), threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t k = t / blocks_, r0 = t % blocks_ * block_, r1 = std::min(rows_, r0 + block_);
      float* c = grad_weight + (k * cin + r0) * cout;
      const int64_t shift = k * g.dilation[2] - g.pad[2];  // source row of dY row t: t + shift
      const int64_t first = std::max<int64_t>(0, -shift), last = std::min(g.dst_size[2], g.src_size[2] - shift);
      const int64_t par = (shift % 2 + 2) % 2;
      int64_t* rows = w.at<int64_t>(block_rows_, thread_index());
      for (int64_t r = r0; r < r1; ++r) rows[r - r0] = 2 * r;
      auto* single_x = w.at<uint32_t>(single_x_, thread_index());
      auto* single_dy = w.at<uint32_t>(single_dy_, thread_index());
      bool written = false;
      // C += X[t + shift, r0:r1]^T dY[t, :] for one row t alone (its pairs' partners zero).
      auto single = [&](int64_t n, int64_t row) {
        const uint16_t *x = x_row(n, row + shift), *dy = dy_row(n, row);
        for (int64_t r = r0; r < r1; ++r) single_x[r] = bf16_pair(x[r], 0);
        for (int64_t j = 0; j < round_up(cout, kBf16DotColumns); ++j) single_dy[j] = j < cout ? bf16_pair(dy[j], 0) : 0;
        bf16_dot_a_rows(blocking_, r1 - r0, cout, 1, reinterpret_cast<const uint16_t*>(single_x), rows, columns,
                        PackedPairsRight{single_dy, 1, 0}, written, c, cout);
        written = true;
      };
      for (int64_t n = 0; n < g.batch && first < last; ++n) {
        int64_t row = first;
        if (row % 2 == 1) single(n, row++);
        const int64_t q0 = row / 2, q1 = last / 2;  // pairs of dY rows (2q, 2q + 1), q0 <= q < q1
        if (q1 > q0) {
          // C (rows x Cout) += X^T (rows x 2(q1-q0)) * dY (2(q1-q0) x Cout): X's rows 2q + shift, + 1 are
          // pair q + (shift - par) / 2 of parity par.
          const uint16_t* x_base = reinterpret_cast<const uint16_t*>(packed_x + n * x_words_ + par * x_pairs_ * cin) +
                                   (q0 + (shift - par) / 2) * 2 * cin;
          bf16_dot_a_rows(blocking_, r1 - r0, cout, q1 - q0, x_base, rows, columns,
                          PackedPairsRight{packed_dy + n * dy_words_, dy_pairs_, q0}, written, c, cout);
          written = true;
        }
        if (2 * q1 < last) single(n, last - 1);
      }
      if (!written) {  // no sample, or the tap never meets the source
        for (int64_t r = 0; r < r1 - r0; ++r) std::fill_n(c + r * cout, cout, 0.0f);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    return store_result(w);
  }

  ConvProblem p_;
  int threads_;
  bool dot_;                             // bf16 pair products (weight_pairs_apply)
  bool converted_;                       // FLOAT16/BF16 X or dY (not dot_): both operands packed, converted as they are
  WorkspaceLedger::Handle result_ = -1;  // a FLOAT16/BF16 gradWeight as floats (tbc_weight_view)
  // dot_: pairs per parity of X's rows and of dY's, words per sample of each; their regions (dY's is
  // packed_), the pair columns, and per thread the block's row offsets and a single row's pairs.
  int64_t x_pairs_ = 0, dy_pairs_ = 0, x_words_ = 0, dy_words_ = 0;
  WorkspaceLedger::Handle packed_x_ = -1, pair_columns_ = -1, block_rows_ = -1, single_x_ = -1, single_dy_ = -1;
  bool transposed_ = false;
  int64_t rows_ = 0, cols_ = 0, block_ = 1, blocks_ = 1, depth_ = 0, sample_floats_ = 0;
  // flat_ (time-major rows, interleaved_rows): one unit of N x T rows, scale_ = N rows per
  // position; else a unit per sample, a row per position.
  bool flat_ = false;
  int64_t units_ = 1, scale_ = 1;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;         // per thread
  WorkspaceLedger::Handle packed_ = -1;       // each sample's right operand as a PackedRight, or none
  WorkspaceLedger::Handle packed_left_ = -1;  // each sample's left operand as a PackedLeft, or none
  int64_t left_depth_ = 0, left_floats_ = 0;
};

// (Empty tensors, whose data may be null, are left to `gemm`.)
Support supports_input(const ConvProblem& p, const CpuFeatures&) {
  if (p.dst.numel() <= 0 || p.wei.numel() <= 0 || p.grad_input.numel() <= 0) return refuse("empty");
  if (p.input_grad != InputGrad::kBackwardData) return refuse("transposed layer");
  if (!geometry_fits(p)) return refuse("not a 1-D stride-1 layer of one group in full precision");
  if (!rows_view(p.dst, false) || !rows_view(p.grad_input, true)) return refuse("not channels-last rows");
  if (!matrix_view(p.wei)) return refuse("weight not a matrix per tap");
  return kSupported;
}
Support supports_weight(const ConvProblem& p, const CpuFeatures&) {
  const View5& out = p.grad_weight;
  const bool stored = out.shape[0] == 1 || out.shape[1] == 1 || out.stride[0] == 1 || out.stride[1] == 1;
  if (p.src.numel() <= 0 || p.dst.numel() <= 0 || out.numel() <= 0) return refuse("empty");
  if (!geometry_fits(p)) return refuse("not a 1-D stride-1 layer of one group in full precision");
  if (!rows_view(p.src, false) || !rows_view(p.dst, false)) return refuse("not channels-last rows");
  if (!float_or_half(out) || (!stored && out.dtype == ACL_FLOAT) || may_overlap(out))
    return refuse("gradWeight view not stored by taps");
  return kSupported;
}

std::unique_ptr<ConvStep> plan_input(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<ChannelsLastInput>(p, builder);
}
std::unique_ptr<ConvStep> plan_weight(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<ChannelsLastWeight>(p, builder);
}

}  // namespace

extern const ConvImpl kChannelsLastInputGrad = {"channels_last", "channels_last", Gradient::kInput, supports_input,
                                                plan_input};
extern const ConvImpl kChannelsLastWeightGrad = {"channels_last", "channels_last", Gradient::kWeight, supports_weight,
                                                 plan_weight};

}  // namespace aclnn_cpu
