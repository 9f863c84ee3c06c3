// The loops of winograd_forward's F(2x2, 3x3) transforms over a row of tiles, one set per instruction
// set (in its kit, kit_*.cpp, compiled for its set only, from winograd_transforms_impl.h). Every value is a
// sum or difference of two floats, or a product by 1/2, in the order winograd_transforms_impl.h writes, so each
// set gives the same bits; the sets differ only in how wide their vectors are.
#pragma once

#include <cstdint>

#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

struct WinogradTransforms {
  // x B of each tile's patch row along a padded input row of 2 tw + 2 positions (tile t's patch row
  // is row[2t .. 2t + 3]): its 4 column transforms at cols[j * pitch + t].
  void (*row_columns)(const float* row, int64_t tw, float* cols, int64_t pitch);
  // B^T (x B) of `count` tiles (whole rows of tw), from their patch rows' column transforms: column
  // transform j of patch rows 0 and 2 of tile u at cols[j * pitch + u] and [.. + u + tw], of rows 1
  // and 3 at cols[(4 + j) * pitch + u] and [.. + u + tw] (the input rows of even and of odd index,
  // each a row of tiles apart). Entry e = 4 i + j of tile u at v[e * stride + u].
  void (*tile_entries)(const float* cols, int64_t count, int64_t tw, int64_t pitch, float* v, int64_t stride);
  // A^T M A of `count` tiles (entry e of tile u at m[e * stride + u]), plus `bias` where not null:
  // output (i, k) of the tile (row i, column k of its 2 x 2) at y[(2 i + k) * count + u]. `a` holds
  // 8 * count floats of scratch.
  void (*tile_outputs)(const float* m, int64_t stride, int64_t count, const float* bias, float* a, float* y);
  // out[2 u] = left[u], out[2 u + 1] = right[u] for u < pairs.
  void (*store_pairs)(const float* left, const float* right, int64_t pairs, float* out);
};

}  // namespace aclnn_cpu
