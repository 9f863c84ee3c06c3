// The quantized convolution's padded copy's extent and element values, the limits on its size, and its
// weights packed in blocks of 16 output channels with their float steps (kernels/kits/quant_kernels.h,
// QuantChannelBlock): what direct_s8.cpp takes beside its tiles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/tiling.h"
#include "kernels/core/quant_problem.h"
#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {

// The padded copy's extent along axis a: every window's span, from -pad on.
inline int64_t padded_extent(const ConvGeometry& g, int a) {
  return (g.dst_size[a] - 1) * g.stride[a] + (g.kernel[a] - 1) * g.dilation[a] + 1;
}

// The copy's element for an INT8 value: itself (int16, pairs) or itself + 128 (u8, quads).
inline int16_t source_value(int8_t v, int16_t*) { return v; }
inline uint8_t source_value(int8_t v, uint8_t*) { return static_cast<uint8_t>(v + 128); }

// Refuses a padded copy of `source_elements` elements (in double: it may pass 2^64 before this refuses it)
// larger than 4 times x plus 2^20 elements (very large padding: the reference computes those), copies past
// 2^52 elements (so the workspace's int64 sizes stay exact, also on tensors without memory at phase 1) and
// kernels of more than 2^24 points.
inline Support refuse_large_copies(const QuantProblem& p, double source_elements) {
  double input_elements = 1;  // (in double: a broadcast view's logical size may pass 2^63)
  for (int64_t size : p.input.shape) input_elements *= static_cast<double>(size);
  if (source_elements > 4.0 * input_elements + (1 << 20)) return refuse("padding makes the padded copy too large");
  const ConvGeometry& g = p.geometry;
  const double weights = static_cast<double>(g.groups) * round_up(g.dst_channels_per_group, kQuantTileChannels) *
                         round_up(g.src_channels_per_group, 4) * static_cast<double>(g.kernel_volume());
  if (source_elements > 0x1p52 || weights > 0x1p52) return refuse("the copies would exceed 2^52 elements");
  if (g.kernel_volume() > (int64_t{1} << 24)) return refuse("more than 2^24 kernel points");
  return kSupported;
}

// Each kernel point's offset in a weight's input channel, in (kd, kh, kw) order.
inline std::vector<int64_t> weight_point_offsets(const QuantProblem& p) {
  std::vector<int64_t> offsets;
  for (int64_t kd = 0; kd < p.geometry.kernel[0]; ++kd) {
    for (int64_t kh = 0; kh < p.geometry.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < p.geometry.kernel[2]; ++kw) {
        offsets.push_back(kd * p.weight.stride[2] + kh * p.weight.stride[3] + kw * p.weight.stride[4]);
      }
    }
  }
  return offsets;
}

// Group `group`'s output channels 16*block .. as [point][pair or quad][16][2 or 4] (Weight int16: pairs;
// int8: quads; kernel points in (kd, kh, kw) order, input channels padded to `channels_padded`), and their
// float steps and the byte tiles' start, -128 * the weight sum (zero past the group's channels).
// `weight_offsets`: weight_point_offsets(p).
template <typename Weight>
void pack_quant_weights(const QuantProblem& p, const std::vector<int64_t>& weight_offsets, int64_t channels_padded,
                        int64_t group, int64_t block, Weight* out, QuantChannelBlock& channels) {
  constexpr int64_t kGroup = sizeof(Weight) == 1 ? 4 : 2;
  const ConvGeometry& g = p.geometry;
  const int8_t* w = static_cast<const int8_t*>(p.weight.data);
  const int64_t points = g.kernel_volume(), point_step = channels_padded * kQuantTileChannels;
  const int64_t channel_step = p.weight.stride[1], cg = g.src_channels_per_group;
  std::fill(out, out + points * point_step, Weight{0});
  channels = QuantChannelBlock{};
  for (int64_t r = 0; r < kQuantTileChannels; ++r) {
    const int64_t row = block * kQuantTileChannels + r;
    if (row >= g.dst_channels_per_group) break;
    const int64_t o = group * g.dst_channels_per_group + row;
    const ChannelDequant d = channel_dequant(p, o);
    channels.scale[r] = d.scale, channels.bias[r] = d.bias, channels.int_bias[r] = d.int_bias;
    channels.integer_bias = d.integer_bias;
    // channel c of kernel point t to out[t][c / group][r][c % group], a point and a pair or quad at a time
    const int8_t* wo = w + p.weight.element(o, 0, 0, 0, 0);
    uint32_t weight_sums[kGroup] = {};  // (modulo 2^32, as the sums; one per place, apart)
    for (int64_t t = 0; t < points; ++t) {
      const int8_t* wt = wo + weight_offsets[t];
      Weight* ot = out + t * point_step + kGroup * r;
      for (int64_t c = 0; c < cg; c += kGroup) {
        Weight values[kGroup] = {};
        for (int64_t i = 0; i < kGroup && c + i < cg; ++i) {
          values[i] = wt[(c + i) * channel_step];
          weight_sums[i] += static_cast<uint32_t>(static_cast<int32_t>(values[i]));
        }
        std::memcpy(ot + c * kQuantTileChannels, values, sizeof values);
      }
    }
    uint32_t weight_sum = 0;
    for (uint32_t sum : weight_sums) weight_sum += sum;
    channels.start[r] = static_cast<int32_t>(weight_sum * static_cast<uint32_t>(-128));
  }
}

}  // namespace aclnn_cpu
