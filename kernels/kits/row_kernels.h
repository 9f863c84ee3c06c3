// Register-blocked row kernels of the direct small-group convolution (kernels/direct/small_group.cpp)
// and of dense layers' direct input gradient (kernels/direct/direct_input.cpp),
// one set per instruction set, each in its kit compiled for that set only (kernels/kits/kit_*.cpp,
// from the templates of row_kernels_impl.h), as the GEMM micro-kernels are.
//
// Both read a *staged* source: a slice of channels copied into zero-padded rows, so that every
// kernel tap of every output position is a plain load at a fixed offset (no bounds, no strides):
//   src[c * channel_stride + row_base[r] + tap[t] + w]
// is the source element that tap t of output position w of output row r reads (zero in the padding).
// (Or, for the forward jobs a set's reads_in_place takes, the user's planes at those offsets, each
// load masked to the entries inside them: ForwardRows::source_row.)
// Vectors are 16 floats on every instruction set (AVX-512: one register; AVX2: two, its kernels
// taking one at a time; generic: four),
// and each output element is summed in a fixed order (chains of multiply-adds, and their sums), so
// the AVX-512 and AVX2 kernels give identical bits (both fuse each multiply-add; the generic x86-64 kernel rounds the
// product first, as the generic GEMM kernel does).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/blocked_sum.h"
#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

constexpr int kRowLanes = 16;     // floats per vector, on every instruction set
constexpr int kForwardBlock = 8;  // output channels per packed weight block of forward_rows

// The output rows of a forward convolution, for up to kForwardBlock output channels:
//   out[co * out_channel_stride + r * width + w] = sum over c < channels, t < taps (in that order) of
//       weights[(c * taps + t) * kForwardBlock + co] * src[c * channel_stride + row_base[r] + tap[t] + w]
// for co < out_channels, r < rows and w < width, one chain of multiply-adds; or, with chain_taps > 0
// (one kernel row) and one output channel, each channel's taps in chains of chain_taps from zero (the
// last one shorter where chain_taps does not divide taps), the chains' sums added in order (a
// depthwise sum of 9 products, three chains of 3, has about three quarters of one chain's error); with a
// bias, bias[co] added to each sum as it is stored (fl32(sum) + bias, the forward operators' rule). Staged
// rows must hold round_up(width, 16) floats from each tap's offset on (the lanes past `width` are
// not stored).
struct ForwardRows {
  const float* src;
  const int64_t* row_base;
  int64_t rows, channel_stride, channels;
  const int64_t* tap;
  int64_t taps;
  const float* weights;  // zero past out_channels
  int64_t out_channels;  // <= kForwardBlock
  float* out;
  int64_t out_channel_stride, width;
  int64_t chain_taps = 0;       // (only read with out_channels 1)
  const float* bias = nullptr;  // out_channels floats, or none
  // Optional (grid_rows 0 when absent), as WeightRows': the rows in planes of plane_rows, consecutive
  // rows of a plane row_step apart, and the taps a grid of grid_rows kernel rows as far apart. Then
  // one channel's source rows serve several output rows (the one-channel 3 x 3 kernels use it).
  int64_t plane_rows = 0, row_step = 0, grid_rows = 0;
  // Optional (source_row null when absent; only where the kernels take it, RowKernels::reads_in_place):
  // src is the user's slice itself, not staged: element (c, y, x) of its planes at src[c * channel_stride +
  // y * source_width + x] for y < source_height and x < source_width, any other entry zero. Output row r
  // reads from source row source_row[r] on (its first kernel row's), tap t at column w + tap_column[t] for
  // its column w: row_base[r] = source_row[r] * source_width and tap[t] = (the tap's kernel row's rows past
  // the first) * source_width + tap_column[t], the offsets staged rows give; with the grid, row_step =
  // source_width.
  const int64_t* source_row = nullptr;
  const int64_t* tap_column = nullptr;
  int64_t source_height = 0, source_width = 0;
};
constexpr int64_t kMaxInPlaceVectors = 16;  // a row read in place: at most 256 positions

// One slice's contribution to a weight gradient's dot products, in 16 lanes each:
//   lanes[co * lanes_channel_stride + t * 16 + l] += sum over r < rows, w < width, w % 16 = l of
//       dY(co, r, w) * src[row_base[r] + tap[t] + w]
// for co < out_channels and t < taps (one source channel). Each lane's sum over the slice is formed
// first (over its positions w, then the rows, in order) and then added to the lane. dY is staged
// with the channels' vectors side by side, so that a block's dY vectors are at fixed offsets from
// one pointer: dY(co, r, w) = dy[r * dy_row_stride + (w / 16 * dy_channels + co) * 16 + w % 16],
// zero past the width and in the channel slots past out_channels (dy_channels, a multiple of
// weight_block(out_channels)). No source entry past the width is read (an infinity there must not
// make a NaN).
struct WeightRows {
  const float* src;
  const int64_t* row_base;
  int64_t rows, width;
  const int64_t* tap;
  int64_t taps;
  const float* dy;
  int64_t dy_row_stride, dy_channels, out_channels;
  float* lanes;
  int64_t lanes_channel_stride;
  // Optional (grid_rows 0 when absent): the rows in planes of plane_rows, consecutive rows of a plane
  // row_step apart (row_base[r + 1] = row_base[r] + row_step), and the taps a grid of grid_rows kernel
  // rows as far apart: tap[b * (taps / grid_rows) + k] = b * row_step + tap[k]. Then a source row
  // serves several output rows (the one-channel 3 x 3 kernels use it).
  int64_t plane_rows = 0, row_step = 0, grid_rows = 0;
  // Optional (no lines when absent): runs of memory, prefetch_lines[i] cache lines from
  // prefetch_from[i] on, brought into L2 a line or a few at a time while the slice is computed (a
  // later slice's inputs, and where it is written in place, its output): spread over the products,
  // the reads from memory overlap them.
  static constexpr int kPrefetchRuns = 3;  // source, dY, output
  const char* prefetch_from[kPrefetchRuns] = {nullptr, nullptr, nullptr};
  int64_t prefetch_lines[kPrefetchRuns] = {0, 0, 0};
};

// Output rows of a dense stride-1 convolution's input gradient, computed directly (direct_input.cpp)
// in blocks of 16 input channels (the lanes) x positions:
//   out[(b * width + j) * 16 + l] = sum over t < taps, co < channels (in that order) of
//       weights[b * weight_block_stride + weight_tap[t] + co * 16 + l]
//       * dy[dy_tap[t] + co * dy_channel_stride + j]
// for blocks b < blocks, positions j < width and lanes l < 16: each tap t a kernel tap whose dY row
// lies inside dY (the caller lists only those), its dY entries read from a staged row padded with
// zeros wherever the tap reaches past dY's columns. Tap t reads dY's columns at positions
// [tap_first[t], tap_end[t]) only: the kernels leave out (up to two at each end of a chunk of
// positions) the products of the padding's zeros. The taps * channels products in the order above
// are summed as kernels/common/blocked_sum.h sums (from the first listed tap's first channel).
// With rows 2 (only where width is the kernels' paired_row_width), two rows of positions at once,
// their taps the same: row r's position j at out[(b * 2 * width + r * width + j) * 16 + l], its dY
// entries row_step floats after row 0's (a narrow row alone, such as 7 positions, leaves half of the
// kernels' accumulators idle). The products and their order are those of each row alone.
struct InputRows {
  const float* dy;
  const int64_t* dy_tap;
  const int64_t* weight_tap;
  const int64_t* tap_first;
  const int64_t* tap_end;
  int64_t taps, channels, dy_channel_stride;
  const float* weights;
  int64_t weight_block_stride, blocks;
  float* out;
  int64_t width;
  int64_t rows = 1, row_step = 0;
};

// The sum of 16 lanes, added pairwise (lane l + lane l+8, then +4, +2, +1): the fixed order every
// dot product in 16 lanes ends with. Overwrites the lanes. (Defined in kit_generic.cpp, built
// for the baseline: this header is also read by the AVX translation units.)
float sum_lanes(float* lanes);

struct RowKernels {
  Isa isa;
  void (*forward_rows)(const ForwardRows& job);
  void (*weight_rows)(const WeightRows& job);
  // The output channels weight_rows takes at a time for `out_channels` of them.
  int64_t (*weight_block)(int64_t out_channels);
  void (*input_rows)(const InputRows& job);
  // The row width whose rows input_rows takes two at a time (InputRows::rows), or 0 (one at a time).
  int64_t paired_row_width;
  // Whether forward_rows reads this job's source in place (ForwardRows::source_row; asked of the job's
  // other fields): where its kernel for the job loads only the lanes it keeps, with masked loads that
  // touch no other lane, within its limits. Else the caller stages the source.
  bool (*reads_in_place)(const ForwardRows& job);
};

}  // namespace aclnn_cpu
