// The quantized convolution's tile as written (kernels/kits/quant_kernels.h), for every CPU: the
// compiler vectorises the column loop. Sums in uint32 (modulo 2^32, no overflow to avoid).
#include <cstring>

#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {
namespace {

void tile_generic(const int16_t* weights, int64_t pairs, const int16_t* columns, int64_t column_stride,
                  int32_t* acc) {
  uint32_t sums[kQuantTileRows][kQuantTileCols] = {};
  for (int64_t q = 0; q < pairs; ++q) {
    const int16_t* pair_row = columns + 2 * q * column_stride;
    for (int r = 0; r < kQuantTileRows; ++r) {
      const int32_t w0 = weights[2 * (r * pairs + q)], w1 = weights[2 * (r * pairs + q) + 1];
      for (int j = 0; j < kQuantTileCols; ++j) {
        sums[r][j] += static_cast<uint32_t>(w0 * pair_row[2 * j] + w1 * pair_row[2 * j + 1]);
      }
    }
  }
  for (int r = 0; r < kQuantTileRows; ++r) {
    for (int j = 0; j < kQuantTileCols; ++j) acc[r * kQuantTileCols + j] = static_cast<int32_t>(sums[r][j]);
  }
}

}  // namespace

extern const QuantKernels kQuantKernelsGeneric = {tile_generic};

}  // namespace aclnn_cpu
