#include "kernels/direct/lane_weights.h"

#include <algorithm>

#include "acl/acl_base.h"
#include "kernels/common/finite.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/common/transpose_4x4.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kRowFloats = int64_t{1} << 14;  // converted weights a thread holds at once, at most

}  // namespace

LaneWeights::LaneWeights(const View5& wei, MathMode math, const Layout& layout, PlanBuilder& b)
    : wei_(wei), math_(math), conversions_(b.cpu().conversions), layout_(layout) {
  packed_ =
      b.book_scratch("direct.packed_weights", layout_.groups * tasks_per_group() * 2 * block_floats(), sizeof(float));
  if (!float_in_place(wei_, math_) && is_dense(wei_)) {
    chunk_ = std::clamp<int64_t>(kRowFloats / (kLanes * layout_.taps), 1, std::max<int64_t>(layout_.summed, 1));
    rows_ = b.book_scratch("direct.weight_rows", chunk_ * kLanes * layout_.taps, sizeof(float), b.threads());
  }
  const int64_t blocks = layout_.groups * tasks_per_group() * 2;
  tested_ = b.book_shared("direct.weights_finite", static_cast<uint64_t>(blocks), 1);
  b.weights_tested = {tested_, blocks};
}

int64_t LaneWeights::tasks_per_group() const { return ceil_div(layout_.lanes, kTaskLanes); }

const float* LaneWeights::blocks(const Workspace& w, int64_t grp, int64_t ct) const {
  return w.at<float>(packed_) + (grp * tasks_per_group() + ct) * 2 * block_floats();
}

// A task per block, its taps four at a time over every summed channel: each pass writes four runs (tap
// k's vectors are C x 16 floats apart, 32 KiB for 512 channels: all of a block's taps at once would
// fall in one L1 set and thrash it) and reads the block's rows of W again from L2.
int LaneWeights::pack(const Workspace& w, const float* dense, int threads) const {
  const int64_t lanes_all = layout_.lanes, summed = layout_.summed, taps = layout_.taps;
  const int64_t per_group = tasks_per_group() * 2;
  float* out = w.at<float>(packed_);
  unsigned char* tested = w.at<unsigned char>(tested_);
  return run_tasks(layout_.groups * per_group, threads, "direct weights", [&](int64_t t) {
    const int64_t grp = t / per_group, l0 = t % per_group * kLanes;
    float* block = out + t * block_floats();
    const int64_t lanes = std::clamp<int64_t>(lanes_all - l0, 0, kLanes);
    tested[t] = 1;
    if (lanes == 0) {  // (a block past the last lane channel: zeros, and no pointer formed past W)
      std::fill(block, block + block_floats(), 0.0f);
      return;
    }
    // Summed channel c's taps of lane l (channel l0 + l) in W: W[c][l0 + l][k], or lanes first
    // W[l0 + l][c][k]; from `first`, c and l `channel` and `lane` floats apart.
    const bool lf = layout_.lanes_first;
    const int64_t first = lf ? (grp * lanes_all + l0) * summed * taps : (grp * summed * lanes_all + l0) * taps;
    const int64_t channel = lf ? taps : lanes_all * taps, lane = lf ? summed * taps : taps;
    // In place in the dense float weights, or converted from the user's view into the thread's rows,
    // chunk_ summed channels at a time, in runs contiguous in W: each summed channel's (lanes x taps),
    // lanes first each lane's (channels x taps).
    float* converted = rows_ >= 0 ? w.at<float>(rows_, thread_index()) : nullptr;
    const int64_t chunk = converted != nullptr ? chunk_ : summed;
    // (each run packed then tested for Inf and NaN, in cache: the values as the kernels read them)
    bool finite = true;
    for (int64_t c0 = 0; c0 < summed; c0 += chunk) {
      const int64_t c1 = std::min(summed, c0 + chunk);
      if (converted == nullptr) {
        pack_block(dense + first + c0 * channel, channel, lane, c0, c1, lanes, block);
        if (lf) {  // (one chunk: every summed channel) lane l's run of summed x taps
          for (int64_t l = 0; l < lanes; ++l) finite = all_finite(dense + first + l * lane, summed * taps) && finite;
        } else {  // summed channel c's run of lanes x taps
          for (int64_t c = c0; c < c1; ++c) finite = all_finite(dense + first + c * channel, lanes * taps) && finite;
        }
      } else if (!lf) {
        for (int64_t c = c0; c < c1; ++c)
          read_dense_floats(wei_, math_, first + c * channel, lanes * taps, converted + (c - c0) * lanes * taps,
                            conversions_);
        pack_block(converted, lanes * taps, taps, c0, c1, lanes, block);
        finite = all_finite(converted, (c1 - c0) * lanes * taps) && finite;
      } else {
        for (int64_t l = 0; l < lanes; ++l)
          read_dense_floats(wei_, math_, first + l * lane + c0 * taps, (c1 - c0) * taps,
                            converted + l * (c1 - c0) * taps, conversions_);
        pack_block(converted, taps, (c1 - c0) * taps, c0, c1, lanes, block);
        finite = all_finite(converted, lanes * (c1 - c0) * taps) && finite;
      }
    }
    tested[t] = finite ? 1 : 0;
  });
}

// Summed channels [c0, c1) of a block: channel c's tap k of lane l at runs[(c - c0) * channel + l * lane
// + k] (reversed: + K-1-k). A whole block's (16 lanes x taps) transposed 4 x 4 at a time (not a gather
// of single floats; reversed, four taps stored in the reverse order), the last taps % 4 and partial
// blocks one by one.
void LaneWeights::pack_block(const float* runs, int64_t channel, int64_t lane, int64_t c0, int64_t c1, int64_t lanes,
                             float* block) const {
  const int64_t taps = layout_.taps, tap_floats = layout_.summed * kLanes;
  const bool reversed = layout_.reversed;
  const int64_t whole = lanes == kLanes ? taps / 4 * 4 : 0;
  for (int64_t k = 0; k < whole; k += 4) {
    // taps k .. k + 3 from 4 floats in a row: at k, or reversed at K-4-k (tap k + 3 first)
    const int64_t from = reversed ? taps - 4 - k : k;
    float* to = block + (reversed ? k + 3 : k) * tap_floats;
    const int64_t to_stride = reversed ? -tap_floats : tap_floats;
    for (int64_t c = c0; c < c1; ++c) {  // (each 16-lane vector written whole)
      for (int64_t l = 0; l < kLanes; l += 4)
        transpose_4x4(runs + (c - c0) * channel + l * lane + from, lane, to + c * kLanes + l, to_stride);
    }
  }
  for (int64_t k = whole; k < taps; ++k) {
    const int64_t tap = reversed ? taps - 1 - k : k;
    for (int64_t c = c0; c < c1; ++c) {
      for (int64_t l = 0; l < kLanes; ++l)
        block[k * tap_floats + c * kLanes + l] = l < lanes ? runs[(c - c0) * channel + l * lane + tap] : 0.0f;
    }
  }
}

Support direct_rows_fit(const ConvGeometry& g) {
  constexpr int64_t kMaxStride = 4, kMaxReach = int64_t{1} << 30, kMaxRowWidth = int64_t{1} << 16;
  if (g.src_channels_per_group < kLanes || g.dst_channels_per_group < kLanes)
    return refuse("fewer than 16 channels per group");
  if (g.batch <= 0 || g.groups <= 0) return refuse("empty");
  if (g.kernel_volume() == 1) return refuse("1x1 kernel");
  for (int a = 0; a < 3; ++a) {
    if (g.stride[a] > kMaxStride) return refuse("a stride past 4");
    if (g.stride[a] < 1 || g.src_size[a] <= 0 || g.dst_size[a] <= 0 || g.pad[a] < 0 || g.pad[a] > kMaxReach ||
        double(g.kernel[a]) * double(g.dilation[a]) > double(kMaxReach))
      return refuse("stride or padding or kernel span past its reach");
  }
  if (g.src_size[2] > kMaxRowWidth || g.dst_size[2] > kMaxRowWidth) return refuse("rows too wide");
  return kSupported;
}

void store_lane_tile(const float* tile, int64_t positions, int64_t channels, int64_t step, float* rows,
                     int64_t row_stride, const float* bias) {
  const int64_t whole = step == 1 ? positions / 4 * 4 : 0;
  for (int64_t i = 0; i < channels; ++i) {
    const float* lanes = tile + i / kLanes * positions * kLanes + i % kLanes;
    float* row = rows + i * row_stride;
    if (i % 4 == 0 && i + 4 <= channels) {                        // channels i..i+3, positions 4 at a time
      const float* bias4 = bias != nullptr ? bias + i : nullptr;  // (channels i .. i + 3's)
      for (int64_t j = 0; j < whole; j += 4) transpose_4x4(lanes + j * kLanes, kLanes, row + j, row_stride, bias4);
      for (int64_t c = 0; c < 4; ++c) {
        const float add = bias != nullptr ? bias[i + c] : 0.0f;
        for (int64_t j = whole; j < positions; ++j)
          row[c * row_stride + step * j] = bias != nullptr ? lanes[c + j * kLanes] + add : lanes[c + j * kLanes];
      }
      i += 3;
      continue;
    }
    for (int64_t j = 0; j < positions; ++j)
      row[step * j] = bias != nullptr ? lanes[j * kLanes] + bias[i] : lanes[j * kLanes];
  }
}

}  // namespace aclnn_cpu
