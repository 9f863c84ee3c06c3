// How the GEMM gradWeight entries (gemm_weight_grad.cpp) cut their work, from the geometry alone:
// the split into chunks of the reduction and blocks of rows (which fixes the order of the sums),
// and whether X may be read from padded windows per band (gemm_weight_windows); and the variant of
// loops and operand layouts a problem then takes (choose_weight_variant).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "acl/acl_base.h"
#include "kernels/common/im2col.h"
#include "kernels/common/pack.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/padded_window.h"
#include "kernels/matmul/bf16_pairs.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace gemm_weight {

constexpr int64_t kMinChunkPositions = 512;           // reduction length per chunk, at least
constexpr int64_t kMinRowBlock = 64;                  // column-matrix rows per task when row blocks come first
constexpr int64_t kRowBlockUnit = 16;                 // row blocks are multiples of it (AVX-512: half a micro-tile)
constexpr int64_t kPackedBudget = int64_t{32} << 20;  // bytes of dY packed once for all tasks
constexpr int64_t kTransposedMinLength = 4096;        // (sample, position) pairs per group for transposed products
constexpr int64_t kMaxBatch = 16;                     // bands per such product, at most
// The choices below cut the sums (a transposed product per band, or bands batched; dY packed once or
// not), so they read the geometry and these constants, never the micro-kernel's MR or NR: the same
// order on every instruction set.
constexpr int64_t kSliverRowsForBudget = 8;  // dY's channels rounded up to this for the packing budget
constexpr int64_t kTransposedColumns = 16;   // Cout_g filling whole multiples of this goes transposed

// How a gradWeight is cut into tasks, from the geometry alone (the sums' order depends on it).
struct WeightSplit {
  int64_t chunks = 1, block = 1, blocks = 1, tile = 1;
  GemmBlocking blocking;
  bool depth_major = false;    // row blocks may tile the kernel depths' slabs (depth_major_row)
  int64_t block_channels = 1;  // X channels a row block reads, at most
  int64_t weight_floats = 1;   // dW's floats
  int64_t length = 0;          // the reduction's (sample, position) pairs, per group
};

inline WeightSplit split_weight_grad(const ConvGeometry& g, const CpuFeatures& cpu) {
  const Shape s(g);
  WeightSplit out;
  out.weight_floats = std::max<int64_t>(1, s.groups * s.cout * s.rows());
  out.length = saturating_product(s.n, s.dst_plane);  // the reduction, per group
  const int64_t weight_floats = out.weight_floats, length = out.length;
  // The split: row blocks of at least kMinRowBlock rows and chunks of the reduction, for
  // kTargetTasks tasks. Each chunk after the first costs a partial dW written and added back; each
  // row block reads all of dY again. When dY is small enough to be packed once (below), row blocks
  // come first (reading a packed dY again is cheap); otherwise chunks do (each task would pack its
  // dY again), bounded by the partials' memory and a useful chunk length. (The choice depends on
  // the geometry alone, as the sums' order must.)
  const bool rows_first = product_within(s.groups * s.cout, length, kPackedBudget / 4);
  const int64_t most_chunks =
      std::min(1 + kPartialBudget / 4 / weight_floats, std::max<int64_t>(1, length / kMinChunkPositions));
  int64_t wanted_blocks = 1;
  if (rows_first) {
    wanted_blocks = std::clamp<int64_t>(s.rows() / kMinRowBlock, 1, pieces_for_tasks(s.groups));
  } else {
    out.chunks = std::min(pieces_for_tasks(s.groups), most_chunks);
    wanted_blocks = pieces_for_tasks(s.groups * out.chunks);
  }
  // (One block wanted: all the rows, not a block of whole units and a sliver of the rest, which
  // would read its chunk of dY again for a few rows.)
  out.block =
      wanted_blocks == 1 ? s.rows() : std::max(kRowBlockUnit, s.rows() / wanted_blocks / kRowBlockUnit * kRowBlockUnit);
  out.block = std::max<int64_t>(1, std::min(out.block, s.rows()));
  out.blocks = ceil_div(s.rows(), out.block);
  if (rows_first) out.chunks = std::min(pieces_for_tasks(s.groups * out.blocks), most_chunks);
  out.tile = s.tile(out.block);
  out.blocking = plan_gemm_blocking(s.cout, out.block, std::min(out.tile, ceil_div(length, out.chunks)), cpu);
  // X: read from padded windows per band, or staged per piece (the channels of a row block, the
  // window of a tile of positions), or from a dense float copy.
  // (A kernel of no taps has no rows, hence no tasks: count it as one tap here.)
  // Transposed products from windows of kernels deeper than one plane may take their rows in
  // depth-major order (depth_major_row) where the row blocks tile the kernel depths' slabs: a band
  // next to X's front or back then skips the blocks whose taps read only padding (and stages
  // only its block's slab). A block then spans more channels.
  const int64_t slab = s.cin * g.kernel[1] * g.kernel[2];
  out.depth_major = g.kernel[0] > 1 && out.block < s.rows() && slab % out.block == 0;
  const int64_t block_taps = out.depth_major ? g.kernel[1] * g.kernel[2] : s.kernel_volume;
  out.block_channels = std::min(s.cin, ceil_div(out.block, std::max<int64_t>(1, block_taps)) + 1);
  return out;
}

// Where X may be read from padded windows per band (padded_windows_apply; not a 1x1 kernel of stride
// 1, whose source is its column matrix), the bands for `split`, each block's window within the
// staging budget.
inline Support window_bands(const ConvGeometry& g, const WeightSplit& split, BandTiling* bands) {
  const Shape s(g);
  if (s.n <= 0) return refuse("empty");
  if (!padded_windows_apply(g)) return refuse("strides or dilation that padded windows do not serve");
  if (columns_are_source(g)) return refuse("1x1 kernel of stride 1: its source is its column matrix");
  // Bands of about a tile, and enough of them for every chunk.
  *bands = BandTiling(g, std::max(ceil_div(s.dst_plane, split.tile), ceil_div(split.chunks, s.n)), kColumnBudget / 16);
  if (!product_within(s.n, bands->bands(), int64_t{1} << 40) || s.n * bands->bands() < split.chunks)
    return refuse("fewer bands than chunks");
  if (!product_within(split.block_channels, bands->channel_floats(), kStagingBudget))
    return refuse("a block's window past the staging budget");
  return kSupported;
}

// The variant of the GEMM gradWeight a problem takes (its verbose flags in brackets): the loops and
// operand layouts of one split. Each product is a blocked sum over its positions (blocked_sum.h),
// added to the chunk's partial: the variant decides where products start (a tile, a band, a batch of
// bands), so it is chosen from the geometry and constants alone. `windows`: X read from
// padded windows per band (`bands`, `window_floats` per band); `x_staged`: else X staged per piece.
struct WeightVariant {
  GemmBlocking blocking;           // the split's, or re-planned for batched bands
  int64_t tile = 1;                // positions per tile (even for pair products of a 1x1 source)
  int64_t batch = 1;               // [:bands=] consecutive bands per product
  bool x_staged = false;           // X staged per piece
  bool dy_dense = false;           // dY read as a dense float array
  bool pack_once = false;          // dY packed once for all tasks
  AmxTiles amx = AmxTiles::kNone;  // [:amx, :amx_avx512bf16, :amx_fma, :amx_emulated] BF16 pair products in
                                   // the AMX tiles' order (kernels/amx/amx.h), on these tiles
  bool paired() const { return amx != AmxTiles::kNone; }
  bool transposed = false;     // [:transposed] dW^T = cols dY^T, cols read in place
  bool depth_major = false;    // [:depth_major] transposed rows in depth-major order
  bool bf16_in_place = false;  // [:bf16_rows] a BF16 1x1 X read in place, widened as broadcast
  bool rounds_blocks = false;  // a dense 16-bit dW rounded as its partials are added
  bool narrows_sums = false;   // [:narrowed] ... or by the micro-kernel from one chunk's products
  ChoiceReasons reasons;       // the choices taken, for the verbose mode
};

inline WeightVariant choose_weight_variant(const ConvProblem& p, const CpuFeatures& cpu, const WeightSplit& split,
                                           bool windows, const BandTiling& bands, int64_t window_floats,
                                           bool x_staged) {
  const ConvGeometry& g = p.geometry;
  const std::string& forced = p.forced_choices;
  const Shape s(g);
  WeightVariant v;
  v.blocking = split.blocking, v.tile = split.tile;
  v.x_staged = take_choice(forced, "x_staged", x_staged, true);
  // dY is an operand of every task's GEMMs, and each row block would pack it again: pack it
  // once (when it is more than one row per group, and within budget or else copied anyway),
  // reading it from the user's view when it is not a dense float array.
  const int64_t group_floats = sliver_entries(s.cout, kSliverRowsForBudget, split.length);
  v.dy_dense = float_in_place(p.dst, p.math);
  // (Sizes that would not fit in 2^60 bytes take the dense copy, whose booking reports them.)
  const int64_t huge = int64_t{1} << 58;
  const bool pack_fits = product_within(s.groups, group_floats, kPackedBudget / 4);
  const bool pack_huge =
      product_within(s.groups, group_floats, huge) && product_within(kSliverRowsForBudget, s.dst_plane, huge);
  v.pack_once =
      take_choice(forced, "pack_once", s.cout > 1 && (pack_fits || pack_huge), pack_fits || (!v.dy_dense && pack_huge));
  // With padded windows, the products are transposed, dW^T (rows x Cout_g) = cols (rows x positions)
  // * dY^T (positions x Cout_g): cols read in place from the window (sgemm_a_rows), dY^T packed once,
  // nothing packed per band: a product per band (or tile). Where Cout_g fills whole multiples of
  // kTransposedColumns (within 1/8), and the reduction is long enough
  // (kTransposedMinLength) for the pass that adds the transposed partials into dW to be cheap.
  // BF16 X and dY (used as they are) take them in pair products in the AMX tiles' order where the CPU
  // runs it (amx.h), at any length (nothing else multiplies in pairs here): pairs of consecutive
  // positions, so every band an even number of positions wide (then pairs never straddle output
  // rows, nor bands, nor samples), Cout_g within 1/8 of whole blocks of 32 columns.
  const bool pair_columns_fill = round_up(s.cout, kAmxBlock) * 8 <= s.cout * 9;
  const bool columns_fill = round_up(s.cout, kTransposedColumns) * 8 <= s.cout * 9;
  // A 1x1 kernel's X is read in place from the user's tensor (planes contiguous, of even size; tiles
  // of an even count).
  const bool pointwise_pairs = columns_are_source(g) && planes_contiguous(p.src) && s.dst_plane % 2 == 0;
  const AmxTiles amx = amx_pair_products(cpu.pairs, p.src, p.dst, p.math);
  // (Pair products are always transposed: not where transposed products are forced off.)
  const bool pairs_fit = amx != AmxTiles::kNone && v.pack_once && (windows ? bands.even_widths() : pointwise_pairs) &&
                         take_choice(forced, "transposed", true, true);
  v.amx = take_choice(forced, "pairs", pairs_fit, pair_columns_fill) ? amx : AmxTiles::kNone;
  if (v.paired() && !windows) {
    v.x_staged = false;
    v.tile = std::max<int64_t>(2, v.tile / 2 * 2);
  }
  // A 1x1 kernel's source is its column matrix: its rows are read in place the same way. (Pair products
  // are always transposed.)
  const bool transposable = (windows || columns_are_source(g)) && v.pack_once;
  v.transposed = v.paired() ||
                 take_choice(forced, "transposed", transposable, columns_fill && split.length >= kTransposedMinLength);
  v.depth_major = take_choice(forced, "depth_major", split.depth_major && windows && v.transposed && !v.paired(), true);
  // A BF16 1x1 source in float products: X's rows read in place by a micro-kernel that widens each
  // entry as it broadcasts it (sgemm_a_rows_bf16), reading X from memory under the multiply-adds as
  // it does float X, instead of staging each piece's rows first (a pass of its own, bound by
  // memory). The same values, so the same bits. (A piece whose first entry is the tensor's first
  // element is still staged: the kernel reads the 16 bits below each entry.)
  v.bf16_in_place =
      take_choice(forced, "bf16_rows",
                  v.x_staged && v.transposed && !v.paired() && columns_are_source(g) && p.src.dtype == ACL_BF16 &&
                      p.math == MathMode::kFull && planes_contiguous(p.src) && converts_in_registers(v.blocking),
                  true);
  // Float products from windows, not transposed: consecutive bands whose positions follow each other
  // in the packed dY are multiplied as one product up to the depth of the GEMM's packed blocks (its
  // kc, one group of the blocked sums), their windows staged side by side, so that each load and
  // store of the sums' tiles serves that many positions (a band of a single 7 x 7 plane is only 49),
  // and the sums' groups are that long.
  if (take_choice(forced, "bands", windows && !v.transposed && !v.paired() && v.pack_once, true)) {
    const int64_t depth_block = plan_gemm_blocking(s.cout, split.block, split.length, cpu).kc;
    v.batch = std::clamp<int64_t>(depth_block / bands.columns(), 1, kMaxBatch);
    while (v.batch > 1 && !product_within(v.batch, window_floats, kStagingBudget)) --v.batch;
    v.blocking = plan_gemm_blocking(s.cout, split.block,
                                    std::min(v.batch * bands.columns(), ceil_div(split.length, split.chunks)), cpu);
  }
  // A dense FLOAT16 or BF16 dW summed from partials is rounded into the user's tensor by the pass that
  // adds them, block by block while each is in cache (round_into_weights), not staged whole as floats
  // and rounded in a pass of its own: transposed partials through that pass's 64 x 64 blocks (no float
  // dW booked), several chunks' partials span by span (chunk 0's sums still in a float dW).
  // Depth-major rows are not runs of dW: staged.
  const bool dense16 =
      (p.grad_weight.dtype == ACL_FLOAT16 || p.grad_weight.dtype == ACL_BF16) && is_dense(p.grad_weight);
  v.rounds_blocks =
      take_choice(forced, "rounds_blocks", dense16 && !v.depth_major && (v.transposed || split.chunks > 1), true);
  // One chunk's sums, not transposed, are rounded by the micro-kernel as it computes them (where it
  // can, from a packed dY): a task sums its row block into a buffer of its own (Cout_g x block floats,
  // in L2), and its last product's whole tiles go narrowed into dW, their stores spread among the
  // multiply-adds as float dW's are (the rest rounded from the buffer): no float dW booked, no pass
  // over it. (Each task rounding its row block in a pass of its own would read short runs of dW far
  // apart: slower than one in-order pass.)
  v.narrows_sums = take_choice(
      forced, "narrowed",
      dense16 && !v.transposed && split.chunks == 1 && v.pack_once && converts_in_registers(v.blocking), true);
  const auto take = [&](bool taken, const char* choice, const char* why) {
    v.reasons.note(forced, taken, choice, why);
  };
  take(v.pack_once, "pack_once", "dY packed once for every task");
  take(v.x_staged, "x_staged", "X staged per piece from its view");
  take(v.paired(), "pairs", "BF16 X and dY in the AMX tiles' order");
  take(v.transposed, "transposed", v.paired() ? "pair products" : "Cout_g fills blocks of 16 over a long reduction");
  take(v.depth_major, "depth_major", "row blocks tile the kernel depths' slabs");
  take(v.bf16_in_place, "bf16_rows", "a BF16 1x1 source read in place");
  take(v.batch > 1, "bands", "consecutive bands batched up to the GEMM's depth block");
  take(v.rounds_blocks, "rounds_blocks", "a dense 16-bit dW rounded as its partials are added");
  take(v.narrows_sums, "narrowed", "one chunk's sums narrowed by the micro-kernel");
  return v;
}

// What the GEMM gradWeight entries decide in supports() and plan from: the split, where X is read
// (padded windows per band, staged per piece, or a dense float copy) and the variant.
struct WeightDecision final : EntryDecision {
  WeightSplit split;
  // X read from padded windows per band (gemm_weight_windows: padded_window.h), each chunk whole bands
  // (chunk c sums bands [B*c/chunks, B*(c+1)/chunks) of the B = N x bands per sample, each band's
  // positions in order), a row block's window within the staging budget; else from tiles (staged per
  // piece, the columns written into the GEMM's packed panels, or a dense float copy).
  bool windows = false;
  BandTiling bands;           // ... these bands
  int64_t window_floats = 0;  // ... floats of one band's window (a row block's channels)
  WeightVariant variant;
  std::string describe() const override { return variant.reasons.text; }
};

// gemm_weight_windows' decision (`windows`: refused where padded windows do not serve the geometry)
// or gemm_weight_tiles' (any problem).
inline Support decide_weight(const ConvProblem& p, const CpuFeatures& cpu, bool windows) {
  WeightDecision d;
  d.split = split_weight_grad(p.geometry, cpu);
  bool x_staged = false;
  if (windows) {
    const Support fits = window_bands(p.geometry, d.split, &d.bands);
    if (!fits) return fits;
    d.windows = true;
    d.window_floats = d.split.block_channels * d.bands.channel_floats();
  } else {
    x_staged = stage_from_view(p.src, p.math) &&
               product_within(d.split.block_channels, max_source_window(p.geometry, d.split.tile), kStagingBudget);
  }
  d.variant = choose_weight_variant(p, cpu, d.split, d.windows, d.bands, d.window_floats, x_staged);
  return supported_as(std::move(d));
}

}  // namespace gemm_weight
}  // namespace aclnn_cpu
