// The quantized convolution's tile as written (kernels/kits/quant_kernels.h), for every CPU: the
// compiler vectorises the channel loop. Sums in uint32 (modulo 2^32, no overflow to avoid); the float
// steps are quant_problem.h's (this file is compiled without contraction: no multiply-add fused where
// the target has FMA, as aarch64 has).
#include "kernels/core/quant_problem.h"
#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {
namespace {

void tile_generic(const int16_t* weights, int64_t points, int64_t pairs, const int16_t* const* sources,
                  const int64_t* offsets, bool accumulate, int32_t* acc) {
  uint32_t sums[kQuantTilePositions][kQuantTileChannels] = {};
  if (accumulate) {
    for (int j = 0; j < kQuantTilePositions; ++j) {
      for (int r = 0; r < kQuantTileChannels; ++r) sums[j][r] = static_cast<uint32_t>(acc[j * kQuantTileChannels + r]);
    }
  }
  for (int64_t t = 0; t < points; ++t) {
    for (int64_t q = 0; q < pairs; ++q) {
      const int16_t* w = weights + 2 * (t * pairs + q) * kQuantTileChannels;
      for (int j = 0; j < kQuantTilePositions; ++j) {
        const int32_t x0 = sources[j][offsets[t] + 2 * q], x1 = sources[j][offsets[t] + 2 * q + 1];
        for (int r = 0; r < kQuantTileChannels; ++r) {
          sums[j][r] += static_cast<uint32_t>(w[2 * r] * x0 + w[2 * r + 1] * x1);
        }
      }
    }
  }
  for (int j = 0; j < kQuantTilePositions; ++j) {
    for (int r = 0; r < kQuantTileChannels; ++r) acc[j * kQuantTileChannels + r] = static_cast<int32_t>(sums[j][r]);
  }
}

void finish_generic(const int32_t* acc, int positions, const QuantChannelBlock& channels, bool bf16, int rows,
                    uint16_t* out, int64_t channel_stride) {
  for (int j = 0; j < positions; ++j) {
    for (int r = 0; r < rows; ++r) {
      const float value = dequantize(acc[j * kQuantTileChannels + r], channels.scale[r], channels.bias[r],
                                     channels.int_bias[r], channels.integer_bias);
      out[r * channel_stride + j] = round16_bits(value, bf16);
    }
  }
}

}  // namespace

extern const QuantKernels kQuantKernelsGeneric = {tile_generic, finish_generic, nullptr};

}  // namespace aclnn_cpu
