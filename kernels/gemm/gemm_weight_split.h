// How the GEMM gradWeight entries (gemm_weight_grad.cpp) cut their work, from the geometry alone:
// the split into chunks of the reduction and blocks of rows (which fixes the order of the sums),
// and whether X may be read from padded windows per band (gemm_weight_windows).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/im2col.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/padded_window.h"
#include "kernels/gemm/sgemm.h"

namespace aclnn_cpu {
namespace gemm_weight {

constexpr int64_t kMinChunkPositions = 512;           // reduction length per chunk, at least
constexpr int64_t kMinRowBlock = 64;                  // column-matrix rows per task when row blocks come first
constexpr int64_t kRowBlockUnit = 16;                 // row blocks are multiples of it (AVX-512: half a micro-tile)
constexpr int64_t kPackedBudget = int64_t{32} << 20;  // bytes of dY packed once for all tasks

// How a gradWeight is cut into tasks, from the geometry alone (the sums' order depends on it).
struct WeightSplit {
  int64_t chunks = 1, block = 1, blocks = 1, tile = 1;
  GemmBlocking blocking;
  bool depth_major = false;    // row blocks may tile the kernel depths' slabs (depth_major_row)
  int64_t block_channels = 1;  // X channels a row block reads, at most
  int64_t weight_floats = 1;   // dW's floats
  int64_t length = 0;          // the reduction's (sample, position) pairs, per group
};

inline WeightSplit split_weight_grad(const ConvGeometry& g) {
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
  out.blocking = plan_gemm_blocking(s.cout, out.block, std::min(out.tile, ceil_div(length, out.chunks)));
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

}  // namespace gemm_weight
}  // namespace aclnn_cpu
