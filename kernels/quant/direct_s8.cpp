// aclnnQuantConvolution as a direct convolution over a padded channels-last copy of x:
//   acc[16 channels x 6 or 12 positions] = sum over kernel points t and channel groups q of
//       W[channels][t][q] . source[position + offset(t)][q]            (the kit's tile)
// the channels of one convolution group taken in pairs (int16, the pair tile) or, where the CPU has VNNI,
// in quads (x + 128 as u8 against INT8 weights, the byte tile, which starts from -128 * each channel's
// weight sum) (kernels/kits/quant_kernels.h), summed in int32 modulo 2^32, then the operator's float steps
// (kernels/core/quant_problem.h) per output. Both give the same sums, so the same bits.
// Phase 2 first packs the weights (blocks of 16 output channels, zeros past Cout/groups and past
// Cin/groups), reads the scale and bias once per channel and copies x into `source`: per image and group
// [D'][H'][W'][Cg'], the padding around it holding x's pad value (Cg' = Cin/groups rounded up to the pair or
// quad; the extra channels 0), so no window needs a bounds check. Then each task (image, group, block of
// positions, block of 16 channels) runs the tiles over its positions.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/interleave_bytes.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/kits/kit.h"
#include "kernels/quant/quant_entries.h"
#include "kernels/quant/quant_packing.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kPositionBlock = 16 * kQuantTilePositions;        // output positions per task
constexpr int64_t kAccBlock = kPositionBlock * kQuantTileChannels;  // a channel block's sums in a task
constexpr int64_t kMostUnitBlocks = 2;     // channel blocks a task takes: 2 for the byte tile, 1 for the pair tile
constexpr int64_t kChunkBytes = 16 << 10;  // the weights a chunk of kernel points spans
// The channels a pair or quad of the copy holds: 4 where the plan takes the byte tile, else 2.
int64_t channel_group(const CpuFeatures& cpu) { return cpu.int8_dot && cpu.kit->quant->byte_tile != nullptr ? 4 : 2; }

// The padded copy's elements, as a double.
double source_elements(const QuantProblem& p, int64_t group) {
  const ConvGeometry& g = p.geometry;
  double elements = static_cast<double>(g.batch) * g.groups * round_up(g.src_channels_per_group, group);
  for (int a = 0; a < 3; ++a) elements *= static_cast<double>(padded_extent(g, a));
  return elements;
}

class DirectS8 final : public OperatorStep {
 public:
  DirectS8(const QuantProblem& p, StepBuilder& b) : p_(p), threads_(b.threads()), kernels_(b.cpu().kit->quant) {
    const ConvGeometry& g = p.geometry;
    group_ = channel_group(b.cpu());
    bytes_ = group_ == 4;
    channels_padded_ = round_up(g.src_channels_per_group, group_);
    // With unit dilation along W a window's kernel row is one run of the copy (positions Cg' apart): the
    // tiles take each row as one point of span * Cg' channels; the packed weights' order, (kd, kh, kw)
    // then channel, is the same either way.
    span_ = g.dilation[2] == 1 ? g.kernel[2] : 1;
    point_channels_ = span_ * channels_padded_;
    groups_per_point_ = point_channels_ / group_;
    points_ = g.kernel_volume() / span_;
    channel_blocks_ = ceil_div(g.dst_channels_per_group, kQuantTileChannels);
    blocks_per_unit_ = bytes_ ? 2 : 1;
    units_ = ceil_div(channel_blocks_, blocks_per_unit_);
    positions_ = g.dst_plane();
    position_blocks_ = ceil_div(positions_, kPositionBlock);
    for (int a = 0; a < 3; ++a) extent_[a] = padded_extent(g, a);
    group_elements_ = extent_[0] * extent_[1] * extent_[2] * channels_padded_;
    block_elements_ = points_ * point_channels_ * kQuantTileChannels;
    const int64_t element_bytes = bytes_ ? 1 : 2;
    chunk_points_ = std::max<int64_t>(1, kChunkBytes / (point_channels_ * element_bytes * kQuantTileChannels));
    // Each tile point's (kernel row or point) offset from a window's corner in the copy, in elements.
    weight_offsets_ = weight_point_offsets(p);
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          if (kw % span_ != 0) continue;
          point_offsets_.push_back(
              ((kd * g.dilation[0] * extent_[1] + kh * g.dilation[1]) * extent_[2] + kw * g.dilation[2]) *
              channels_padded_);
        }
      }
    }
    weights_ = b.book_scratch("quant_weights", static_cast<uint64_t>(g.groups * channel_blocks_ * block_elements_),
                              element_bytes);
    channels_ =
        b.book_scratch("quant_channels", static_cast<uint64_t>(g.groups * channel_blocks_), sizeof(QuantChannelBlock));
    source_ =
        b.book_scratch("quant_source", static_cast<uint64_t>(g.batch * g.groups * group_elements_), element_bytes);
  }

  int run(const Workspace& workspace) const override {
    return bytes_ ? run_as<uint8_t, int8_t>(workspace) : run_as<int16_t, int16_t>(workspace);
  }
  int64_t tasks() const override { return p_.geometry.batch * p_.geometry.groups * position_blocks_ * units_; }
  std::string detail() const override { return bytes_ ? "tile=bytes" : "tile=pairs"; }

 private:
  // Source: the copy's element (int16 pairs or u8 quads); Weight: the packed weights' (int16 or int8).
  template <typename Source, typename Weight>
  int run_as(const Workspace& workspace) const {
    const ConvGeometry& g = p_.geometry;
    Weight* weights = workspace.at<Weight>(weights_);
    QuantChannelBlock* channels = workspace.at<QuantChannelBlock>(channels_);
    Source* source = workspace.at<Source>(source_);
    int status = run_tasks(g.groups * channel_blocks_, threads_, "aclnnQuantConvolution", [&](int64_t t) {
      pack_quant_weights(p_, weight_offsets_, channels_padded_, t / channel_blocks_, t % channel_blocks_,
                         weights + t * block_elements_, channels[t]);
    });
    if (status != 0) return status;
    const int64_t rows = extent_[0] * extent_[1];
    status = run_tasks(g.batch * g.groups * rows, threads_, "aclnnQuantConvolution",
                       [&](int64_t t) { copy_row(t / rows, t % rows / extent_[1], t % extent_[1], source); });
    if (status != 0) return status;
    return run_tasks(g.batch * g.groups * position_blocks_ * units_, threads_, "aclnnQuantConvolution", [&](int64_t t) {
      const int64_t unit = t % units_, rest = t / units_;
      run_block(rest / position_blocks_, rest % position_blocks_, unit, weights, channels, source);
    });
  }

  // Row (dp, hp) of the padded copy of image and group `t` (= n * groups + group): the pad value around x's
  // row, the row's channels a pair or quad at a time (the extra channels 0).
  template <typename Source>
  void copy_row(int64_t t, int64_t dp, int64_t hp, Source* source) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t n = t / g.groups, group = t % g.groups, cg = g.src_channels_per_group;
    const int8_t* x = static_cast<const int8_t*>(p_.input.data);
    Source* row = source + t * group_elements_ + (dp * extent_[1] + hp) * extent_[2] * channels_padded_;
    const Source pad = source_value(p_.pad_value, row), zero = source_value(0, row);
    // The pad value in every real channel, 0 in the extra ones: one position, then copies of the filled
    // ones, doubling.
    const auto fill = [&](Source* at, int64_t positions) {
      if (positions == 0) return;
      for (int64_t c = 0; c < channels_padded_; ++c) at[c] = c < cg ? pad : zero;
      const int64_t elements = positions * channels_padded_;
      for (int64_t filled = channels_padded_; filled < elements; filled *= 2) {
        std::memcpy(at + filled, at, sizeof(Source) * static_cast<size_t>(std::min(filled, elements - filled)));
      }
    };
    const int64_t d = dp - g.pad[0], h = hp - g.pad[1];
    // The columns of x the row holds: wp in [first, last) reads w = wp - pad.
    const int64_t first = std::min(extent_[2], g.pad[2]), last = std::min(extent_[2], g.pad[2] + g.src_size[2]);
    if (d < 0 || d >= g.src_size[0] || h < 0 || h >= g.src_size[1] || first >= last) {
      fill(row, extent_[2]);
      return;
    }
    fill(row, first);
    fill(row + last * channels_padded_, extent_[2] - last);
    const int64_t step = p_.input.stride[4];
    int64_t c = 0;
    if constexpr (std::is_same<Source, uint8_t>::value) {
      if (step == 1) {
        // 16 channels at a time while there are, then quads of channels (the extra ones read as 0), 16
        // columns at a time; rows of fewer than 16 columns through a copy of their bytes (x's row may end
        // there).
        for (; c + 16 <= cg; c += 16) {
          const int8_t* rows[16];
          for (int i = 0; i < 16; ++i) rows[i] = x + p_.input.element(n, group * cg + c + i, d, h, first - g.pad[2]);
          int64_t wp = first;
          for (; wp + 16 <= last; wp += 16) {
            interleave_16x16_u8(rows, row + wp * channels_padded_ + c, channels_padded_);
            for (const int8_t*& r : rows) r += 16;
          }
          if (wp < last && last - first >= 16) {  // (the last 16 columns, some again)
            for (const int8_t*& r : rows) r -= 16 - (last - wp);
            interleave_16x16_u8(rows, row + (last - 16) * channels_padded_ + c, channels_padded_);
          } else if (wp < last) {
            int8_t tail[16][16] = {};
            const int columns = static_cast<int>(last - wp);
            const int8_t* tail_rows[16];
            for (int i = 0; i < 16; ++i) {
              std::memcpy(tail[i], rows[i], static_cast<size_t>(columns));
              tail_rows[i] = tail[i];
            }
            interleave_16x16_u8(tail_rows, row + wp * channels_padded_ + c, channels_padded_, columns);
          }
        }
        static const int8_t kZeros[16] = {};
        for (; c < cg; c += 4) {
          const int8_t* rows[4];
          for (int i = 0; i < 4; ++i) {
            rows[i] = c + i < cg ? x + p_.input.element(n, group * cg + c + i, d, h, first - g.pad[2]) : kZeros;
          }
          const int64_t real = std::min<int64_t>(4, cg - c);
          int64_t wp = first;
          for (; wp + 16 <= last; wp += 16) {
            interleave_4x16_u8(rows, row + wp * channels_padded_ + c, channels_padded_);
            for (int64_t i = 0; i < real; ++i) rows[i] += 16;
          }
          if (wp < last && last - first >= 16) {  // (the last 16 columns, some again)
            for (int64_t i = 0; i < real; ++i) rows[i] -= 16 - (last - wp);
            interleave_4x16_u8(rows, row + (last - 16) * channels_padded_ + c, channels_padded_);
          } else if (wp < last) {
            int8_t tail[4][16] = {};
            const int columns = static_cast<int>(last - wp);
            const int8_t* tail_rows[4] = {tail[0], tail[1], tail[2], tail[3]};
            for (int64_t i = 0; i < real; ++i) std::memcpy(tail[i], rows[i], static_cast<size_t>(columns));
            interleave_4x16_u8(tail_rows, row + wp * channels_padded_ + c, channels_padded_, columns);
          }
        }
      }
    }
    for (; c < channels_padded_; ++c) {
      Source* out = row + c;
      if (c >= cg) {
        for (int64_t wp = first; wp < last; ++wp) out[wp * channels_padded_] = zero;
        continue;
      }
      const int8_t* xc = x + p_.input.element(n, group * cg + c, d, h, first - g.pad[2]);
      for (int64_t wp = first, i = 0; wp < last; ++wp, i += step) out[wp * channels_padded_] = source_value(xc[i], out);
    }
  }

  // The sums of channel blocks unit * blocks_per_unit_ .. (as many as remain) at the block of positions,
  // then their float steps into the output.
  template <typename Source, typename Weight>
  void run_block(int64_t image_group, int64_t position_block, int64_t unit, const Weight* weights,
                 const QuantChannelBlock* channels, const Source* source) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t n = image_group / g.groups, group = image_group % g.groups;
    const int64_t first = position_block * kPositionBlock, count = std::min(kPositionBlock, positions_ - first);
    const Source* group_source = source + image_group * group_elements_;
    // Each position's window corner in the copy and its output element offset.
    const Source* corner[kPositionBlock + kQuantTilePositions];
    int64_t out_offset[kPositionBlock];
    // (the first position's coordinates divided out, the rest stepped along W with a carry)
    int64_t o[3] = {first / (g.dst_size[1] * g.dst_size[2]), first / g.dst_size[2] % g.dst_size[1],
                    first % g.dst_size[2]};
    for (int64_t j = 0; j < count; ++j) {
      corner[j] =
          group_source +
          ((o[0] * g.stride[0] * extent_[1] + o[1] * g.stride[1]) * extent_[2] + o[2] * g.stride[2]) * channels_padded_;
      out_offset[j] = o[0] * p_.output.stride[2] + o[1] * p_.output.stride[3] + o[2] * p_.output.stride[4];
      if (++o[2] == g.dst_size[2]) {
        o[2] = 0;
        if (++o[1] == g.dst_size[1]) o[1] = 0, ++o[0];
      }
    }
    for (int64_t j = count; j < count + kQuantTilePositions; ++j) corner[j] = corner[count - 1];  // (not stored)
    const int64_t first_block = unit * blocks_per_unit_;
    const int blocks = static_cast<int>(std::min(blocks_per_unit_, channel_blocks_ - first_block));
    const Weight* unit_weights = weights + (group * channel_blocks_ + first_block) * block_elements_;
    const QuantChannelBlock* unit_channels = channels + group * channel_blocks_ + first_block;
    // The blocks' sums, kernel points a chunk at a time over all the tiles, so that a chunk's weights
    // (at most kChunkBytes a block) stay in L1 while the tiles pass.
    int32_t acc[kMostUnitBlocks * kAccBlock];
    for (int64_t t0 = 0; t0 < points_; t0 += chunk_points_) {
      const int64_t chunk = std::min(chunk_points_, points_ - t0);
      run_tiles(unit_weights + t0 * point_channels_ * kQuantTileChannels, blocks, chunk, corner,
                point_offsets_.data() + t0, t0 == 0, unit_channels, count, acc);
    }
    const bool bf16 = p_.output.dtype == ACL_BF16;
    uint16_t* out = static_cast<uint16_t*>(p_.output.data) + p_.output.offset + n * p_.output.stride[0];
    // Then 8 positions at a time, stored by the kit where they lie side by side in the output.
    uint16_t bits[kQuantTileChannels * kQuantFinishPositions];
    for (int b = 0; b < blocks; ++b) {
      const int64_t block = first_block + b;
      const int64_t rows = std::min<int64_t>(kQuantTileChannels, g.dst_channels_per_group - block * kQuantTileChannels);
      const int64_t first_channel = group * g.dst_channels_per_group + block * kQuantTileChannels;
      for (int64_t j0 = 0; j0 < count; j0 += kQuantFinishPositions) {
        const int valid = static_cast<int>(std::min<int64_t>(kQuantFinishPositions, count - j0));
        bool side_by_side = true;
        for (int j = 1; j < valid && side_by_side; ++j) side_by_side = out_offset[j0 + j] == out_offset[j0] + j;
        const int32_t* sums = acc + b * kAccBlock + j0 * kQuantTileChannels;
        uint16_t* channels_out = out + first_channel * p_.output.stride[1];
        if (side_by_side) {
          kernels_->finish(sums, valid, unit_channels[b], bf16, static_cast<int>(rows), channels_out + out_offset[j0],
                           p_.output.stride[1]);
          continue;
        }
        kernels_->finish(sums, valid, unit_channels[b], bf16, static_cast<int>(rows), bits, kQuantFinishPositions);
        for (int64_t r = 0; r < rows; ++r) {
          for (int j = 0; j < valid; ++j) {
            channels_out[r * p_.output.stride[1] + out_offset[j0 + j]] = bits[r * kQuantFinishPositions + j];
          }
        }
      }
    }
  }

  // acc[b][positions x 16 channels] (+)= sum over the chunk's points and channel pairs of source . weights
  void run_tiles(const int16_t* weights, int blocks, int64_t chunk, const int16_t* const* corner,
                 const int64_t* offsets, bool first_chunk, const QuantChannelBlock*, int64_t count,
                 int32_t* acc) const {
    for (int b = 0; b < blocks; ++b) {
      for (int64_t j0 = 0; j0 < count; j0 += kQuantTilePositions) {
        kernels_->tile(weights + b * block_elements_, chunk, groups_per_point_, corner + j0, offsets, !first_chunk,
                       acc + b * kAccBlock + j0 * kQuantTileChannels);
      }
    }
  }
  // acc[b][positions x 16 channels] = (from the first chunk on: -128 * weight sum) + sum over the chunk's
  // points and channel quads of (source + 128) . weights
  void run_tiles(const int8_t* weights, int blocks, int64_t chunk, const uint8_t* const* corner, const int64_t* offsets,
                 bool first_chunk, const QuantChannelBlock* channels, int64_t count, int32_t* acc) const {
    if (first_chunk) {
      for (int b = 0; b < blocks; ++b) {
        for (int64_t j = 0; j < round_up(count, kQuantTilePositions); ++j) {
          std::memcpy(acc + b * kAccBlock + j * kQuantTileChannels, channels[b].start, sizeof channels[b].start);
        }
      }
    }
    for (int64_t j0 = 0; j0 < count; j0 += kQuantTilePositions) {
      kernels_->byte_tile(weights, block_elements_, blocks, chunk, groups_per_point_, corner + j0, offsets, kAccBlock,
                          acc + j0 * kQuantTileChannels);
    }
  }

  QuantProblem p_;
  int threads_;
  const QuantKernels* kernels_;
  int64_t group_ = 2;
  bool bytes_ = false;
  int64_t channels_padded_ = 0, span_ = 1, point_channels_ = 0, groups_per_point_ = 0, points_ = 0, channel_blocks_ = 0,
          blocks_per_unit_ = 1, units_ = 0, positions_ = 0, position_blocks_ = 0;
  int64_t extent_[3] = {1, 1, 1};
  int64_t group_elements_ = 0, block_elements_ = 0, chunk_points_ = 1;
  std::vector<int64_t> point_offsets_, weight_offsets_;
  WorkspaceLedger::Handle weights_ = -1, channels_ = -1, source_ = -1;
};

Support supports_direct_s8(const QuantProblem& p, const CpuFeatures& cpu) {
  if (may_overlap(p.output)) return refuse("output overlaps itself");
  return refuse_large_copies(p, source_elements(p, channel_group(cpu)));
}

}  // namespace

extern const QuantImpl kQuantDirectS8 = {
    "direct_s8", "direct", supports_direct_s8,
    [](const QuantProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new DirectS8(p, b)); }};

}  // namespace aclnn_cpu
