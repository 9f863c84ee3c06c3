// aclnnQuantConvolution as a direct convolution over a padded channels-last int16 copy of x:
//   acc[16 channels x 6 positions] = sum over kernel points t and channel pairs q of
//       W[channels][t][q] . source[position + offset(t)][q]            (the kit's tile)
// the channels of one group, widened to int16 and paired (kernels/kits/quant_kernels.h), summed in int32
// modulo 2^32, then the operator's float steps (kernels/core/quant_problem.h) per output.
// Phase 2 first packs the weights (blocks of 16 output channels, zeros past Cout/groups and past an odd
// Cin/groups), reads the scale and bias once per channel and copies x into `source`: per image and group
// [D'][H'][W'][Cg'] int16, the padding around it holding x's pad value (Cg' = Cin/groups rounded up to
// even; the extra channel 0), so no window needs a bounds check. Then each task (image, group, block of
// positions, block of 16 channels) runs the tiles over its positions.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/kits/kit.h"
#include "kernels/quant/quant_entries.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kPositionBlock = 16 * kQuantTilePositions;  // output positions per task
constexpr int64_t kChunkBytes = 16 << 10;                     // the weights a chunk of kernel points spans
// The padded copy may be at most this many times x's size (beyond: very large padding; the reference
// then computes the problem).
constexpr double kMostPaddedGrowth = 4.0;

// The padded copy's extent along axis a: every window's span, from -pad on.
int64_t padded_extent(const ConvGeometry& g, int a) {
  return (g.dst_size[a] - 1) * g.stride[a] + (g.kernel[a] - 1) * g.dilation[a] + 1;
}

// The padded copy's elements, as a double (it may exceed 64 bits before supports() refuses it).
double source_elements(const QuantProblem& p) {
  const ConvGeometry& g = p.geometry;
  double elements = static_cast<double>(g.batch) * g.groups * round_up(g.src_channels_per_group, 2);
  for (int a = 0; a < 3; ++a) elements *= static_cast<double>(padded_extent(g, a));
  return elements;
}

class DirectS8 final : public OperatorStep {
 public:
  DirectS8(const QuantProblem& p, StepBuilder& b) : p_(p), threads_(b.threads()), kernels_(b.cpu().kit->quant) {
    const ConvGeometry& g = p.geometry;
    channels_padded_ = round_up(g.src_channels_per_group, 2);
    pairs_ = channels_padded_ / 2;
    points_ = g.kernel_volume();
    channel_blocks_ = ceil_div(g.dst_channels_per_group, kQuantTileChannels);
    positions_ = g.dst_plane();
    position_blocks_ = ceil_div(positions_, kPositionBlock);
    for (int a = 0; a < 3; ++a) extent_[a] = padded_extent(g, a);
    group_elements_ = extent_[0] * extent_[1] * extent_[2] * channels_padded_;
    block_elements_ = points_ * pairs_ * 2 * kQuantTileChannels;
    chunk_points_ = std::max<int64_t>(1, kChunkBytes / (pairs_ * 4 * kQuantTileChannels));
    // Each kernel point's offset from a window's corner in the copy, in int16 elements.
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          point_offsets_.push_back(
              ((kd * g.dilation[0] * extent_[1] + kh * g.dilation[1]) * extent_[2] + kw * g.dilation[2]) *
              channels_padded_);
        }
      }
    }
    weights_ = b.book_scratch("quant_weights", static_cast<uint64_t>(g.groups * channel_blocks_ * block_elements_), 2);
    channels_ =
        b.book_scratch("quant_channels", static_cast<uint64_t>(g.groups * channel_blocks_), sizeof(QuantChannelBlock));
    source_ = b.book_scratch("quant_source", static_cast<uint64_t>(g.batch * g.groups * group_elements_), 2);
  }

  int run(const Workspace& workspace) const override {
    const ConvGeometry& g = p_.geometry;
    int16_t* weights = workspace.at<int16_t>(weights_);
    QuantChannelBlock* channels = workspace.at<QuantChannelBlock>(channels_);
    int16_t* source = workspace.at<int16_t>(source_);
    int status = run_tasks(g.groups * channel_blocks_, threads_, "aclnnQuantConvolution", [&](int64_t t) {
      pack_weights(t / channel_blocks_, t % channel_blocks_, weights + t * block_elements_, channels[t]);
    });
    if (status != 0) return status;
    status = run_tasks(g.batch * g.groups * extent_[0], threads_, "aclnnQuantConvolution",
                       [&](int64_t t) { copy_source(t / extent_[0], t % extent_[0], source); });
    if (status != 0) return status;
    return run_tasks(
        g.batch * g.groups * position_blocks_ * channel_blocks_, threads_, "aclnnQuantConvolution", [&](int64_t t) {
          const int64_t channel_block = t % channel_blocks_, rest = t / channel_blocks_;
          run_block(rest / position_blocks_, rest % position_blocks_, channel_block, weights, channels, source);
        });
  }
  int64_t tasks() const override { return p_.geometry.batch * p_.geometry.groups * position_blocks_ * channel_blocks_; }

 private:
  // Group `group`'s channels 16*block .. as [point][pair][16][2] (kernel points in (kd, kh, kw) order),
  // and their float steps (zero past the group's channels).
  void pack_weights(int64_t group, int64_t block, int16_t* out, QuantChannelBlock& channels) const {
    const ConvGeometry& g = p_.geometry;
    const int8_t* w = static_cast<const int8_t*>(p_.weight.data);
    std::fill(out, out + block_elements_, int16_t{0});
    channels = QuantChannelBlock{};
    for (int64_t r = 0; r < kQuantTileChannels; ++r) {
      const int64_t row = block * kQuantTileChannels + r;
      if (row >= g.dst_channels_per_group) break;
      const int64_t o = group * g.dst_channels_per_group + row;
      const ChannelDequant d = channel_dequant(p_, o);
      channels.scale[r] = d.scale, channels.bias[r] = d.bias, channels.int_bias[r] = d.int_bias;
      channels.integer_bias = d.integer_bias;
      int64_t t = 0;
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++t) {
            for (int64_t c = 0; c < g.src_channels_per_group; ++c) {
              out[2 * ((t * pairs_ + c / 2) * kQuantTileChannels + r) + c % 2] = w[p_.weight.element(o, c, kd, kh, kw)];
            }
          }
        }
      }
    }
  }

  // Plane `dp` of the padded copy of image and group `t` (= n * groups + group): the pad value around x's
  // rows, each row's channels a pair at a time (the extra channel of an odd Cg 0).
  void copy_source(int64_t t, int64_t dp, int16_t* source) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t n = t / g.groups, group = t % g.groups, cg = g.src_channels_per_group;
    const int8_t* x = static_cast<const int8_t*>(p_.input.data);
    const int64_t row_elements = extent_[2] * channels_padded_;
    int16_t* plane = source + t * group_elements_ + dp * extent_[1] * row_elements;
    // The pad value in every real channel, 0 in an odd Cg's extra one.
    const auto fill = [&](int16_t* row, int64_t positions) {
      for (int64_t w = 0; w < positions; ++w) {
        for (int64_t c = 0; c < channels_padded_; ++c) row[w * channels_padded_ + c] = c < cg ? p_.pad_value : 0;
      }
    };
    const int64_t d = dp - g.pad[0];
    // The columns of x a row holds: wp in [first, last) reads w = wp - pad.
    const int64_t first = std::min(extent_[2], g.pad[2]), last = std::min(extent_[2], g.pad[2] + g.src_size[2]);
    const int64_t step = p_.input.stride[4];
    for (int64_t hp = 0; hp < extent_[1]; ++hp) {
      const int64_t h = hp - g.pad[1];
      int16_t* row = plane + hp * row_elements;
      if (d < 0 || d >= g.src_size[0] || h < 0 || h >= g.src_size[1] || first >= last) {
        fill(row, extent_[2]);
        continue;
      }
      fill(row, first);
      fill(row + last * channels_padded_, extent_[2] - last);
      for (int64_t c = 0; c < channels_padded_; c += 2) {
        const int8_t* x0 = x + p_.input.element(n, group * cg + c, d, h, first - g.pad[2]);
        const int8_t* x1 = c + 1 < cg ? x0 + p_.input.stride[1] : nullptr;
        int16_t* out = row + c;
        for (int64_t wp = first, i = 0; wp < last; ++wp, i += step) {
          out[wp * channels_padded_] = x0[i];
          out[wp * channels_padded_ + 1] = x1 != nullptr ? x1[i] : int8_t{0};
        }
      }
    }
  }

  void run_block(int64_t image_group, int64_t position_block, int64_t channel_block, const int16_t* weights,
                 const QuantChannelBlock* channels, const int16_t* source) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t n = image_group / g.groups, group = image_group % g.groups;
    const int64_t first = position_block * kPositionBlock, count = std::min(kPositionBlock, positions_ - first);
    const int16_t* group_source = source + image_group * group_elements_;
    // Each position's window corner in the copy and its output element offset.
    const int16_t* corner[kPositionBlock + kQuantTilePositions];
    int64_t out_offset[kPositionBlock];
    for (int64_t j = 0; j < count; ++j) {
      const int64_t q = first + j,
                    o[3] = {q / (g.dst_size[1] * g.dst_size[2]), q / g.dst_size[2] % g.dst_size[1], q % g.dst_size[2]};
      corner[j] =
          group_source +
          ((o[0] * g.stride[0] * extent_[1] + o[1] * g.stride[1]) * extent_[2] + o[2] * g.stride[2]) * channels_padded_;
      out_offset[j] = o[0] * p_.output.stride[2] + o[1] * p_.output.stride[3] + o[2] * p_.output.stride[4];
    }
    for (int64_t j = count; j < count + kQuantTilePositions; ++j) corner[j] = corner[count - 1];  // (not stored)
    const int16_t* block_weights = weights + (group * channel_blocks_ + channel_block) * block_elements_;
    const int64_t rows =
        std::min<int64_t>(kQuantTileChannels, g.dst_channels_per_group - channel_block * kQuantTileChannels);
    const int64_t first_channel = group * g.dst_channels_per_group + channel_block * kQuantTileChannels;
    const QuantChannelBlock& block_channels = channels[group * channel_blocks_ + channel_block];
    const bool bf16 = p_.output.dtype == ACL_BF16;
    uint16_t* out = static_cast<uint16_t*>(p_.output.data) + p_.output.offset + n * p_.output.stride[0];
    // The block's sums, kernel points a chunk at a time over all its tiles, so that a chunk's weights
    // (at most kChunkBytes) stay in L1 while the tiles pass.
    int32_t acc[kPositionBlock * kQuantTileChannels];
    for (int64_t t0 = 0; t0 < points_; t0 += chunk_points_) {
      const int64_t chunk = std::min(chunk_points_, points_ - t0);
      const int16_t* chunk_weights = block_weights + t0 * pairs_ * 2 * kQuantTileChannels;
      for (int64_t j0 = 0; j0 < count; j0 += kQuantTilePositions) {
        // acc[6 positions x 16 channels] (+)= sum over the chunk's points and channel pairs of source . weights
        kernels_->tile(chunk_weights, chunk, pairs_, corner + j0, point_offsets_.data() + t0, t0 > 0,
                       acc + j0 * kQuantTileChannels);
      }
    }
    uint16_t bits[kQuantTilePositions * kQuantTileChannels];
    for (int64_t j0 = 0; j0 < count; j0 += kQuantTilePositions) {
      kernels_->finish(acc + j0 * kQuantTileChannels, block_channels, bf16, bits);
      const int64_t valid = std::min<int64_t>(kQuantTilePositions, count - j0);
      for (int64_t r = 0; r < rows; ++r) {
        uint16_t* channel_out = out + (first_channel + r) * p_.output.stride[1];
        for (int64_t j = 0; j < valid; ++j) channel_out[out_offset[j0 + j]] = bits[j * kQuantTileChannels + r];
      }
    }
  }

  QuantProblem p_;
  int threads_;
  const QuantKernels* kernels_;
  int64_t channels_padded_ = 0, pairs_ = 0, points_ = 0, channel_blocks_ = 0, positions_ = 0, position_blocks_ = 0;
  int64_t extent_[3] = {1, 1, 1};
  int64_t group_elements_ = 0, block_elements_ = 0, chunk_points_ = 1;
  std::vector<int64_t> point_offsets_;
  WorkspaceLedger::Handle weights_ = -1, channels_ = -1, source_ = -1;
};

Support supports_direct_s8(const QuantProblem& p, const CpuFeatures&) {
  if (may_overlap(p.output)) return refuse("output overlaps itself");
  const double source = source_elements(p);
  double input_elements = 1;  // (in double: a broadcast view's logical size may pass 2^63)
  for (int64_t size : p.input.shape) input_elements *= static_cast<double>(size);
  if (source > kMostPaddedGrowth * input_elements + (1 << 20)) {
    return refuse("padding makes the padded copy too large");
  }
  // (sizes phase 1 may see on tensors without memory: the workspace's int64 sizes stay exact)
  const ConvGeometry& g = p.geometry;
  const double weights = static_cast<double>(g.groups) * round_up(g.dst_channels_per_group, kQuantTileChannels) *
                         round_up(g.src_channels_per_group, 2) * static_cast<double>(g.kernel_volume());
  if (source > 0x1p52 || weights > 0x1p52) return refuse("the copies would exceed 2^52 elements");
  if (g.kernel_volume() > (int64_t{1} << 24)) return refuse("more than 2^24 kernel points");
  return kSupported;
}

}  // namespace

extern const QuantImpl kQuantDirectS8 = {
    "direct_s8", "direct", supports_direct_s8,
    [](const QuantProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new DirectS8(p, b)); }};

}  // namespace aclnn_cpu
