// Every entry of every implementation list against the reference implementations, on random
// (inexact) data: shapes that cut into several tiles, row blocks and channel blocks with
// remainders, groups, dilation, transposed, every dtype, strided and channels-last views. Then
// bit-identical results for any thread budget, and for a workspace at any address.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl_base.h"
#include "common/dtype.h"
#include "kernels/common/im2col.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/ahead_of_direct.h"
#include "kernels/gemm/padded_window.h"
#include "kernels/kits/kit.h"
#include "kernels/matmul/bf16_pairs.h"
#include "kernels/matmul/sgemm.h"
#include "support/env.h"

namespace aclnn_cpu {
namespace {

// (Tests here set the choice settings for their own checks: each next test gets back the forced one.)
[[maybe_unused]] const bool kChoiceSettingsRestored = testing_support::restore_choice_settings();

// BF16 inputs on the float kernels, on any CPU and under any forced setting: neither VDPBF16PS's pair
// products nor AMX tiles (the CPU's, or their emulation) take them.
void bf16_on_float_kernels() {
  setenv("ACLNN_CONVBWD_BF16_DOT", "0", 1);
  setenv("ACLNN_CONVBWD_AMX", "0", 1);
}

// kTimeMajor: channels innermost, then samples, then positions (ConvTbc's T x B x C for a 1-D layer).
enum class Layout { kDense, kChannelsLast, kGapped, kTimeMajor };

// A tensor of `dtype` in `layout`, seen as a View5 (N, C, D, H, W).
struct Tensor {
  std::vector<unsigned char> storage;
  View5 view;
  Tensor(int64_t n, int64_t c, const int64_t (&spatial)[3], int32_t dtype, Layout layout) {
    const int64_t shape[5] = {n, c, spatial[0], spatial[1], spatial[2]};
    // Fastest to slowest dim: NCDHW order reversed, or channels moved innermost.
    const int order_dense[5] = {4, 3, 2, 1, 0}, order_last[5] = {1, 4, 3, 2, 0}, order_time[5] = {1, 0, 4, 3, 2};
    const int* order = layout == Layout::kChannelsLast ? order_last
                       : layout == Layout::kTimeMajor  ? order_time
                                                       : order_dense;
    int64_t stride = 1;
    for (int i = 0; i < 5; ++i) {
      view.shape[order[i]] = shape[order[i]];
      view.stride[order[i]] = stride;
      stride = stride * shape[order[i]] + (layout == Layout::kGapped ? 1 : 0);  // a gap after each dim
    }
    view.offset = layout == Layout::kGapped ? 5 : 0;
    view.dtype = dtype;
    storage.assign(static_cast<size_t>(stride + view.offset) * dtype_size(dtype), 0xFF);  // NaN in every type
    view.data = storage.data();
  }
  void fill(std::mt19937& rng) {
    std::normal_distribution<double> normal;
    for_each([&](int64_t at) { store_element(view.data, view.dtype, at, normal(rng)); });
  }
  std::vector<double> values() const {
    std::vector<double> out;
    for_each([&](int64_t at) { out.push_back(load_element(view.data, view.dtype, at)); });
    return out;
  }
  template <typename Body>
  void for_each(Body body) const {
    for (int64_t n = 0; n < view.shape[0]; ++n)
      for (int64_t c = 0; c < view.shape[1]; ++c)
        for (int64_t d = 0; d < view.shape[2]; ++d)
          for (int64_t h = 0; h < view.shape[3]; ++h)
            for (int64_t w = 0; w < view.shape[4]; ++w) body(view.element(n, c, d, h, w));
  }
};

struct Case {
  const char* name;
  ConvGeometry g;
  bool transposed;  // gradInput by the forward kernel
};

ConvGeometry geometry(int64_t n, int64_t groups, int64_t cin, int64_t cout, std::vector<int64_t> src,
                      std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p, std::vector<int64_t> d) {
  ConvGeometry g;
  g.batch = n, g.groups = groups, g.src_channels_per_group = cin, g.dst_channels_per_group = cout;
  const size_t first = 3 - src.size();
  for (size_t i = 0; i < src.size(); ++i) {
    g.src_size[first + i] = src[i], g.kernel[first + i] = k[i], g.stride[first + i] = s[i];
    g.pad[first + i] = p[i], g.dilation[first + i] = d[i];
    g.dst_size[first + i] = (src[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  }
  return g;
}

// g with `extra` more output positions along spatial axis `axis` (0-2: D, H, W) at stride 1: a
// trailing padding that much wider, up to past the kernel's reach (rows of dY that meet no input).
ConvGeometry trailing_pad(ConvGeometry g, int axis, int64_t extra) {
  g.dst_size[axis] += extra;
  return g;
}

std::vector<Case> cases() {
  return {
      {"tiled_3x3", geometry(1, 1, 64, 8, {64, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"grouped_strided", geometry(3, 2, 5, 7, {17, 19}, {3, 2}, {2, 1}, {1, 0}, {1, 2}), false},
      {"depthwise", geometry(2, 6, 1, 2, {13, 11}, {3, 3}, {1, 2}, {1, 1}, {2, 1}), true},
      {"depthwise_single", geometry(2, 5, 1, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // One channel per group along rows of 75 (a block of 64 positions, then one of 16 masked), 5 rows:
      // the forward rows two at a time, the last alone.
      {"depthwise_wide_rows", geometry(1, 3, 1, 1, {5, 75}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // gradInput results too large for a task's buffer (256 KiB: a 300 x 300 plane is 352 KiB): stored
      // from the staged float result by parts (DenseFloatOutput::store_part), for FLOAT16/BF16 a block of
      // channels' rows per call. Strided (the GEMM gradInput with col2im), and one channel per group.
      {"unbuffered_planes", geometry(1, 1, 3, 2, {300, 300}, {3, 3}, {2, 2}, {1, 1}, {1, 1}), false},
      {"unbuffered_depthwise", geometry(1, 2, 1, 1, {300, 300}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // Strides as large as int64 holds along axes of one output position (the fuzzer's: a ceiling
      // division had added the stride to the source width).
      {"huge_strides", geometry(2, 1, 3, 2, {5, 6}, {2, 3}, {INT64_MAX, INT64_MAX}, {0, 1}, {1, 2}), false},
      {"huge_strides_transposed", geometry(2, 1, 3, 2, {5, 6}, {2, 3}, {INT64_MAX, INT64_MAX}, {0, 1}, {1, 2}), true},
      {"huge_stride_grouped", geometry(1, 2, 1, 2, {4}, {2}, {INT64_MAX}, {1}, {1}), true},
      {"conv1d_long", geometry(2, 1, 70, 3, {3000}, {5}, {1}, {2}, {1}), true},
      {"pointwise", geometry(2, 2, 70, 5, {40, 41}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), false},
      {"pointwise_transposed", geometry(1, 1, 9, 4, {3000}, {1}, {1}, {0}, {1}), true},
      {"conv3d", geometry(1, 1, 3, 4, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}), false},
      {"dilated_transposed", geometry(2, 3, 4, 2, {12, 9}, {3, 3}, {2, 2}, {2, 1}, {2, 3}), true},
      // gradWeight in 8 reduction chunks x 3 row blocks (80, 80 and 20 rows), Cout off every register tile.
      {"chunked_weight", geometry(3, 1, 20, 33, {40, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // gradWeight as transposed products (Cout of 32, 4096 positions): windows read in place, 8
      // chunks of dW^T added into dW, 27 rows (a partial micro-kernel sliver).
      {"transposed_weight", geometry(1, 1, 3, 32, {64, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // Strided: 4 samples of 32 x 32 stride-2 positions, 45 rows (partial slivers), Cout 30 (a partial one).
      {"transposed_weight_strided", geometry(4, 1, 5, 30, {64, 64}, {3, 3}, {2, 2}, {1, 1}, {1, 1}), false},
      // and a 1x1 kernel's, X's rows read in place (or staged) in tiles of positions.
      {"transposed_pointwise", geometry(2, 1, 20, 32, {40, 64}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), false},
      // A 1x1 gradInput as its flipped forward convolution in tiles of whole 32-column micro-kernel
      // tiles (128 positions): dY's rows read in place.
      {"flipped_pointwise", geometry(2, 1, 16, 8, {64, 64}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), false},
      // The same, and a transposed layer's, with tiles that start and end inside rows (of 130 and 56),
      // 48 result channels (whole slivers of every micro-kernel's rows): a staged tile's rows are its own
      // positions, not the whole source rows it spans.
      {"flipped_pointwise_unaligned", geometry(1, 1, 48, 8, {64, 130}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), false},
      {"pointwise_transposed_unaligned", geometry(1, 1, 48, 8, {40, 56}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), true},
      // Stride 1 with enough positions: gradInput as a forward convolution with the kernel flipped.
      {"flipped_2d", geometry(2, 2, 5, 7, {60, 70}, {3, 2}, {1, 1}, {1, 0}, {2, 1}), false},
      {"flipped_3d", geometry(1, 1, 3, 9, {9, 30, 31}, {3, 1, 2}, {1, 1, 1}, {0, 0, 1}, {1, 1, 2}), false},
      // Products from windows in depth-major order (both gradients; gradWeight transposed, in row
      // blocks of 64 = one kernel depth's slab): the bands of the first two and last two output
      // planes skip the kernel depths that read only padding (dilation 2, padding 2).
      {"depth_major_3d", geometry(2, 1, 16, 32, {6, 20, 20}, {3, 2, 2}, {1, 1, 1}, {2, 1, 0}, {2, 1, 1}), false},
      // Direct gradInput of dense stride-1 layers (direct_input.cpp): 40 input channels (a task of
      // 32 and one of 8, a single 16-lane block partly filled), a 7x7 plane in one chunk of positions;
      // 2 groups of 17 -> 16 channels, rows of 31 positions (chunks of 10-11 or 5-6 positions), padding
      // narrower than the kernel's reach and a dilated one; a 1-D row padded wider than the kernel.
      {"direct_small_plane", geometry(3, 1, 40, 20, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"direct_wide_rows", geometry(2, 2, 17, 16, {5, 31}, {2, 5}, {1, 1}, {0, 3}, {2, 1}), false},
      {"direct_wide_pad_1d", geometry(2, 1, 16, 18, {20}, {3}, {1}, {5}, {1}), false},
      // Row ends: taps whose first or last 1-3 positions of a chunk read only padding (a 5-wide kernel
      // padded by 1 along rows of 12, one chunk or two: each (first, last) pair of 0-2 left out, 3 multiplied as
      // zeros).
      {"direct_row_ends", geometry(2, 1, 20, 17, {5, 12}, {3, 5}, {1, 1}, {1, 1}, {1, 1}), false},
      // Strided: the rows in column phases (3 here, with dilation 2 and padding 2), and the taps of
      // each input row and plane whose dY index divides exactly (strides 2 in all three dims).
      {"direct_strided", geometry(2, 1, 20, 17, {13, 17}, {3, 4}, {2, 3}, {1, 2}, {1, 2}), false},
      {"direct_strided_3d", geometry(1, 1, 16, 16, {5, 7, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), false},
      // Stride 2 along rows of 23: both phases stored together (12 even and 11 odd positions: pairs of 4 x 4
      // blocks, then the last ones one by one), 18 channels (groups of 4, then 2 alone).
      {"direct_stride2_rows", geometry(1, 1, 18, 16, {6, 23}, {3, 3}, {2, 2}, {1, 1}, {1, 1}), false},
      // Weights other than dense floats converted as they are packed, 20 output channels at a time for a
      // 7x7 kernel (45: chunks of 20, 20 and 5), 20 input channels (a block of 16 and one of 4 lanes).
      {"direct_weight_chunks", geometry(1, 1, 20, 45, {9, 10}, {7, 7}, {1, 1}, {3, 3}, {1, 1}), false},
      // Padded windows (padded_window.h): bands of 2 rows, the last one of 1 (71 rows), with dilation
      // and padding as wide as a tap reaches; and too few rows for the bands, so pieces of rows.
      {"windows_last_band", geometry(2, 1, 6, 4, {71, 40}, {2, 3}, {1, 1}, {0, 2}, {3, 1}), false},
      {"windows_row_pieces", geometry(1, 2, 3, 5, {6, 500}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // gradWeight's products over several consecutive bands (whole 5 x 6 planes of 7 samples), their
      // windows side by side: a product of 5 bands, then one of the 2 left.
      {"band_batches", geometry(7, 1, 12, 20, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // 48 output channels over 4096 positions (64 samples of 8 x 8): whether gradWeight multiplies per
      // band transposed or batches bands must not depend on the micro-kernel's width (16 on AVX2, 32 on
      // AVX-512), since it cuts the sums.
      {"weight_orientation", geometry(64, 1, 4, 48, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // A forward product over a plane too small for its tasks (25 positions, one sample): one band, and
      // the tasks from blocks of the 20 output channels (whole slivers of the micro-kernel's rows).
      {"forward_row_blocks", geometry(1, 1, 6, 20, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), true},
      // gradInput through col2im on small planes (144 positions): GEMMs over the columns of 3 samples,
      // then of the last 2.
      {"sample_groups", geometry(5, 2, 6, 5, {20, 10}, {3, 3}, {1, 1}, {0, 0}, {1, 1}), false},
      // gradInput through col2im in tiles of a large plane (a 7x7 stride-2 stem's): dY's rows read in
      // place, 4225 positions in tiles of whole micro-kernel tiles, the last slice's last tile packed
      // (reading it in place would reach past dY's end).
      {"stem_tiles", geometry(2, 1, 2, 5, {130, 130}, {7, 7}, {2, 2}, {3, 3}, {1, 1}), false},
      // Strided windows (the source split into its stride phases), transposed so that gradInput reads
      // them too: 2-D with padding wider than a phase's reach, 3-D with strides 2 and 3 in every dim and
      // dilations coprime to them, and 1-D with 8 phases (a k16 s8 layer's).
      {"windows_strided", geometry(2, 1, 5, 6, {41, 45}, {4, 3}, {2, 2}, {3, 1}, {1, 1}), true},
      {"windows_strided_3d", geometry(1, 1, 3, 4, {7, 20, 33}, {3, 3, 5}, {2, 3, 2}, {1, 2, 4}, {1, 2, 3}), true},
      {"windows_phases_1d", geometry(2, 1, 6, 5, {700}, {16}, {8}, {4}, {1}), true},
      // Depthwise (the direct kernels): rows straddling the 16 dot-product lanes, strides, dilation,
      // padding wider than a tap reaches, 3-D and transposed.
      {"depthwise_rows", geometry(3, 5, 1, 1, {131}, {7}, {1}, {3}, {1}), false},
      {"depthwise_strided_3d", geometry(2, 4, 1, 1, {5, 9, 37}, {3, 3, 2}, {1, 2, 2}, {1, 1, 0}, {1, 1, 3}), false},
      {"depthwise_transposed", geometry(2, 3, 1, 1, {7, 40}, {3, 5}, {2, 3}, {1, 2}, {1, 2}), true},
      {"depthwise_wide_pad", geometry(1, 2, 1, 1, {4, 5}, {3, 3}, {2, 2}, {3, 3}, {1, 1}), false},
      // Stride 1 (small_group's one-channel 3x3 weight rows in bands of 8 rows sharing their source
      // rows): 15 rows (a band and 7 rows left) of 70 (4 vectors and a partial one); a 5x5 kernel (no
      // bands); planes of 8 rows in 3-D (a band within each plane).
      {"depthwise_bands", geometry(2, 3, 1, 1, {15, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"depthwise_bands_5x5", geometry(1, 2, 1, 1, {13, 33}, {5, 5}, {1, 1}, {2, 2}, {1, 1}), false},
      {"depthwise_band_planes", geometry(1, 2, 1, 1, {3, 8, 20}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}), false},
      // A transposed one whose gradInput (the forward product, its source read in place where the kernels
      // can) has one source plane padded into three output planes (two of them all padding).
      {"depthwise_bands_depth_pad", geometry(2, 2, 1, 1, {1, 9, 20}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), true},
      // Few channels per group (the small-group kernels): rows of 37 (two 16-lane vectors and a partial
      // one), 11 and 16 channels (forward blocks of 8, weight blocks of 4 and 2, with remainders), 5 taps
      // (blocks of 3 and 2), a transposed layer with strides 2 and 3 (phase-split rows), 3-D, and a
      // channel multiplier.
      {"small_group_rows", geometry(2, 4, 8, 8, {13, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"small_group_blocks", geometry(2, 2, 16, 11, {50}, {5}, {1}, {2}, {1}), false},
      {"small_group_transposed", geometry(2, 3, 4, 6, {9, 21}, {3, 4}, {2, 3}, {1, 2}, {2, 1}), true},
      {"small_group_3d", geometry(1, 2, 3, 5, {4, 6, 20}, {2, 3, 3}, {1, 1, 1}, {1, 0, 2}, {1, 2, 1}), false},
      {"small_group_multiplier", geometry(2, 4, 1, 3, {17, 18}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      // 1-D, one group, stride 1 (in the channels-last layouts: the channels-last GEMMs), dilated, and
      // with padding wider than the kernel (output rows that no tap takes from the source); transposed
      // (gradInput the forward product).
      {"channels_last_1d", geometry(3, 1, 20, 24, {150}, {3}, {1}, {1}, {2}), false},
      {"channels_last_wide_pad", geometry(2, 1, 17, 9, {6}, {2}, {1}, {5}, {1}), false},
      {"channels_last_transposed", geometry(2, 1, 12, 18, {40}, {4}, {1}, {2}, {2}), true},
      // Trailing padding wider than the kernel reaches (2-D's four-value padding, bottom > top): the last
      // rows and columns of dY meet no input, but gradBias sums them.
      {"trailing_pad_rows", trailing_pad(geometry(2, 1, 1, 1, {1, 4}, {1, 3}, {1, 1}, {0, 1}, {1, 1}), 1, 2), false},
      {"trailing_pad_small_group",
       trailing_pad(trailing_pad(geometry(2, 2, 3, 4, {5, 9}, {2, 3}, {1, 1}, {0, 1}, {1, 1}), 1, 3), 2, 2), false},
      // One row, padded away from the output's one row (padding [2, 0] with stride 3: it reads row -2):
      // no output position meets the source, every gradient but gradBias is zero.
      {"padded_away_row", trailing_pad(geometry(2, 1, 3, 4, {1, 9}, {1, 3}, {3, 1}, {2, 1}, {1, 2}), 1, -1), false},
      {"trailing_pad_dense", trailing_pad(geometry(2, 1, 20, 24, {6, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), 1, 3),
       false},
      // Transposed layers of stride 1 through the direct kernels (W's channel roles swapped and its taps
      // flipped as it is packed): 33 output channels (a block of 32 and one of a single lane), 9 taps
      // (two transposes of 4 and one left); 3-D with 2 groups, dilation and 8 taps (whole transposes); 15
      // taps with a trailing padding wider than the kernel reaches (output positions no tap meets).
      {"direct_swapped", geometry(2, 1, 20, 33, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), true},
      {"direct_swapped_3d", geometry(1, 2, 17, 16, {3, 5, 12}, {2, 2, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 2}), true},
      {"direct_swapped_trailing", trailing_pad(geometry(2, 1, 16, 18, {6, 13}, {3, 5}, {1, 1}, {1, 0}, {2, 1}), 2, 6),
       true},
      // Transposed layers through direct_forward (the source staged in its column phases): strides 2 and 3
      // with dilation 2 along W, 33 output channels; 3-D with stride 2 and 2 groups; padding past the
      // kernel's reach with stride 2 (output rows and columns no tap meets); stride 4 with 3 taps (phases no
      // tap reads).
      {"direct_forward_strided", geometry(2, 1, 16, 33, {13, 17}, {3, 4}, {2, 3}, {1, 2}, {1, 2}), true},
      {"direct_forward_3d", geometry(1, 2, 16, 17, {5, 7, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}), true},
      {"direct_forward_wide_pad", geometry(2, 1, 17, 16, {6, 9}, {3, 3}, {2, 2}, {3, 3}, {1, 1}), true},
      {"direct_forward_stride4", geometry(1, 1, 16, 17, {9, 22}, {2, 3}, {1, 4}, {0, 1}, {1, 1}), true},
      // A transposed layer whose gradInput (a forward convolution of 3 channels, stride 2) gemm_forward_windows
      // computes straight into its rows: bands of one row of 48 positions (AVX-512: a whole tile and a half
      // one), 8 output channels, one depth block.
      {"forward_straight_rows", geometry(2, 1, 3, 8, {9, 96}, {5, 5}, {2, 2}, {2, 2}, {1, 1}), true},
      // winograd (3x3, stride 1, 64 channels and more): planes of fewer tiles than a task takes (several
      // samples per task, 7 x 9 outputs: a last tile row and column of one), 68 output channels (a last
      // sliver of 4 of 8 rows on AVX-512, of 2 of 6 on AVX2); and a plane of 12 x 12 tiles in bands of tile
      // rows, padded by 2.
      {"winograd_samples", geometry(2, 1, 64, 68, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), true},
      {"winograd_bands", geometry(1, 1, 65, 64, {21, 20}, {3, 3}, {1, 1}, {2, 2}, {1, 1}), true},
      // 3-D: the kernel's depth taps as more rows of the products (input planes outside the input: zeros), with a
      // depth stride, dilation and padding.
      {"winograd_3d", geometry(2, 1, 64, 64, {3, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), true},
      {"winograd_3d_strided", geometry(2, 1, 64, 64, {7, 6, 5}, {2, 3, 3}, {2, 1, 1}, {1, 1, 0}, {2, 1, 1}), true},
      // A direct layer's gradInput (stride 1: the forward convolution of dY by W swapped and flipped), 2-D and 3-D
      // (padding 0, 1, 2: the flipped one's 2, 1, 0).
      {"winograd_backward", geometry(2, 1, 64, 72, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"winograd_backward_3d", geometry(2, 1, 64, 64, {4, 4, 5}, {3, 3, 3}, {1, 1, 1}, {0, 1, 2}, {1, 1, 1}), false},
  };
}

struct Variant {
  const char* name;
  int32_t dtype;
  Layout layout;
  MathMode math;
};

const Variant kVariants[] = {
    {"float_dense", ACL_FLOAT, Layout::kDense, MathMode::kFull},
    {"float_channels_last", ACL_FLOAT, Layout::kChannelsLast, MathMode::kFull},
    {"float16_gapped", ACL_FLOAT16, Layout::kGapped, MathMode::kFull},
    {"bf16_channels_last", ACL_BF16, Layout::kChannelsLast, MathMode::kFull},
    {"bf16_dense", ACL_BF16, Layout::kDense, MathMode::kFull},  // GEMMs stage windows of X and dY
    {"float_gapped_fp16_math", ACL_FLOAT, Layout::kGapped, MathMode::kFp16Inputs},
    // (channels-last windows read each position's channels together, rounding as they go)
    {"float_channels_last_fp16_math", ACL_FLOAT, Layout::kChannelsLast, MathMode::kFp16Inputs},
};

// The pass that computes a problem's result i (0 gradInput, 1 gradWeight, 2 gradBias).
ConvPass result_pass(const ConvProblem& p, int i) {
  return i == 0 ? p.grad_input_pass() : i == 1 ? ConvPass::kBackwardWeight : ConvPass::kBias;
}

struct Results {
  std::vector<double> grad_input, grad_weight, grad_bias;
  std::string chosen[3];  // the entries phase 1 chose, per result
  std::string family[3];  // ... and their families
  // Whether gradient i's entry is `name` or of family `name` (ACLNN_CONVBWD_KERNELS names either).
  bool took(int i, const std::string& name) const { return chosen[i] == name || family[i] == name; }
  std::string described;             // the plan's verbose description
  uint64_t workspace = 0;            // bytes
  std::vector<std::string> choices;  // ConvPlan::choices(): per result, its entry and what it decided
};

// The choices run() forces on the entries' decisions (ConvProblem::forced_choices): ForcedChoices sets
// them for its scope.
std::string forced_in_runs;
struct ForcedChoices {
  explicit ForcedChoices(const std::string& forced) { forced_in_runs = forced; }
  ~ForcedChoices() { forced_in_runs.clear(); }
};

// The keys of a run's inputs: the case (its name and every size the tensors' shapes depend on) and,
// within it, the dtype, layout, seed and infinities that the values depend on.
std::string case_key(const Case& c) {
  const ConvGeometry& g = c.g;
  std::string key = c.name;
  for (int64_t value : {g.batch, g.groups, g.src_channels_per_group, g.dst_channels_per_group}) {
    key += "|" + std::to_string(value);
  }
  for (int i = 0; i < 3; ++i) {
    for (int64_t value : {g.src_size[i], g.dst_size[i], g.kernel[i]}) key += "|" + std::to_string(value);
  }
  return key;
}
// What run() puts among the random values: nothing, an infinity at the end of every row of src, or
// sparse infinities and NaNs in every input (kNonFinite: see run()).
// kLastWeightNaN: a NaN in W's last entry alone (the last block of lanes and tap an entry packs and tests).
// kSubnormalWeights: W's entries small multiples of 2^-149 (subnormal floats), X's and dY's multiples of 1/32:
// every product and partial sum is subnormal, and the exact result a double holds.
enum Poison : int { kNoPoison = 0, kInfAtRowEnds = 1, kNonFinite = 2, kLastWeightNaN = 3, kSubnormalWeights = 4 };

std::string values_key(const Variant& v, unsigned seed, int poison) {
  return std::to_string(v.dtype) + "|" + std::to_string(static_cast<int>(v.layout)) + "|" + std::to_string(seed) + "|" +
         std::to_string(poison);
}

// The inputs of the current case's runs, reused by every run with the same keys: a case's
// implementations, instruction sets and thread counts are checked on values generated once per
// variant (drawing them element by element had been most of these tests' time, and more of it under
// qemu). Cleared when the case changes, so it holds one case's variants at most. The reference's results
// too: the values do not depend on the layout (drawn in index order), nor do its double sums, so
// variants that differ only in layout share them (the reference had been half of EachMatchesTheReference);
// by thread count too, so that a test of the reference's bits for any thread count runs each.
struct CaseInputs {
  std::string case_key;
  struct Inputs {
    std::vector<unsigned char> x, w, dy;
  };
  std::map<std::string, Inputs> by_values;
  std::map<std::string, Results> references;  // by reference_key
};

// The key of the reference's results for `gradients` on `threads` threads: the values' key of the dense
// variant of v (any layout has those values), and the cubeMathType they are read with.
std::string reference_key(const Variant& v, unsigned seed, int poison, unsigned gradients, int threads) {
  const Variant dense{v.name, v.dtype, Layout::kDense, v.math};
  return values_key(dense, seed, poison) + "|" + std::to_string(static_cast<int>(v.math)) + "|" +
         std::to_string(gradients) + "|" + std::to_string(threads);
}

// The forward operators' bias (ConvProblem::grad_input_bias): run()'s gradients bit that adds it to
// gradInput, and its value on channel c.
constexpr unsigned kWithOutputBias = 8;
double output_bias(int64_t c) { return 0.25 * static_cast<double>(c % 7) - 0.75; }

// Runs the gradients of case `c` (`gradients`: 1 input, 2 weight, 4 bias, 8 kWithOutputBias; 7 by default) with
// implementations `only` (ACLNN_CONVBWD_KERNELS syntax) on a workspace starting `misalign` bytes
// past a 64-byte boundary; `poison` (a Poison; true: kInfAtRowEnds) puts infinities or NaNs among the values.
Results run(const std::string& only, const Case& c, const Variant& v, unsigned seed, int threads, int misalign = 0,
            int poison = kNoPoison, unsigned gradients = 7, bool plan_only = false) {
  const ConvGeometry& g = c.g;
  const int64_t csrc = g.groups * g.src_channels_per_group, cdst = g.groups * g.dst_channels_per_group;
  Tensor x(g.batch, csrc, g.src_size, v.dtype, v.layout),
      w(cdst, g.src_channels_per_group, g.kernel, v.dtype, v.layout);
  Tensor dy(g.batch, cdst, g.dst_size, v.dtype, v.layout);
  static CaseInputs cached;
  if (std::string key = case_key(c); cached.case_key != key) cached = {std::move(key), {}, {}};
  const std::string key = values_key(v, seed, poison);
  const bool reference = only == "ref" && !plan_only && misalign == 0;
  const std::string ref_key = reference ? reference_key(v, seed, poison, gradients, threads) : "";
  if (reference) {
    if (const auto found = cached.references.find(ref_key); found != cached.references.end()) return found->second;
  }
  if (plan_only) {
    // (no values: phase 1 chooses by shapes, strides and dtypes)
  } else if (const auto found = cached.by_values.find(key); found != cached.by_values.end()) {
    x.storage = found->second.x, w.storage = found->second.w, dy.storage = found->second.dy;
    x.view.data = x.storage.data(), w.view.data = w.storage.data(), dy.view.data = dy.storage.data();
  } else {
    std::mt19937 rng(seed);
    for (Tensor* t : {&x, &w, &dy}) t->fill(rng);
    if (poison == kInfAtRowEnds) {
      for (int64_t row = 0; row < x.view.numel() / g.src_size[2]; ++row) {
        const int64_t h = row % g.src_size[1], d = row / g.src_size[1] % g.src_size[0];
        const int64_t ch = row / g.src_size[1] / g.src_size[0] % csrc, n = row / g.src_size[1] / g.src_size[0] / csrc;
        store_element(x.view.data, v.dtype, x.view.element(n, ch, d, h, g.src_size[2] - 1), INFINITY);
      }
    }
    if (poison == kSubnormalWeights) {
      const auto requantize = [&](Tensor& t, double step, double largest) {
        t.for_each([&](int64_t at) {
          const double value = std::round(load_element(t.view.data, v.dtype, at) / step) * step;
          store_element(t.view.data, v.dtype, at, std::clamp(value, -largest, largest));
        });
      };
      requantize(w, std::ldexp(1.0, -149), std::ldexp(8.0, -149));
      requantize(x, 1.0 / 32, 4.0);
      requantize(dy, 1.0 / 32, 4.0);
    }
    if (poison == kLastWeightNaN && w.view.numel() > 0) {
      const int64_t* s = w.view.shape;
      store_element(w.view.data, v.dtype, w.view.element(s[0] - 1, s[1] - 1, s[2] - 1, s[3] - 1, s[4] - 1), NAN);
    }
    if (poison == kNonFinite) {  // each where padding meets it in some kernels: corners and first taps
      const int64_t last[3] = {g.src_size[0] - 1, g.src_size[1] - 1, g.src_size[2] - 1};
      if (x.view.numel() > 0) store_element(x.view.data, v.dtype, x.view.element(0, 0, 0, 0, 0), INFINITY);
      if (x.view.numel() > 0) {
        store_element(x.view.data, v.dtype, x.view.element(g.batch - 1, csrc - 1, last[0], last[1], last[2]), NAN);
      }
      if (w.view.numel() > 0) store_element(w.view.data, v.dtype, w.view.element(0, 0, 0, 0, 0), -INFINITY);
      if (dy.view.numel() > 0) {
        store_element(dy.view.data, v.dtype, dy.view.element(0, cdst - 1, 0, 0, 0), NAN);
        store_element(dy.view.data, v.dtype,
                      dy.view.element(g.batch - 1, 0, g.dst_size[0] - 1, g.dst_size[1] - 1, g.dst_size[2] - 1),
                      INFINITY);
      }
    }
    cached.by_values[key] = {x.storage, w.storage, dy.storage};
  }
  Tensor gx = c.transposed ? Tensor(g.batch, cdst, g.dst_size, v.dtype, v.layout)
                           : Tensor(g.batch, csrc, g.src_size, v.dtype, v.layout);
  Tensor gw(cdst, g.src_channels_per_group, g.kernel, v.dtype, v.layout);
  Tensor gb(1, cdst, {1, 1, 1}, v.dtype, Layout::kDense);
  Tensor bias(1, gx.view.shape[1], {1, 1, 1}, v.dtype, Layout::kDense);
  for (int64_t ch = 0; ch < gx.view.shape[1]; ++ch)
    store_element(bias.view.data, v.dtype, bias.view.element(0, ch, 0, 0, 0), output_bias(ch));
  ConvProblem p;
  p.geometry = g;
  p.src = x.view, p.wei = w.view, p.dst = dy.view;
  p.input_grad = (gradients & 1) == 0 ? InputGrad::kNone
                 : c.transposed       ? InputGrad::kForward
                                      : InputGrad::kBackwardData;
  p.grad_input = gx.view;
  p.want_weight_grad = (gradients & 2) != 0;
  p.want_bias_grad = (gradients & 4) != 0;
  p.grad_weight = gw.view, p.grad_bias = gb.view, p.bias_source = dy.view;
  p.add_grad_input_bias = (gradients & kWithOutputBias) != 0;
  p.grad_input_bias = bias.view;
  p.math = v.math;
  p.max_threads = threads;
  p.forced_choices = forced_in_runs;
  const std::unique_ptr<ConvPlan> plan = ConvPlan::build(p, only, "test");
  if (plan_only) {  // which implementations phase 1 chose; nothing computed
    Results chosen;
    chosen.workspace = plan->workspace_bytes();
    chosen.described = plan->describe();
    chosen.choices = plan->choices();
    for (int i = 0; i < 3; ++i) {
      if (const ConvImpl* impl = plan->chosen(result_pass(p, i))) {
        chosen.chosen[i] = impl->name;
        chosen.family[i] = impl->family;
      }
    }
    return chosen;
  }
  std::vector<unsigned char> buffer(plan->workspace_bytes() + 128, 0xFF);  // NaN: scratch read before written shows
  const auto address = reinterpret_cast<uintptr_t>(buffer.data());
  unsigned char* workspace = buffer.data() + (64 - address % 64) % 64 + misalign;
  EXPECT_EQ(plan->execute(plan->workspace_bytes() == 0 ? nullptr : workspace), 0);
  Results r{gx.values(), gw.values(), gb.values(), {}, {}, plan->describe(), plan->workspace_bytes(), plan->choices()};
  for (int i = 0; i < 3; ++i) {
    if (const ConvImpl* impl = plan->chosen(result_pass(p, i))) {
      r.chosen[i] = impl->name;
      r.family[i] = impl->family;
    }
  }
  if (reference) cached.references[ref_key] = r;
  return r;
}

// Largest error relative to the largest reference magnitude.
double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0.0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    if (std::isnan(got[i])) worst = INFINITY;
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / scale;
}

// Float accumulation, then one rounding into the output dtype (one unit in its last place).
// The gradients (1 input, 2 weight, 4 bias) that implementation `name` computes for case c in variant v,
// from phase 1 alone, with the bias wherever it computes another (a joint step may take the bias too):
// the tests that check one implementation run only those, not the other entries' gradients beside them.
unsigned computed_by(const std::string& name, const Case& c, const Variant& v, unsigned seed) {
  const Results planned = run(name, c, v, seed, 2, 0, false, 7, true);
  unsigned mask = 0;
  for (int i = 0; i < 3; ++i) mask |= planned.took(i, name) ? 1u << i : 0u;
  return mask == 0 ? 0 : mask | 4u;
}

double tolerance(int32_t dtype) {
  return 4e-6 + (dtype == ACL_FLOAT16 ? std::ldexp(1.0, -10) : dtype == ACL_BF16 ? std::ldexp(1.0, -7) : 0.0);
}

// The names of every non-reference implementation, over all lists.
std::set<std::string> implementation_names() {
  std::set<std::string> names;
  for (ConvPass pass : kConvPasses) {
    for (const ConvImpl* impl : convolution_implementations(pass)) {
      if (std::string(impl->name) != "ref") names.insert(impl->name);
    }
  }
  return names;
}

// The families of every entry, over all lists (the reference's too): forced by family, each list's
// entries of that family run where they would be chosen among themselves.
std::set<std::string> implementation_families() {
  std::set<std::string> families;
  for (ConvPass pass : kConvPasses) {
    for (const ConvImpl* impl : convolution_implementations(pass)) families.insert(impl->family);
  }
  return families;
}

// On a slow host (sanitizers, qemu: ACLNN_TESTS_SLOW_HOST) a long sweep checks about a third of its
// combinations (a case with a variant, or an entry on one): two of every three are skipped where each
// entry they would check has been checked on two others of the same variant already, so every entry is
// still checked on the first two cases it runs on, and on some of its later ones. Elsewhere (the release
// build) nothing is skipped.
class SlowHostSample {
 public:
  // `entries` on the combination's `variant` (a name for what else the entries' paths depend on).
  bool skip(const std::vector<std::string>& entries, const std::string& variant) {
    if (!testing_support::slow_host()) return false;
    const bool skippable = ++visits_ % 3 != 0;  // (not a third one)
    const auto checked = [&](const std::string& entry) -> int& { return checked_[entry + " " + variant]; };
    if (skippable &&
        std::all_of(entries.begin(), entries.end(), [&](const std::string& e) { return checked(e) >= 2; })) {
      return true;
    }
    for (const std::string& e : entries) ++checked(e);
    return false;
  }

 private:
  std::map<std::string, int> checked_;
  int visits_ = 0;
};

TEST(Implementations, ReferenceIsLastInEveryList) {
  for (ConvPass pass : kConvPasses) {
    ASSERT_FALSE(convolution_implementations(pass).empty());
    EXPECT_STREQ(convolution_implementations(pass).back()->name, "ref") << pass_name(pass);
  }
  EXPECT_TRUE(implementation_names().count("gemm_col2im"));
  EXPECT_TRUE(implementation_names().count("depthwise"));
}

// ACLNN_CONVBWD_KERNELS=direct gets `direct` on a 1-D layer that, by default, the GEMM entry standing ahead of it
// takes (one row per plane): the entry ahead is not named, and `direct` itself computes any dense layer.
TEST(Implementations, ForcedDirectTakesWhatTheGemmAheadOfItWouldTake) {
  const Case c{"conv1d_k5_c256", geometry(16, 1, 256, 256, {1024}, {5}, {1}, {2}, {1}), false};  // (planned only)
  EXPECT_EQ(run("", c, kVariants[0], 5, 2, 0, kNoPoison, 7, true).chosen[0], "gemm_flipped_windows");
  EXPECT_EQ(run("direct", c, kVariants[0], 5, 2, 0, kNoPoison, 7, true).chosen[0], "direct");
}

// Every (operator, pass) list, in its order, and each entry in it implementing that pass: a list offers
// its entries only problems of its pass. (The GEMM entries ahead of `direct` take only BF16 pair products
// and one row per plane: kernels/gemm/ahead_of_direct.h.)
TEST(Implementations, EveryPassHasItsOwnList) {
  const std::map<ConvPass, std::string> want = {
      {ConvPass::kForward,
       "small_group depthwise channels_last winograd gemm_forward_windows direct direct_forward gemm_forward_windows "
       "gemm_forward_tiles ref"},
      {ConvPass::kBackwardData,
       "small_group depthwise channels_last winograd gemm_flipped_windows gemm_flipped_tiles gemm_col2im direct "
       "gemm_flipped_windows gemm_flipped_tiles gemm_col2im ref"},
      {ConvPass::kBackwardWeight, "small_group depthwise channels_last gemm_weight_windows gemm_weight_tiles ref"},
      {ConvPass::kBias, "lanes ref"}};
  for (ConvPass pass : kConvPasses) {
    std::string names;
    for (const ConvImpl* impl : convolution_implementations(pass)) {
      names += std::string(names.empty() ? "" : " ") + impl->name;
      EXPECT_EQ(impl->pass, pass) << impl->name << " in the " << pass_name(pass) << " list";
      if (impl->joint_weight != nullptr) {
        EXPECT_EQ(impl->joint_weight->pass, ConvPass::kBackwardWeight) << impl->name;
      }
    }
    EXPECT_EQ(names, want.at(pass)) << pass_name(pass);
  }
}

// Every entry answers every case with yes or a short reason (printed by ACLNN_CONVBWD_VERBOSE=2 in a
// comma-separated line: none holds a comma), and every list has a family name on each entry.
TEST(Implementations, EveryRefusalHasAReason) {
  const CpuFeatures cpu = cpu_features();
  for (const Case& c : cases()) {
    for (const Variant& v : kVariants) {
      const Tensor x(c.g.batch, c.g.groups * c.g.src_channels_per_group, c.g.src_size, v.dtype, v.layout);
      const Tensor dy(c.g.batch, c.g.groups * c.g.dst_channels_per_group, c.g.dst_size, v.dtype, v.layout);
      const Tensor w(c.g.groups * c.g.dst_channels_per_group, c.g.src_channels_per_group, c.g.kernel, v.dtype,
                     v.layout);
      ConvProblem p;
      p.geometry = c.g;
      p.src = x.view, p.wei = w.view, p.dst = dy.view, p.bias_source = dy.view;
      p.input_grad = c.transposed ? InputGrad::kForward : InputGrad::kBackwardData;
      p.grad_input = c.transposed ? dy.view : x.view, p.grad_weight = w.view;
      p.want_weight_grad = p.want_bias_grad = true;
      p.math = v.math;
      for (ConvPass pass : {p.grad_input_pass(), ConvPass::kBackwardWeight, ConvPass::kBias}) {
        for (const ConvImpl* impl : convolution_implementations(pass)) {
          ASSERT_NE(impl->family, nullptr);
          const Support support = impl->supports(p, cpu);
          if (support) continue;
          ASSERT_NE(support.why_not, nullptr);
          EXPECT_NE(std::string(support.why_not), "") << impl->name << " " << c.name;
          EXPECT_EQ(std::string(support.why_not).find(','), std::string::npos) << impl->name << " " << c.name;
        }
      }
    }
  }
}

// What sharing the reference's results between layouts rests on (run() computes it afresh on a
// misaligned workspace): on every layout, the same bits as on dense tensors of the same values.
TEST(Implementations, ReferenceResultsDoNotDependOnTheLayout) {
  for (const Case& c : cases()) {
    const std::string name = c.name;
    if (name != "grouped_strided" && name != "depthwise" && name != "conv3d" && name != "dilated_transposed") continue;
    for (const Variant& v : kVariants) {
      if (v.layout == Layout::kDense) continue;  // (its own twin)
      const Variant dense{"dense", v.dtype, Layout::kDense, v.math};
      const Results want = run("ref", c, dense, 17, 2, 8), got = run("ref", c, v, 17, 2, 8);
      EXPECT_EQ(got.grad_input, want.grad_input) << name << " " << v.name;
      EXPECT_EQ(got.grad_weight, want.grad_weight) << name << " " << v.name;
      EXPECT_EQ(got.grad_bias, want.grad_bias) << name << " " << v.name;
    }
  }
}

// The entries that compute a gradient of case c in variant v, each with the gradients it computes
// (computed_by).
std::vector<std::pair<std::string, unsigned>> entries_computing(const Case& c, const Variant& v, unsigned seed) {
  std::vector<std::pair<std::string, unsigned>> entries;
  for (const std::string& name : implementation_names()) {
    if (const unsigned gradients = computed_by(name, c, v, seed); gradients != 0) entries.emplace_back(name, gradients);
  }
  return entries;
}
std::vector<std::string> names_of(const std::vector<std::pair<std::string, unsigned>>& entries) {
  std::vector<std::string> names;
  for (const auto& entry : entries) names.push_back(entry.first);
  return names;
}

TEST(Implementations, EachMatchesTheReference) {
  SlowHostSample sample;
  for (const Case& c : cases()) {
    for (const Variant& v : kVariants) {
      const auto entries = entries_computing(c, v, 11);
      if (sample.skip(names_of(entries), v.name)) continue;
      const Results want = run("ref", c, v, 11, 2);
      for (const auto& [name, gradients] : entries) {
        const Results got = run(name, c, v, 11, 2, 0, false, gradients);
        const std::string where = name + " " + c.name + " " + v.name;
        const double tol = tolerance(v.dtype);
        const std::vector<double>* pairs[3][2] = {{&got.grad_input, &want.grad_input},
                                                  {&got.grad_weight, &want.grad_weight},
                                                  {&got.grad_bias, &want.grad_bias}};
        for (int i = 0; i < 3; ++i) {
          if (!got.took(i, name)) continue;  // this entry does not compute that gradient
          EXPECT_LT(relative_error(*pairs[i][0], *pairs[i][1]), tol) << where << " " << got.chosen[i];
        }
      }
    }
  }
}

bool runs_there(const std::string& name, const Case& c);

// The forward operators' output: gradInput plus a bias per channel. Every gradInput entry adds it in
// float to its sums before the one rounding (fl32(sum) + bias: bit for bit where the result is FLOAT),
// and the reference adds it to its double sums.
TEST(Implementations, GradInputEntriesAddTheOutputBias) {
  std::set<std::string> checked;  // entries
  SlowHostSample sample;
  for (const Case& c : cases()) {
    // (float channels-last views only where channels_last runs: its bits in place)
    for (const Variant& v : {kVariants[0], kVariants[1], kVariants[2], kVariants[3]}) {
      const bool float_rows = v.dtype == ACL_FLOAT && v.layout == Layout::kChannelsLast;
      if (float_rows && !runs_there("channels_last", c)) continue;
      std::vector<std::string> names;  // the gradInput entries for the case
      for (const std::string& name : implementation_names()) {
        if (float_rows && name != "channels_last") continue;
        if ((computed_by(name, c, v, 11) & 1) != 0) names.push_back(name);
      }
      if (sample.skip(names, v.name)) continue;
      const Results want = run("ref", c, v, 11, 2, 0, false, 1 | kWithOutputBias);
      for (const std::string& name : names) {
        const Results got = run(name, c, v, 11, 2, 0, false, 1 | kWithOutputBias);
        const std::string where = name + " " + c.name + " " + v.name;
        ASSERT_TRUE(got.took(0, name)) << where;
        EXPECT_LT(relative_error(got.grad_input, want.grad_input), tolerance(v.dtype)) << where;
        checked.insert(name);
        if (v.dtype != ACL_FLOAT) continue;
        const Results sums = run(name, c, v, 11, 2, 0, false, 1);
        const int64_t channels =
            c.transposed ? c.g.groups * c.g.dst_channels_per_group : c.g.groups * c.g.src_channels_per_group;
        const size_t plane = sums.grad_input.size() / static_cast<size_t>(c.g.batch * channels);
        for (size_t i = 0; i < sums.grad_input.size(); ++i) {
          const int64_t ch = static_cast<int64_t>(i / plane) % channels;
          const float expected = static_cast<float>(sums.grad_input[i]) + static_cast<float>(output_bias(ch));
          ASSERT_EQ(got.grad_input[i], static_cast<double>(expected)) << where << " element " << i;
        }
      }
    }
  }
  std::string names;
  for (const std::string& name : checked) names += name + " ";
  EXPECT_EQ(names,
            "channels_last depthwise direct direct_forward gemm_col2im gemm_flipped_tiles gemm_flipped_windows "
            "gemm_forward_tiles gemm_forward_windows small_group winograd ");
}

// The verbose description of the gemm plan of case `name` (float, dense, 2 threads), or "" where
// there is no such case.
std::string gemm_plan_of(const std::string& name) {
  for (const Case& c : cases()) {
    if (c.name == name) return run("gemm", c, kVariants[0], 11, 2).described;
  }
  return "";
}

// A small plane's forward products take their tasks from blocks of output channels (values checked
// against the reference above, and across instruction sets and thread counts below).
TEST(Implementations, ForwardRowBlocksWherePlanned) {
  const std::string plan = gemm_plan_of("forward_row_blocks");
  EXPECT_NE(plan.find("gradInput=gemm_forward_windows"), std::string::npos) << plan;
  EXPECT_NE(plan.find(":row_blocks="), std::string::npos) << plan;
}

// The depth_major_3d case takes depth-major products in both gradients (its values are checked
// against the reference above, and across instruction sets and thread counts below).
TEST(Implementations, DepthMajorProductsWherePlanned) {
  const std::string described = gemm_plan_of("depth_major_3d");
  const size_t weight_at = described.find("gradWeight=");
  ASSERT_NE(weight_at, std::string::npos) << described;
  EXPECT_LT(described.find(":depth_major"), weight_at) << described;
  EXPECT_NE(described.find(":depth_major", weight_at), std::string::npos) << described;
}

// The band_batches case multiplies 6 consecutive bands per gradWeight product, up to a group of the
// blocked sum (kSumGroup products) on every CPU (its values are checked against the reference above,
// and across instruction sets and thread counts below).
TEST(Implementations, WeightProductsSpanConsecutiveBands) {
  const std::string described = gemm_plan_of("band_batches");
  const size_t weight_at = described.find("gradWeight=gemm");
  ASSERT_NE(weight_at, std::string::npos) << described;
  EXPECT_NE(described.find(":windows:bands=6:", weight_at), std::string::npos) << described;
}

// What the entry of result i decided (the last field of its ConvPlan::choices() line), or "".
std::string decided(const Results& r, int i) {
  const char* const names[3] = {"gradInput,", "gradWeight,", "gradBias,"};
  for (const std::string& line : r.choices) {
    if (line.rfind(names[i], 0) == 0) return line.substr(line.rfind(',') + 1);
  }
  return "";
}

// Every choice of the GEMM entries' decisions forced on (ACLNN_CONVBWD_VARIANTS=<choice>) and off
// (no_<choice>) on every case, in FLOAT and BF16: the decision takes a forced choice where it can and
// never one forced off, and every result stays within a rounding of the reference. Each choice is taken
// somewhere (those that convert 16-bit values in registers, or read a source in place, where the CPU's kit
// does). Pair products on
// the emulated tiles, which every CPU runs; the other choices without them (the emulation is slow).
TEST(Implementations, EveryForcedChoiceGivesTheReference) {
  // (gradWeight's, gemm_col2im's, the forward GEMM tiles' and small_group's)
  const std::vector<std::string> choices = {
      "pack_once", "x_staged", "transposed", "depth_major", "bf16_rows", "bands",         "rounds_blocks",  "narrowed",
      "pairs",     "samples",  "buffered",   "dy_rows",     "rows16",    "source_staged", "source_in_place"};
  std::set<std::string> listed(choices.begin(), choices.end());
  listed.insert("flat");  // (channels_last's: TimeMajorRowsAsOneMatrix forces it)
  EXPECT_EQ(listed, std::set<std::string>(named_choices().begin(), named_choices().end()));
  std::set<std::string> taken;
  int runs = 0;
  const auto check = [&](const Case& c, const Variant& v, const std::string& forced, const char* family = "gemm") {
    if (testing_support::slow_host() && ++runs % 10 != 0) return;  // (a tenth of them on a slow host)
    const Results want = run("ref", c, v, 13, 2);
    const ForcedChoices scope(forced);
    const Results got = run(family, c, v, 13, 2);
    const std::string where = std::string(c.name) + " " + v.name + " " + forced;
    for (int i : {0, 1}) {
      if (!got.took(i, family)) continue;
      const std::string said = decided(got, i);
      for (const std::string& choice : choices) {
        if (forced.find("no_" + choice) != std::string::npos) {
          EXPECT_EQ(said.find(choice + ": "), std::string::npos) << where << ": " << said;
        }
      }
      if (forced == "no_transposed" && i == 1) {  // (gradWeight's pair products are transposed)
        EXPECT_EQ(said.find("pairs: "), std::string::npos) << where << ": " << said;
      }
      const std::string first = forced.substr(0, forced.find(','));
      if (said.find(first + ": forced") != std::string::npos) taken.insert(first);
    }
    // (no_pairs: no entry of the plan multiplies in pairs, whatever it decides)
    if (forced.find("no_pairs") != std::string::npos) {
      EXPECT_EQ(got.described.find(":amx"), std::string::npos) << where << ": " << got.described;
    }
    EXPECT_LT(relative_error(got.grad_input, want.grad_input), tolerance(v.dtype)) << where;
    EXPECT_LT(relative_error(got.grad_weight, want.grad_weight), tolerance(v.dtype)) << where;
  };
  for (const Case& c : cases()) {
    for (const Variant& v : {kVariants[0], kVariants[4]}) {
      for (const std::string& choice : choices) {
        if (choice == "pairs" || choice == "source_in_place") continue;  // (below)
        check(c, v, choice + ",no_pairs");
        check(c, v, "no_" + choice + ",no_pairs");
      }
    }
  }
  for (const Case& c : cases()) {  // (small_group's gradInput, forward or flipped)
    if (!runs_there("small_group", c)) continue;
    for (const Variant& v : {kVariants[0], kVariants[2]}) {
      for (const char* forced : {"buffered", "no_buffered", "source_in_place", "no_source_in_place"}) {
        check(c, v, forced, "small_group");
      }
    }
  }
  setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
  for (const Case& c : cases()) {
    for (const char* forced : {"pairs", "no_pairs", "no_transposed"}) check(c, kVariants[4], forced);
  }
  if (testing_support::slow_host()) return;
  const bool converts = converts_in_registers(plan_gemm_blocking(64, 64, 64, CpuFeatures::current()));
  // (row kernels read a source in place only where masked loads never fault: AVX-512's)
  const bool reads_in_place = cpu_features().isa == Isa::kAvx512;
  for (const std::string& choice : choices) {
    if (choice == "bf16_rows" || choice == "narrowed" || choice == "rows16") {
      if (!converts) continue;
    } else if (choice == "source_in_place" && !reads_in_place) {
      continue;
    }
    EXPECT_EQ(taken.count(choice), 1u) << choice;
  }
}

// A name ACLNN_CONVBWD_VARIANTS holds that no decision knows is said (and ignored), the known ones and
// their no_<choice> not.
TEST(Implementations, UnknownForcedChoicesAreWarnedOf) {
  setenv("ACLNN_CONVBWD_VARIANTS", "pack_once,no_flat,pakc_once", 1);
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "2", 1);  // (warnings printed)
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(forced_choices(), "pack_once,no_flat,pakc_once");
  const std::string said = ::testing::internal::GetCapturedStderr();
  unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
  unsetenv("ACLNN_CONVBWD_VARIANTS");
  EXPECT_NE(said.find("ACLNN_CONVBWD_VARIANTS: pakc_once names no choice"), std::string::npos) << said;
  EXPECT_EQ(said.find("pack_once names"), std::string::npos) << said;
  EXPECT_EQ(said.find("no_flat"), std::string::npos) << said;
}

// The implementations with a kernel per instruction set (chosen by cpuid and ACLNN_CONVBWD_ISA).
const char* const kPerIsa[] = {"gemm", "small_group", "channels_last", "direct"};
// Whether implementation `name` may compute a gradient of case `c` (the others: every case).
bool runs_there(const std::string& name, const Case& c) {
  if (name == "small_group") return c.g.src_channels_per_group <= 16 && c.g.dst_channels_per_group <= 16;
  if (name == "channels_last") return c.g.groups == 1 && c.g.src_size[0] == 1 && c.g.src_size[1] == 1;
  return true;
}
// Two variants for the bit-identity tests: a float and a FLOAT16 one, or for the channels-last GEMMs
// (channels-last views only) a float and a BF16 one.
std::vector<Variant> variants_for(const std::string& name) {
  if (name == "channels_last") return {kVariants[1], kVariants[3]};
  return {kVariants[0], kVariants[2]};
}

TEST(Implementations, EveryInstructionSetMatchesTheReference) {
  for (const Case& c : cases()) {
    for (const Variant& v : {kVariants[0], kVariants[1], kVariants[3]}) {
      unsetenv("ACLNN_CONVBWD_ISA");
      const Results want = run("ref", c, v, 13, 2);  // (once: the reference is the same on every set)
      for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
        if (isa > detected_isa()) continue;
        setenv("ACLNN_CONVBWD_ISA", isa_name(isa), 1);
        for (const char* name : kPerIsa) {
          if (!runs_there(name, c)) continue;
          const Results got = run(name, c, v, 13, 2);
          const std::string where = std::string(isa_name(isa)) + " " + name + " " + c.name + " " + v.name;
          EXPECT_NE(got.described.find(std::string("isa=") + isa_name(isa)), std::string::npos) << got.described;
          if (got.took(0, name)) {
            EXPECT_LT(relative_error(got.grad_input, want.grad_input), tolerance(v.dtype)) << where;
          }
          if (got.took(1, name)) {
            EXPECT_LT(relative_error(got.grad_weight, want.grad_weight), tolerance(v.dtype)) << where;
          }
        }
      }
    }
  }
  unsetenv("ACLNN_CONVBWD_ISA");
}

TEST(Implementations, FusedInstructionSetsGiveIdenticalBits) {
  if (detected_isa() < Isa::kAvx512) GTEST_SKIP() << "needs AVX-512 and AVX2 to compare";
  bf16_on_float_kernels();         // the float kernels (bf16 pair products: BF16PairProducts)
  for (const Case& c : cases()) {  // (cases outermost: each case's inputs are generated once)
    for (const char* name : kPerIsa) {
      if (!runs_there(name, c)) continue;
      for (const Variant& v : variants_for(name)) {
        setenv("ACLNN_CONVBWD_ISA", "avx2", 1);
        const Results avx2 = run(name, c, v, 17, 2);
        setenv("ACLNN_CONVBWD_ISA", "avx512", 1);
        const Results avx512 = run(name, c, v, 17, 3);
        unsetenv("ACLNN_CONVBWD_ISA");
        ASSERT_NE(avx2.described.find("isa=avx2"), std::string::npos) << avx2.described;
        ASSERT_NE(avx512.described.find("isa=avx512"), std::string::npos) << avx512.described;
        EXPECT_EQ(avx2.grad_input, avx512.grad_input) << name << " " << c.name << " " << v.name;
        EXPECT_EQ(avx2.grad_weight, avx512.grad_weight) << name << " " << c.name << " " << v.name;
      }
    }
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// A FLOAT16/BF16 1x1 gradInput with dense planes is narrowed by the AVX-512 micro-kernel as it computes
// it (sgemm_rows' NarrowedRows); the AVX2 kernel stores float tiles that are narrowed afterwards: the
// same bits, and the reference's values. (The dense FLOAT16 layout is in no other variant list.)
TEST(Implementations, NarrowedResultsMatchTheStoredOnes) {
  if (detected_isa() < Isa::kAvx512) GTEST_SKIP() << "needs AVX-512 and AVX2 to compare";
  bf16_on_float_kernels();  // the float kernels
  const Variant half_dense{"float16_dense", ACL_FLOAT16, Layout::kDense, MathMode::kFull};
  for (const Case& c : cases()) {
    if (std::string(c.name) != "flipped_pointwise") continue;
    for (const Variant& v : {half_dense, kVariants[4]}) {
      const Results want = run("ref", c, v, 19, 2);
      setenv("ACLNN_CONVBWD_ISA", "avx2", 1);
      const Results avx2 = run("gemm", c, v, 19, 2);
      setenv("ACLNN_CONVBWD_ISA", "avx512", 1);
      const Results avx512 = run("gemm", c, v, 19, 3);
      unsetenv("ACLNN_CONVBWD_ISA");
      EXPECT_NE(avx512.described.find(":flipped"), std::string::npos) << avx512.described;
      EXPECT_EQ(avx2.grad_input, avx512.grad_input) << v.name;
      EXPECT_LT(relative_error(avx512.grad_input, want.grad_input), tolerance(v.dtype)) << v.name;
    }
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// FLOAT16/BF16 GEMM operands read in place by a micro-kernel that widens 16-bit rows as it loads them
// (AVX2's: ":rows16"): a 1x1 gradInput's source (contiguous planes; whole slivers of its results narrowed
// as they are computed, the rows left, 16 of 6-row slivers, stored after) and a dense dY the
// backward-data GEMM would pack once per sample (the stem's). The same bits as the staged, packed or
// copied paths, which a gapped view of the same values takes, and within a rounding of the reference.
TEST(Implementations, SixteenBitRowsGiveTheStagedBits) {
  bf16_on_float_kernels();  // the float kernels
  std::set<std::string> in_place_cases;
  for (const Case& c : cases()) {
    for (int32_t dtype : {ACL_FLOAT16, ACL_BF16}) {
      const Variant dense{"dense", dtype, Layout::kDense, MathMode::kFull};
      const Variant gapped{"gapped", dtype, Layout::kGapped, MathMode::kFull};
      const Results in_place = run("gemm", c, dense, 23, 2, 0, false, 1);
      if (in_place.described.find(":rows16") == std::string::npos) continue;
      // (A gapped view whose other dims are all single entries is dense too: no other path to compare.)
      const Results staged = run("gemm", c, gapped, 23, 2, 0, false, 1);
      if (staged.described.find(":rows16") != std::string::npos) continue;
      in_place_cases.insert(c.name);
      EXPECT_EQ(in_place.grad_input, staged.grad_input) << c.name << " " << dtype;
      EXPECT_LT(relative_error(in_place.grad_input, run("ref", c, dense, 23, 2, 0, false, 1).grad_input),
                tolerance(dtype))
          << c.name;
    }
  }
  if (selected_isa() == Isa::kAvx2) {  // where the micro-kernel has the loads: both kinds of products
    EXPECT_EQ(in_place_cases.count("flipped_pointwise"), 1u);
    EXPECT_GE(in_place_cases.size(), 2u);
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// A BF16 1x1 source of gradWeight's transposed products read in place by a micro-kernel that widens its
// entries as it broadcasts them (AVX2's: ":bf16_rows"; the piece that starts at the tensor's first
// element staged, as the kernel reads the 16 bits below each entry): the same bits as the staged path
// that a gapped view of the same values takes, for any thread count, within a rounding of the reference.
TEST(Implementations, Bf16SourceRowsInPlaceGiveTheStagedBits) {
  bf16_on_float_kernels();  // the float kernels
  const Variant dense{"bf16_dense", ACL_BF16, Layout::kDense, MathMode::kFull};
  const Variant gapped{"bf16_gapped", ACL_BF16, Layout::kGapped, MathMode::kFull};
  int in_place_cases = 0;
  for (const Case& c : cases()) {
    if (c.transposed || c.g.kernel_volume() != 1) continue;
    const Results one = run("gemm", c, dense, 29, 1, 0, false, 2), three = run("gemm", c, dense, 29, 3, 0, false, 2);
    if (one.described.find(":bf16_rows") == std::string::npos) continue;
    ++in_place_cases;
    const Results staged = run("gemm", c, gapped, 29, 2, 0, false, 2);
    EXPECT_EQ(staged.described.find(":bf16_rows"), std::string::npos) << staged.described;
    EXPECT_EQ(one.grad_weight, staged.grad_weight) << c.name;
    EXPECT_EQ(one.grad_weight, three.grad_weight) << c.name;
    EXPECT_LT(relative_error(one.grad_weight, run("ref", c, dense, 29, 2, 0, false, 2).grad_weight),
              tolerance(ACL_BF16))
        << c.name;
  }
  if (selected_isa() == Isa::kAvx2) {
    EXPECT_GE(in_place_cases, 1);
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// A dense FLOAT16/BF16 gradWeight of the GEMM step summed from partials is rounded into the user's
// tensor as they are added (several chunks' spans, transposed partials' 64 x 64 blocks); one chunk's
// sums narrowed by the micro-kernel as it computes them (":narrowed": whole tiles, the rest of a task's
// row block rounded from its buffer), or else staged whole: at 3 threads, the same bits as the staged
// float dW that a gapped view of the same values takes at 1 (EachMatchesTheReference checks BF16's dense
// and FLOAT16's gapped results against the reference); each kind among the cases.
TEST(Implementations, SixteenBitWeightGradientRoundedByBlocks) {
  bf16_on_float_kernels();  // the float kernels (pair products are transposed ones)
  std::set<std::string> kinds;
  for (const Case& c : cases()) {
    for (int32_t dtype : {ACL_FLOAT16, ACL_BF16}) {
      const Variant dense{"dense", dtype, Layout::kDense, MathMode::kFull};
      const Variant gapped{"gapped", dtype, Layout::kGapped, MathMode::kFull};
      const Results one = run("gemm", c, dense, 31, 3, 0, false, 2);
      if (!one.took(1, "gemm") || one.described.find(":depth_major") != std::string::npos) continue;
      const size_t weight_at = one.described.find("gradWeight=");
      const bool transposed = one.described.find(":transposed", weight_at) != std::string::npos;
      kinds.insert(transposed                                                         ? "transposed"
                   : one.described.find(":narrowed", weight_at) != std::string::npos  ? "narrowed"
                   : one.described.find(":chunks=1:", weight_at) != std::string::npos ? "one chunk"
                                                                                      : "chunks");
      EXPECT_EQ(one.grad_weight, run("gemm", c, gapped, 31, 1, 0, false, 2).grad_weight) << c.name << " " << dtype;
    }
  }
  std::set<std::string> expected{"chunks", "one chunk", "transposed"};
  if (converts_in_registers(plan_gemm_blocking(1, 1, 1, CpuFeatures::current()))) expected.insert("narrowed");
  EXPECT_EQ(kinds, expected);
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// Where the CPU has AVX512_BF16, BF16 inputs (used as they are) are multiplied in pairs, in the AMX
// tiles' order on VDPBF16PS (":amx_avx512bf16", amx_avx512_bf16.cpp): against the reference within
// float accumulation plus one BF16 rounding, the same bits for any thread budget and as the
// emulated tiles, and not under USE_FP16 (the inputs are then FLOAT16 values).
TEST(Implementations, BF16PairProducts) {
  if (!bf16_dot_supported()) GTEST_SKIP() << "the CPU has no AVX512_BF16";
  setenv("ACLNN_CONVBWD_BF16_DOT", "1", 1);  // wherever the CPU runs them (by default on AMD's cores only)
  setenv("ACLNN_CONVBWD_AMX", "0", 1);       // (a CPU's AMX tiles would take them first)
  ASSERT_TRUE(bf16_dot_available());
  const Variant fp16_math{"bf16_dense_fp16_math", ACL_BF16, Layout::kDense, MathMode::kFp16Inputs};
  // Cases whose gradInput, gradWeight took the pair products, per implementation.
  std::map<std::string, int> paired_input, paired_weight;
  for (const std::string name : {"gemm", "channels_last"}) {
    for (const Case& c : cases()) {
      if (!runs_there(name, c)) continue;
      for (const Variant& v : {kVariants[4], kVariants[3], fp16_math}) {
        const Results want = run("ref", c, v, 19, 2);
        const Results one = run(name, c, v, 19, 1), three = run(name, c, v, 19, 3);
        setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
        const Results emulated = run(name, c, v, 19, 2);
        setenv("ACLNN_CONVBWD_AMX", "0", 1);
        const std::string where = name + " " + c.name + " " + v.name + " " + one.described;
        const char* pairs = ":amx_avx512bf16";
        const bool dot = one.described.find(pairs) != std::string::npos;
        const size_t weight_at = one.described.find("gradWeight=");
        paired_input[name] += one.described.find(pairs) < weight_at ? 1 : 0;
        paired_weight[name] +=
            weight_at != std::string::npos && one.described.find(pairs, weight_at) != std::string::npos;
        if (v.math == MathMode::kFp16Inputs) {
          EXPECT_FALSE(dot) << where;
        }
        for (int i = 0; i < 2; ++i) {
          if (!one.took(i, name)) continue;
          const std::vector<double>& got = i == 0 ? one.grad_input : one.grad_weight;
          const std::vector<double>& again = i == 0 ? three.grad_input : three.grad_weight;
          const std::vector<double>& reference = i == 0 ? want.grad_input : want.grad_weight;
          EXPECT_LT(relative_error(got, reference), tolerance(ACL_BF16)) << where;
          EXPECT_EQ(got, again) << where;
          EXPECT_EQ(got, i == 0 ? emulated.grad_input : emulated.grad_weight) << where;
        }
      }
    }
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
  unsetenv("ACLNN_CONVBWD_AMX");
  EXPECT_GE(paired_input["gemm"], 10);
  EXPECT_GE(paired_weight["gemm"], 5);
  EXPECT_GE(paired_input["channels_last"], 1);
  EXPECT_GE(paired_weight["channels_last"], 2);
}

// AMX tiles (kernels/amx/amx.h), emulated: the BF16 gradInput the gemm entries compute in pairs (from
// padded windows, 1x1 tiles, or gemm_col2im's columns) and gradWeight in pairs, and channels_last's
// both, take them where asked (":amx_emulated"),
// within a BF16 rounding of the reference, with the same bits on 1 and 3 threads and on this CPU's FMAs
// (ACLNN_CONVBWD_AMX=fma; test_amx.cpp holds the tiles to their order).
TEST(Implementations, AmxTileProducts) {
  setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
  int inputs = 0, pointwise = 0, col2im = 0, weights = 0;  // (pointwise: from 1x1 tiles)
  int channels_last_inputs = 0, channels_last_weights = 0;
  for (const Case& c : cases()) {
    for (const Variant& v : {kVariants[4], kVariants[3]}) {
      if (runs_there("channels_last", c)) {
        const Results one = run("channels_last", c, v, 23, 1, 0, false, 3), want = run("ref", c, v, 23, 2, 0, false, 3);
        const Results three = run("channels_last", c, v, 23, 3, 0, false, 3);
        setenv("ACLNN_CONVBWD_AMX", "fma", 1);
        const Results fma = run("channels_last", c, v, 23, 2, 0, false, 3);
        setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
        const size_t weight_at = one.described.find("gradWeight=");
        const bool amx[2] = {
            one.described.find(":amx_emulated") < weight_at,
            weight_at != std::string::npos && one.described.find(":amx_emulated", weight_at) != std::string::npos};
        channels_last_inputs += amx[0], channels_last_weights += amx[1];
        for (int i = 0; i < 2; ++i) {
          if (!amx[i] || !one.took(i, "channels_last")) continue;
          const std::vector<double>& got = i == 0 ? one.grad_input : one.grad_weight;
          EXPECT_LT(relative_error(got, i == 0 ? want.grad_input : want.grad_weight), tolerance(ACL_BF16))
              << c.name << " " << one.described;
          EXPECT_EQ(got, i == 0 ? three.grad_input : three.grad_weight) << c.name << " " << one.described;
          EXPECT_EQ(got, i == 0 ? fma.grad_input : fma.grad_weight) << c.name << " (fma) " << one.described;
        }
      }
      const std::string plan = run("gemm", c, v, 23, 1, 0, false, 3, true).described;  // (planned only)
      const size_t weight_at = plan.find("gradWeight=");
      const bool amx[2] = {
          plan.find(":amx_emulated") < weight_at,
          weight_at != std::string::npos && plan.find(":amx_emulated", weight_at) != std::string::npos};
      if (!amx[0] && !amx[1]) continue;
      const Results one = run("gemm", c, v, 23, 1, 0, false, 3);
      inputs += amx[0], weights += amx[1];
      pointwise += amx[0] && one.described.find("_tiles:") < weight_at;
      col2im += amx[0] && one.described.find("gradInput=gemm_col2im:") != std::string::npos;
      const Results want = run("ref", c, v, 23, 2, 0, false, 3), three = run("gemm", c, v, 23, 3, 0, false, 3);
      setenv("ACLNN_CONVBWD_AMX", "fma", 1);  // (the same order on this CPU's FMAs: the same bits)
      const Results fma = run("gemm", c, v, 23, 2, 0, false, 3);
      setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
      const std::string where = std::string(c.name) + " " + v.name + " " + one.described;
      for (int i = 0; i < 2; ++i) {
        if (!amx[i] || !one.took(i, "gemm")) continue;
        const std::vector<double>& got = i == 0 ? one.grad_input : one.grad_weight;
        EXPECT_LT(relative_error(got, i == 0 ? want.grad_input : want.grad_weight), tolerance(ACL_BF16)) << where;
        EXPECT_EQ(got, i == 0 ? three.grad_input : three.grad_weight) << where;
        EXPECT_EQ(got, i == 0 ? fma.grad_input : fma.grad_weight) << where << " (fma)";
      }
    }
  }
  unsetenv("ACLNN_CONVBWD_AMX");
  EXPECT_GE(inputs, 30);
  EXPECT_GE(pointwise, 1);
  EXPECT_GE(col2im, 3);
  EXPECT_GE(weights, 5);
  EXPECT_GE(channels_last_inputs, 1);
  EXPECT_GE(channels_last_weights, 2);
}

// The pair products are taken by default only where they were measured faster (AMD's cores), on
// request ("1") wherever the CPU runs them, and never with "0".
// Checked on what a plan does: a dense BF16 layer's default plan takes them (`:amx_avx512bf16`, the
// tiles' order on VDPBF16PS) exactly then.
TEST(Implementations, BF16PairProductsWhereAsked) {
  const std::vector<Case> all = cases();
  const auto dense =
      std::find_if(all.begin(), all.end(), [](const Case& c) { return std::string(c.name) == "direct_small_plane"; });
  ASSERT_NE(dense, all.end());
  const char* settings[] = {nullptr, "1", "0"};
  const bool expected[] = {bf16_dot_supported() && cpu_is_amd(), bf16_dot_supported(), false};
  setenv("ACLNN_CONVBWD_AMX", "0", 1);  // (a CPU's AMX tiles take the pairs before VDPBF16PS)
  for (int i = 0; i < 3; ++i) {
    if (settings[i] == nullptr) {
      unsetenv("ACLNN_CONVBWD_BF16_DOT");
    } else {
      setenv("ACLNN_CONVBWD_BF16_DOT", settings[i], 1);
    }
    EXPECT_EQ(bf16_dot_available(), expected[i]) << i;
    const Results planned = run("", *dense, kVariants[4], 1, 1);
    EXPECT_EQ(planned.described.find(":amx_avx512bf16") != std::string::npos, expected[i]) << planned.described;
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
  // AMX tiles, where asked for, whatever ACLNN_CONVBWD_BF16_DOT says: `direct` leaves its dense layers to
  // the GEMM entries' tiles (gemm_flipped_windows, or gemm_col2im where that does not take the layer).
  const auto larger =
      std::find_if(all.begin(), all.end(), [](const Case& c) { return std::string(c.name) == "chunked_weight"; });
  ASSERT_NE(larger, all.end());
  setenv("ACLNN_CONVBWD_BF16_DOT", "0", 1);
  setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
  const Results tiled = run("", *larger, kVariants[4], 1, 1), small = run("", *dense, kVariants[4], 1, 1);
  EXPECT_NE(tiled.described.find("gradInput=gemm_flipped_windows:"), std::string::npos) << tiled.described;
  EXPECT_LT(tiled.described.find(":amx_emulated"), tiled.described.find("gradWeight=")) << tiled.described;
  EXPECT_NE(small.described.find("gradInput=gemm_col2im:"), std::string::npos) << small.described;
  EXPECT_LT(small.described.find(":amx_emulated"), small.described.find("gradWeight=")) << small.described;
  unsetenv("ACLNN_CONVBWD_AMX");
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// Whether a forward convolution's strides let it read padded windows: in H and W stride 1, or at
// least as many taps as the stride and a dilation coprime to it (every phase of the source is read).
bool strides_allow_windows(const ConvGeometry& g) {
  for (int a = 1; a < 3; ++a) {
    if (g.stride[a] > 1 && (g.kernel[a] < g.stride[a] || std::gcd(g.dilation[a], g.stride[a]) != 1)) return false;
  }
  return true;
}

// gradInput's bands are re-chosen to waste fewer micro-kernel columns: a 28 x 28 plane (3x3, padding 1:
// windows 30 wide) asked for 8 bands gets 10 of 3 rows, each 88 columns computed as 96 (960 per
// plane); 4 bands of 7 rows compute 208 each (832), the least with at least 4 bands.
TEST(Implementations, BandsFillMicroKernelTiles) {
  const ConvGeometry g = geometry(8, 1, 128, 128, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  BandTiling bands(g, 8, 1024);
  EXPECT_EQ(bands.bands(), 10);
  EXPECT_EQ(bands.columns(), 88);
  bands.fit_tiles(8, 16, 1024);
  EXPECT_EQ(bands.bands(), 4);
  EXPECT_EQ(bands.columns(), 208);
  EXPECT_EQ(bands.band(3).h0, 21);
  EXPECT_EQ(bands.band(3).h1, 28);
  BandTiling narrow(g, 8, 100);  // within 100 columns (3 rows: 960 per plane), single rows compute 28 x 32
  narrow.fit_tiles(8, 16, 100);
  EXPECT_EQ(narrow.bands(), 28);
  EXPECT_EQ(narrow.columns(), 28);
}

TEST(Implementations, StrideOneGradInputAsFlippedForward) {
  for (const Case& c : cases()) {
    bool stride_one = true;
    for (int a = 0; a < 3; ++a) stride_one = stride_one && c.g.stride[a] == 1;
    ConvProblem p;
    p.geometry = c.g;
    p.input_grad = c.transposed ? InputGrad::kForward : InputGrad::kBackwardData;
    p.grad_input.dtype = ACL_FLOAT;
    p.max_threads = 1;
    const std::string text = ConvPlan::build(p, "gemm", "test")->describe();
    // Enough positions for 64 tiles of 128, or, read from padded windows (not 1x1), 64 of 64.
    const int64_t slices = c.g.batch * c.g.groups, pieces = (64 + slices - 1) / slices;
    bool one_by_one = true;
    for (int a = 0; a < 3; ++a) one_by_one = one_by_one && c.g.kernel[a] == 1 && c.g.pad[a] == 0;
    const bool large =
        c.g.src_plane() * slices >= 8192 || (!one_by_one && (c.g.src_plane() + pieces - 1) / pieces >= 64);
    EXPECT_EQ(text.find(":flipped") != std::string::npos, !c.transposed && stride_one && large)
        << c.name << " " << text;
    // Every forward convolution but a 1x1 one whose strides allow reads padded windows, not im2col
    // panels (a transposed layer's, or a flipped one: stride 1).
    const bool forward = text.find(":flipped") != std::string::npos || (c.transposed && strides_allow_windows(c.g));
    EXPECT_EQ(text.find(":windows") != std::string::npos, forward && !one_by_one) << c.name << " " << text;
  }
}

// The staging buffers are sized by max_source_window: no tile's window may exceed it, wherever the
// tile starts; and it is never more than the plane.
TEST(Implementations, SourceWindowsFitTheirBound) {
  for (const Case& c : cases()) {
    for (const ConvGeometry& g : {c.g, flipped_geometry(c.g)}) {
      const int64_t positions = g.dst_plane();
      for (int64_t count : {int64_t{1}, int64_t{7}, g.dst_size[2], g.dst_size[2] + 1, int64_t{300}}) {
        const int64_t bound = max_source_window(g, count);
        EXPECT_LE(bound, g.src_plane()) << c.name;
        for (int64_t o = 0; o < positions; ++o) {
          const PlaneWindow window = source_window(g, o, std::min(positions, o + count));
          ASSERT_LE(window.size(), bound) << c.name << " count " << count << " at " << o;
          ASSERT_LE(window.last, g.src_plane()) << c.name;
        }
      }
    }
  }
}

// A dense (N, C, spatial) view of `dtype` without data (phase 1 only).
View5 dense_view(int64_t n, int64_t c, const int64_t* spatial, int32_t dtype) {
  View5 v;
  v.dtype = dtype;
  const int64_t shape[5] = {n, c, spatial[0], spatial[1], spatial[2]};
  int64_t stride = 1;
  for (int i = 4; i >= 0; --i) {
    v.shape[i] = shape[i];
    v.stride[i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return v;
}

// bf16 inputs with contiguous rows are read from the user's views a tile at a time: the GEMM plans
// book no whole-tensor float copy of the large input (gradWeight's X; the flipped gradInput's dY).
TEST(Implementations, GemmReadsBf16InputsWithoutWholeCopies) {
  const ConvGeometry wide_x = geometry(1, 1, 64, 4, {128, 128}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  const ConvGeometry wide_dy = geometry(1, 1, 4, 64, {128, 128}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  for (bool weight : {true, false}) {
    ConvProblem p;
    p.geometry = weight ? wide_x : wide_dy;
    const ConvGeometry& g = p.geometry;
    p.src = dense_view(1, g.src_channels_per_group, g.src_size, ACL_BF16);
    p.dst = dense_view(1, g.dst_channels_per_group, g.dst_size, ACL_BF16);
    p.wei = dense_view(g.dst_channels_per_group, g.src_channels_per_group, g.kernel, ACL_BF16);
    p.want_weight_grad = weight;
    p.input_grad = weight ? InputGrad::kNone : InputGrad::kBackwardData;
    p.grad_weight = p.wei;
    p.grad_input = p.src;
    p.max_threads = 2;
    const std::unique_ptr<ConvPlan> plan = ConvPlan::build(p, "gemm", "test");
    ASSERT_NE(plan, nullptr);
    const View5& large = weight ? p.src : p.dst;
    const uint64_t float_copy = static_cast<uint64_t>(large.numel()) * sizeof(float);
    EXPECT_LT(plan->workspace_bytes(), float_copy) << (weight ? "gradWeight " : "gradInput ") << plan->describe();
    if (!weight) {
      EXPECT_NE(plan->describe().find(":flipped"), std::string::npos) << plan->describe();
    }
  }
}

// A forward-convolution gradInput (flipped or transposed) stores a BF16/FLOAT16 result from its
// bands' and tiles' own buffers: no float copy of the whole result in the workspace.
TEST(Implementations, ForwardGradInputBooksNoWholeFloatResult) {
  for (const int64_t k : {1, 3}) {  // tiles (1x1: the source rows) and padded-window bands
    for (const int32_t dtype : {ACL_BF16, ACL_FLOAT16}) {
      ConvProblem p;
      p.geometry = geometry(2, 1, 64, 8, {64, 64}, {k, k}, {1, 1}, {k / 2, k / 2}, {1, 1});
      const ConvGeometry& g = p.geometry;
      p.src = dense_view(g.batch, g.src_channels_per_group, g.src_size, dtype);
      p.dst = dense_view(g.batch, g.dst_channels_per_group, g.dst_size, dtype);
      p.wei = dense_view(g.dst_channels_per_group, g.src_channels_per_group, g.kernel, dtype);
      p.input_grad = InputGrad::kBackwardData;
      p.grad_input = p.src;
      p.max_threads = 2;
      const std::unique_ptr<ConvPlan> plan = ConvPlan::build(p, "gemm", "test");
      ASSERT_NE(plan, nullptr);
      EXPECT_NE(plan->describe().find(":flipped"), std::string::npos) << plan->describe();
      const uint64_t float_result = static_cast<uint64_t>(p.grad_input.numel()) * sizeof(float);
      EXPECT_LT(plan->workspace_bytes(), float_result / 2) << plan->describe();
    }
  }
}

// A FLOAT16/BF16 gradWeight from transposed products (32 output channels, 4096 positions) is rounded
// from the blocks of the pass that adds its partials: its plan books no float copy of dW, which the
// plan for the same dW with a gap after its first dim (not dense: staged whole) does.
TEST(Implementations, TransposedSixteenBitWeightGradientBooksNoFloatCopy) {
  for (const int32_t dtype : {ACL_BF16, ACL_FLOAT16}) {
    bf16_on_float_kernels();
    ConvProblem p;
    p.geometry = geometry(1, 1, 64, 32, {64, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
    const ConvGeometry& g = p.geometry;
    p.src = dense_view(g.batch, g.src_channels_per_group, g.src_size, dtype);
    p.dst = dense_view(g.batch, g.dst_channels_per_group, g.dst_size, dtype);
    p.wei = dense_view(g.dst_channels_per_group, g.src_channels_per_group, g.kernel, dtype);
    p.want_weight_grad = true;
    p.input_grad = InputGrad::kNone;
    p.grad_weight = p.wei;
    p.max_threads = 2;
    const std::unique_ptr<ConvPlan> dense = ConvPlan::build(p, "gemm", "test");
    p.grad_weight.stride[0] += 1;
    const std::unique_ptr<ConvPlan> gapped = ConvPlan::build(p, "gemm", "test");
    unsetenv("ACLNN_CONVBWD_BF16_DOT");
    ASSERT_NE(dense, nullptr);
    ASSERT_NE(gapped, nullptr);
    EXPECT_NE(dense->describe().find(":transposed"), std::string::npos) << dense->describe();
    const uint64_t float_weights = static_cast<uint64_t>(p.grad_weight.numel()) * sizeof(float);
    EXPECT_GE(gapped->workspace_bytes(), dense->workspace_bytes() + float_weights) << gapped->describe();
  }
}

// The benchmark suite's layers (tests/benchmark/shapes.txt, direct form) planned for 16 threads:
// every GEMM step runs on all of them, offers at least 64 tasks, and the workspace stays within 64 MiB. The exceptions:
// the 7x7 stem's gradInput, whose 4 samples x 3 input channels are all the disjoint work there is,
// and the TBC layers' channels-last GEMMs (3 tasks per thread).
TEST(Implementations, SuiteLayersOfferEnoughTasksWithinTheWorkspaceBound) {
  const Case layers[] = {
      {"r50_s1_3x3_c64", geometry(8, 1, 64, 64, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"r50_s1_1x1_256to64", geometry(8, 1, 256, 64, {56, 56}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), false},
      {"r50_s2_3x3_c128", geometry(8, 1, 128, 128, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"r50_s3_3x3_c256", geometry(8, 1, 256, 256, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"r50_s4_3x3_c512", geometry(8, 1, 512, 512, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"r50_stem_7x7s2", geometry(4, 1, 3, 64, {224, 224}, {7, 7}, {2, 2}, {3, 3}, {1, 1}), false},
      {"r50_3x3s2_c128", geometry(8, 1, 128, 128, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1}), false},
      {"mbv2_dw3x3_c144", geometry(16, 144, 1, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"rnx50_g32_3x3_c256", geometry(32, 32, 8, 8, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"dlab_dil2_3x3_c256", geometry(4, 1, 256, 256, {28, 28}, {3, 3}, {1, 1}, {2, 2}, {2, 2}), false},
      {"conv1d_k5_c256", geometry(16, 1, 256, 256, {1024}, {5}, {1}, {2}, {1}), false},
      {"conv3d_k3_c64", geometry(2, 1, 64, 64, {8, 28, 28}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), false},
      // Transposed layers as the direct convolution from gradOutput to input they are.
      {"dcgan_tconv_k4s2", geometry(16, 1, 64, 128, {56, 56}, {4, 4}, {2, 2}, {1, 1}, {1, 1}), true},
      {"tconv1d_k16s8", geometry(2, 1, 128, 256, {8192}, {16}, {8}, {4}, {1}), true},
      // ConvTbc layers (T x B x C tensors, (K, Cin, Cout) weights), named tbc_*.
      {"tbc_fairseq_T512", geometry(16, 1, 512, 512, {512}, {3}, {1}, {1}, {1}), false},
      {"tbc_T1024_k5", geometry(8, 1, 256, 256, {1024}, {5}, {1}, {2}, {1}), false},
  };
  for (const Case& c : layers) {
    const ConvGeometry& g = c.g;
    const bool tbc = std::string(c.name).rfind("tbc", 0) == 0;
    // Float views without data (phase 1 only): dense (N, C, D, H, W), or TBC's channels-last ones.
    auto view = [tbc](int64_t n, int64_t ch, const int64_t(&spatial)[3]) {
      View5 v;
      v.dtype = ACL_FLOAT;
      const int64_t shape[5] = {n, ch, spatial[0], spatial[1], spatial[2]};
      int64_t stride = 1;
      for (int i = 4; i >= 0; --i) v.shape[i] = shape[i], v.stride[i] = shape[i] == 1 ? 0 : stride, stride *= shape[i];
      if (tbc) v.stride[1] = ch == 1 ? 0 : 1, v.stride[0] = n == 1 ? 0 : ch, v.stride[4] = n * ch;
      return v;
    };
    const int64_t csrc = g.groups * g.src_channels_per_group, cdst = g.groups * g.dst_channels_per_group;
    ConvProblem p;
    p.geometry = g;
    p.input_grad = c.transposed ? InputGrad::kForward : InputGrad::kBackwardData;
    p.want_weight_grad = true;
    p.src = view(g.batch, csrc, g.src_size), p.dst = view(g.batch, cdst, g.dst_size);
    p.wei = view(cdst, g.src_channels_per_group, g.kernel);
    if (tbc) p.wei.stride[0] = 1, p.wei.stride[1] = cdst, p.wei.stride[4] = cdst * csrc;  // (K, Cin, Cout)
    p.grad_input = c.transposed ? p.dst : p.src, p.grad_weight = p.wei;
    p.max_threads = 16;
    const std::unique_ptr<ConvPlan> plan = ConvPlan::build(p, "", "test");
    ASSERT_NE(plan, nullptr) << c.name;
    const std::string text = plan->describe();
    for (const char* gradient : {"gradInput=", "gradWeight="}) {  // "gradInput=<entry>:tasks=<count>"
      const size_t from = text.find(gradient);
      if (text.compare(from, text.find(' ', from) - from, std::string(gradient) + "small_group:joint") == 0) {
        EXPECT_NE(text.find("gradInput=small_group:tasks="), std::string::npos) << text;
        continue;  // computed by the gradInput step, whose tasks are counted there
      }
      const size_t at = text.find(":tasks=", from);
      ASSERT_NE(at, std::string::npos) << c.name << " " << text;
      const long long tasks = std::stoll(text.substr(at + std::strlen(":tasks=")));
      const bool exception =
          std::string(c.name) == "r50_stem_7x7s2" && std::string(gradient).rfind("gradInput", 0) == 0;
      // The channels-last GEMMs cut 3 tasks per thread (their blocking changes no bit). gradInput's
      // padded-window bands may be half as many when that wastes fewer micro-kernel columns
      // (BandTiling::fit_tiles; every band computes as many columns: equal tasks).
      const bool per_thread = text.find(std::string(gradient) + "channels_last") != std::string::npos;
      const std::string step =
          text.substr(text.find(gradient), text.find(' ', text.find(gradient)) - text.find(gradient));
      const bool fitted = step.rfind("gradInput=gemm_", 0) == 0 && step.find(":windows") != std::string::npos;
      // Every step runs on all 16 threads: none books so much scratch per thread that the workspace budget
      // caps its threads (`:threads=`; the stem's gradInput had been, by a packing buffer sized for products
      // far larger than its tiles).
      EXPECT_EQ(step.find(":threads="), std::string::npos) << c.name << " " << text;
      EXPECT_GE(tasks, exception ? 12 : per_thread ? 3 * 16 : fitted ? 32 : 64) << c.name << " " << text;
      EXPECT_EQ(per_thread, tbc) << c.name << " " << text;
    }
    EXPECT_LE(plan->workspace_bytes(), uint64_t{64} << 20) << c.name;
    // The GEMM weight gradient of every layer but a 1x1 one reads X from padded windows (strided
    // ones from their phases).
    const size_t at = text.find("gradWeight=");
    const std::string weight_step = text.substr(at, text.find(' ', at) - at);
    bool one_by_one = true;
    for (int a = 0; a < 3; ++a) one_by_one = one_by_one && g.kernel[a] == 1;
    if (weight_step.rfind("gradWeight=gemm_", 0) == 0) {
      EXPECT_EQ(weight_step.find(":windows") != std::string::npos, strides_allow_windows(g) && !one_by_one)
          << c.name << " " << text;
    }
  }
}

TEST(Implementations, DefaultChoice) {
  const Results r = run("", cases()[0], kVariants[0], 1, 1);
  EXPECT_EQ(r.chosen[0], "gemm_flipped_windows");
  EXPECT_EQ(r.chosen[1], "gemm_weight_windows");
  EXPECT_EQ(r.chosen[2], "lanes");
  const Results forced = run("ref", cases()[0], kVariants[0], 1, 1);
  for (const std::string& chosen : forced.chosen) EXPECT_EQ(chosen, "ref");
  const Results unknown = run("no_such_kernel,gemm", cases()[0], kVariants[0], 1, 1);
  EXPECT_EQ(unknown.family[0], "gemm");
  EXPECT_EQ(unknown.chosen[2], "lanes");  // a list without a named entry keeps its order
  for (const Case& c : cases()) {         // one channel in and out per group: the small-group kernels, and
    // the direct depthwise ones for the gradInput of a direct layer without a flipped form (stride > 1)
    if (c.g.src_channels_per_group != 1 || c.g.dst_channels_per_group != 1) continue;
    const Results depthwise = run("", c, kVariants[0], 1, 1);
    EXPECT_EQ(depthwise.chosen[0], c.transposed || flippable(c.g) ? "small_group" : "depthwise") << c.name;
    EXPECT_EQ(depthwise.chosen[1], "small_group") << c.name;
  }
  for (const Case& c : cases()) {  // dense cases: the direct kernels, but BF16 pairs in the GEMMs
    if (std::string(c.name).rfind("direct", 0) != 0) continue;
    EXPECT_EQ(run("", c, kVariants[0], 1, 1).chosen[0], c.transposed && !flippable(c.g) ? "direct_forward" : "direct")
        << c.name;
    // Where the CPU (or a forced setting) multiplies BF16 in pairs, the direct kernels leave the layer to
    // the GEMM entry with pair products that takes it: gemm_forward_windows for a transposed layer,
    // gemm_flipped_windows or gemm_col2im's pair products for a direct one. Whether that entry takes the
    // layer is asked of the entry itself (forced first in its list), never assumed from the CPU.
    const char* gemm = c.transposed ? "gemm_forward_windows" : "gemm_flipped_windows";
    const bool gemm_takes = run(gemm, c, kVariants[4], 1, 1, 0, kNoPoison, 7, true).chosen[0] == gemm ||
                            (!c.transposed && col2im_pair_products_fit(c.g));
    const bool pairs = amx_tiles() != AmxTiles::kNone;
    EXPECT_EQ(run("", c, kVariants[4], 1, 1).family[0], pairs && gemm_takes ? "gemm" : "direct")
        << c.name << " (pair products " << (pairs ? "on" : "off") << ")";
  }
  for (const Case& c : cases()) {  // the other small-group cases: the small-group kernels
    if (std::string(c.name).rfind("small_group", 0) != 0) continue;
    const Results small = run("", c, kVariants[0], 1, 1);
    EXPECT_EQ(small.chosen[0], "small_group") << c.name;
    EXPECT_EQ(small.chosen[1], "small_group") << c.name;
  }
}

// Underflow: where products and partial sums are subnormal, a rounding errs by up to 2^-150 absolutely (half
// the smallest subnormal), not relatively, and winograd's weight transform halves W's entries twice at most
// (each U entry within 2^-148 of its exact value), an error the products carry multiplied by the transformed
// source V. The documented bound (docs/kernels.md, winograd): per output, 2^-148 * sum of |V| over the 9 entries
// and n depth rows it multiplies (|V| <= 4 max |source|), plus 2^-150 for each FMA of its 9 blocked sums and the
// output's rounding. Every output here is subnormal: the relative bound alone would allow no error.
TEST(Implementations, WinogradUnderflowWithinTheAbsoluteTerm) {
  int checked = 0, inexact = 0;
  for (const Case& c : cases()) {
    if (std::string(c.name).rfind("winograd", 0) != 0) continue;
    const Variant& v = kVariants[0];
    const Results planned = run("winograd", c, v, 5, 2, 0, kSubnormalWeights, 1, true);
    if (!planned.took(0, "winograd")) continue;
    const Results got = run("winograd", c, v, 5, 2, 0, kSubnormalWeights, 1);
    const Results want = run("ref", c, v, 5, 2, 0, kSubnormalWeights, 1);
    const ConvGeometry& g = c.g;
    const double n = double(std::max(g.src_channels_per_group, g.dst_channels_per_group) * g.kernel[0]);
    const double bound = std::ldexp(9 * n * 4 * 4.0, -148) + std::ldexp(9 * n + 1, -150);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < want.grad_input.size(); ++i) {
      worst = std::max(worst, std::abs(got.grad_input[i] - want.grad_input[i]));
      largest = std::max(largest, std::abs(want.grad_input[i]));
    }
    EXPECT_LT(largest, std::ldexp(1.0, -126)) << c.name << ": every output subnormal";
    EXPECT_LE(worst, bound) << c.name;
    ++checked;
    inexact += worst > 0;
  }
  EXPECT_GE(checked, 4);
  EXPECT_GT(inexact, 0) << "no case underflowed: the absolute term went untested";
}

// small_group's depthwise 3 x 3 gradInput reads its source in place (`:in_place`) where the selected
// instruction set's kernels do (AVX-512): float values in planes of one depth read by one output plane;
// staged otherwise (FLOAT16, fp16 math, planes not contiguous, depth padding). The values: the tests above (the
// reference's values, every set's bits).
TEST(Implementations, DepthwiseBandsReadTheirSourceInPlace) {
  const bool avx512 = selected_isa() == Isa::kAvx512;
  for (const Case& c : cases()) {
    const std::string name = c.name;
    if (name != "depthwise_bands" && name != "depthwise_bands_depth_pad") continue;
    for (const Variant& v : kVariants) {
      const Results r = run("small_group", c, v, 1, 1, 0, kNoPoison, 1, true);
      if (r.chosen[0] != "small_group") continue;
      const bool expected = avx512 && name == "depthwise_bands" && v.dtype == ACL_FLOAT && v.math == MathMode::kFull &&
                            v.layout == Layout::kDense;
      EXPECT_EQ(r.described.find(":in_place") != std::string::npos, expected)
          << name << " " << v.name << ": " << r.described;
    }
  }
}

// Where small_group computes both gradInput and gradWeight, one step computes them together
// (`:joint`), and for a direct layer whose dY it stages whole as the user's values gradBias too
// (`:joint:bias`); its results are the bits of the steps planned alone, for every dtype, layout and
// cubeMathType (and, in the tests above, the reference's values and any thread count's bits).
TEST(Implementations, JointStepGivesTheSeparateStepsBits) {
  size_t joint = 0, with_bias = 0;
  for (const Case& c : cases()) {
    if (!runs_there("small_group", c)) continue;
    for (const Variant& v : variants_for("small_group")) {
      const Results all = run("small_group", c, v, 9, 2);
      if (all.chosen[0] != "small_group" || all.chosen[1] != "small_group") continue;
      EXPECT_NE(all.described.find(" gradWeight=small_group:joint"), std::string::npos) << all.described;
      // (Not where a trailing padding wider than the kernel reaches leaves rows of dY unstaged.)
      bool staged_whole = true;
      for (int a = 0; a < 3; ++a) staged_whole &= c.g.dst_size[a] <= c.g.src_size[a] + c.g.pad[a];
      const bool bias = !c.transposed && v.math == MathMode::kFull && staged_whole;
      EXPECT_EQ(all.described.find(":joint:bias") != std::string::npos, bias) << all.described;
      EXPECT_EQ(all.described.find("gradBias=lanes:joint") != std::string::npos, bias) << all.described;
      const Results input = run("small_group", c, v, 9, 3, 0, false, 1);
      const Results weight = run("small_group", c, v, 9, 1, 0, false, 2);
      const Results alone = run("small_group", c, v, 9, 2, 0, false, 4);
      // gradBias from another implementation than `lanes`: its own step, not offered to the joint one.
      const Results ref_bias = run("small_group,ref", c, v, 9, 2);
      EXPECT_EQ(ref_bias.chosen[2], "ref") << c.name;
      EXPECT_NE(ref_bias.described.find(" gradWeight=small_group:joint gradBias=ref:tasks="), std::string::npos)
          << ref_bias.described;
      EXPECT_EQ(input.described.find(":joint"), std::string::npos) << input.described;
      EXPECT_EQ(all.grad_input, input.grad_input) << c.name << " " << v.name;
      EXPECT_EQ(all.grad_weight, weight.grad_weight) << c.name << " " << v.name;
      EXPECT_EQ(all.grad_bias, alone.grad_bias) << c.name << " " << v.name;
      ++joint;
      with_bias += bias;
    }
  }
  EXPECT_GE(joint, 20u);
  EXPECT_GE(with_bias, 10u);
}

// Every implementation at 1, 2 and 3 threads, bit for bit, on its two variants (variants_for); the
// reference on float tensors only (its double sums are the same kernels for every dtype, half of this
// test's time when it ran both; ReferenceKernels.BitIdenticalForAnyThreadCount checks the kernels).
TEST(Implementations, BitIdenticalForAnyThreadBudget) {
  SlowHostSample sample;
  for (const Case& c : cases()) {  // (cases outermost: each case's inputs are generated once)
    for (const std::string& name : implementation_families()) {
      if (!runs_there(name, c)) continue;
      for (const Variant& v : name == "ref" ? std::vector<Variant>{kVariants[0]} : variants_for(name)) {
        const unsigned gradients = name == "ref" ? 7 : computed_by(name, c, v, 5);
        if (gradients == 0) continue;  // (the other entries' gradients are checked in their own turn)
        if (sample.skip({name}, v.name)) continue;
        const Results one = run(name, c, v, 5, 1, 0, false, gradients);
        for (int threads : {2, 3}) {
          const Results more = run(name, c, v, 5, threads, 0, false, gradients);
          const std::string where = name + " " + c.name + " " + v.name;
          const std::vector<double>* pairs[3][2] = {{&one.grad_input, &more.grad_input},
                                                    {&one.grad_weight, &more.grad_weight},
                                                    {&one.grad_bias, &more.grad_bias}};
          for (int i = 0; i < 3; ++i) {
            if ((gradients >> i & 1) != 0) {
              EXPECT_EQ(*pairs[i][0], *pairs[i][1]) << where << " gradient " << i;
            }
          }
        }
      }
    }
  }
}

// 1-D layers in time-major views (ConvTbc's layout) take the channels-last gradients over every
// sample's rows as one matrix (`:interleaved`): against the reference, and the same bits for any
// thread count (the tiles of rows, and the pieces packed, change with it); forced apart (no_flat), a unit
// per sample, against the reference too. FLOAT rows are read in place. FLOAT16/BF16 ones are never copied whole:
// gradWeight's operands are converted as they are packed. gradInput goes in chunks of rows (16-bit: each tap's dY rows
// widened into a small block, dX summed in float and rounded once per chunk): the last case's one-thread tile (1600
// rows, 512 output channels) is cut into chunks wherever L2 is below 3 MiB, its taps 2 positions (16
// rows) apart across the chunks' edges. (The float kernels: BF16 pair products read the user's BF16
// rows per sample instead.)
TEST(Implementations, TimeMajorRowsAsOneMatrix) {
  bf16_on_float_kernels();
  std::vector<Case> time_major_cases;
  for (const Case& c : cases()) {
    if (std::string(c.name).rfind("channels_last", 0) == 0) time_major_cases.push_back(c);
  }
  const Case chunks{"channels_last_chunks", geometry(8, 1, 8, 512, {600}, {3}, {1}, {2}, {2}), false};
  time_major_cases.push_back(chunks);
  for (const int32_t dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
    const Variant time_major{"time_major", dtype, Layout::kTimeMajor, MathMode::kFull};
    for (const Case& c : time_major_cases) {
      const std::string where = std::string(c.name) + " dtype " + std::to_string(dtype);
      const Results want = run("ref", c, time_major, 3, 2);
      const Results one = run("channels_last", c, time_major, 3, 1);
      const size_t weight_at = one.described.find("gradWeight=channels_last:");
      ASSERT_NE(weight_at, std::string::npos) << where << " " << one.described;
      EXPECT_NE(one.described.find("gradInput=channels_last:"), std::string::npos) << where << " " << one.described;
      EXPECT_LT(one.described.find(":interleaved"), weight_at) << where << " " << one.described;
      EXPECT_NE(one.described.find(":interleaved", weight_at), std::string::npos) << where << " " << one.described;
      if (std::string(c.name) == chunks.name) {
        EXPECT_LT(one.described.find(":interleaved:chunks="), weight_at) << where << " " << one.described;
      }
      EXPECT_LT(relative_error(one.grad_input, want.grad_input), tolerance(dtype)) << where;
      EXPECT_LT(relative_error(one.grad_weight, want.grad_weight), tolerance(dtype)) << where;
      for (int threads : {2, 3}) {
        const Results more = run("channels_last", c, time_major, 3, threads);
        EXPECT_EQ(one.grad_input, more.grad_input) << where << " " << threads;
        EXPECT_EQ(one.grad_weight, more.grad_weight) << where << " " << threads;
      }
      const ForcedChoices apart("no_flat");  // (a unit per sample)
      const Results units = run("channels_last", c, time_major, 3, 2);
      EXPECT_EQ(units.described.find(":interleaved"), std::string::npos) << where << " " << units.described;
      EXPECT_LT(relative_error(units.grad_input, want.grad_input), tolerance(dtype)) << where;
      EXPECT_LT(relative_error(units.grad_weight, want.grad_weight), tolerance(dtype)) << where;
    }
  }
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
}

// A source entry that only some taps reach changes only their results: an infinity at the end of
// each source row gives the reference's infinities and NaNs, and finite values everywhere else
// (the lanes past a row's end must not read it).
TEST(Implementations, InfinitiesStayWhereTheyReach) {
  std::map<std::string, size_t> finite, compared;  // per implementation
  for (const Case& c : cases()) {                  // (the reference once per case: gradWeight only)
    const Results want = run("ref", c, kVariants[0], 3, 2, 0, true, 2);
    for (const std::string& name : implementation_names()) {
      if ((computed_by(name, c, kVariants[0], 3) & 2) == 0) continue;
      const Results got = run(name, c, kVariants[0], 3, 2, 0, true, 2);
      if (!got.took(1, name)) continue;
      ++compared[name];
      for (size_t i = 0; i < want.grad_weight.size(); ++i) {
        finite[name] += std::isfinite(want.grad_weight[i]) ? 1 : 0;
        EXPECT_EQ(std::isfinite(got.grad_weight[i]), std::isfinite(want.grad_weight[i]))
            << name << " " << c.name << " " << i;
      }
    }
  }
  for (const auto& [name, count] : compared) {
    EXPECT_GT(finite[name], 0u) << name << " (" << count << " cases)";  // some taps never reach the row ends
  }
}

// Padding is absent, not zero: with infinities and NaNs in every input, next to padding (corners,
// first taps), every implementation gives the reference's pattern of NaNs and infinities (their
// signs too) in every gradient, and the reference's values elsewhere.
// Also with a NaN in W's last entry alone (kLastWeightNaN): an entry that tests W as it packs it
// (PlanBuilder::weights_tested) must find it in its last packing task, or the repair would be skipped.
TEST(Implementations, NonFiniteInputsGiveTheReferencesPattern) {
  std::map<std::string, size_t> compared, finite;
  // (dense, channels-last for its own entry, float and BF16 (pair products: channels_last has no repair), and
  // BF16 dense: weights converted as they are packed; on a slow host the float ones: every entry's repair
  // paths, the release stage checking the BF16 ones' values)
  std::vector<std::pair<Variant, Poison>> runs = {
      {kVariants[0], kNonFinite}, {kVariants[1], kNonFinite}, {kVariants[0], kLastWeightNaN}};
  if (!testing_support::slow_host())
    runs.insert(runs.end(), {{kVariants[3], kNonFinite}, {kVariants[4], kLastWeightNaN}});
  SlowHostSample sample;
  for (const Case& c : cases()) {
    for (const auto& [v, poison] : runs) {
      const auto entries = entries_computing(c, v, 5);
      if (sample.skip(names_of(entries), v.name + std::string(" ") + std::to_string(poison))) continue;
      const Results want = run("ref", c, v, 5, 2, 0, poison);
      for (const auto& [name, gradients] : entries) {
        const Results got = run(name, c, v, 5, 2, 0, poison, gradients);
        const std::vector<double>* pairs[3][2] = {{&got.grad_input, &want.grad_input},
                                                  {&got.grad_weight, &want.grad_weight},
                                                  {&got.grad_bias, &want.grad_bias}};
        for (int i = 0; i < 3; ++i) {
          if (!got.took(i, name)) continue;
          ++compared[name];
          const std::vector<double>&out = *pairs[i][0], &ref = *pairs[i][1];
          ASSERT_EQ(out.size(), ref.size());
          // (the message is built only where a check fails: built per entry, it cost more than the checks)
          const std::string about = name + " " + c.name + " " + v.name + " gradient " + std::to_string(i);
          const auto where = [&about](size_t e) { return about + " entry " + std::to_string(e); };
          for (size_t e = 0; e < ref.size(); ++e) {
            if (std::isfinite(ref[e])) {
              ++finite[name];
              EXPECT_NEAR(out[e], ref[e], 1e-3 + std::abs(ref[e]) * tolerance(v.dtype)) << where(e);
            } else {
              EXPECT_EQ(std::isnan(out[e]), std::isnan(ref[e])) << where(e) << ": " << out[e] << " vs " << ref[e];
              if (std::isinf(ref[e])) {
                EXPECT_EQ(out[e], ref[e]) << where(e);
              }
            }
          }
        }
      }
    }
  }
  for (const std::string& name : implementation_names()) {
    EXPECT_GT(compared[name], 0u) << name;
    EXPECT_GT(finite[name], 0u) << name;
  }
}

// The workspace grows at most to workspace_budget() from one thread to any count: steps whose
// per-thread scratch would take it further run on fewer threads (`:threads=` in the description),
// with the same bits.
TEST(Implementations, WorkspaceWithinItsBudgetAtAnyThreadCount) {
  size_t capped = 0;
  std::vector<Case> budget_cases = cases();
  // Rows so wide that direct's per-thread rows (its staged dY and result tile, 2.9 MiB) take more than the
  // 2 MiB a thread the budget grants: the step runs on fewer threads (`:threads=`) on every instruction set.
  budget_cases.push_back(
      {"direct_rows_past_budget", geometry(1, 1, 16, 17, {2, 9000}, {1, 3}, {1, 1}, {0, 1}, {1, 1}), false});
  for (const Case& c : budget_cases) {
    for (const std::string& name : {std::string(""), std::string("gemm"), std::string("small_group")}) {
      const Results one = run(name, c, kVariants[0], 13, 1, 0, kNoPoison, 7, true);
      for (int threads : {2, 7, 64}) {
        const Results many = run(name, c, kVariants[0], 13, threads, 0, kNoPoison, 7, true);
        const double budget = workspace_budget(double(one.workspace), threads);
        EXPECT_LE(double(many.workspace), budget + kWorkspaceAlign)
            << name << " " << c.name << " " << threads << ": " << many.described;
        if (threads != 64 || many.described.find(":threads=") == std::string::npos || capped >= 6) continue;
        ++capped;  // a few of them run: the capped steps give the bits of one thread
        const Results got = run(name, c, kVariants[0], 13, 64), want = run(name, c, kVariants[0], 13, 1);
        EXPECT_EQ(got.grad_input, want.grad_input) << name << " " << c.name;
        EXPECT_EQ(got.grad_weight, want.grad_weight) << name << " " << c.name;
        EXPECT_EQ(got.grad_bias, want.grad_bias) << name << " " << c.name;
      }
    }
  }
  EXPECT_GT(capped, 0u);
}

TEST(Implementations, WorkspaceAtAnyAddress) {
  for (const Case& c : cases()) {
    for (const Variant& v : {kVariants[0], kVariants[3]}) {
      const Results aligned = run("", c, v, 7, 2);
      for (int misalign : {1, 4, 36}) {
        const Results shifted = run("", c, v, 7, 2, misalign);
        EXPECT_EQ(aligned.grad_input, shifted.grad_input) << c.name << " " << v.name << " +" << misalign;
        EXPECT_EQ(aligned.grad_weight, shifted.grad_weight) << c.name << " " << v.name << " +" << misalign;
      }
    }
  }
}

}  // namespace
}  // namespace aclnn_cpu

namespace aclnn_cpu {
namespace {

TEST(WorkspaceLedger, AlignedRegionsAndStepAreaReuse) {
  WorkspaceLedger ledger;
  EXPECT_EQ(ledger.total_bytes(), 0u);                         // nothing booked: no workspace at all
  const auto input = ledger.book("input", 10, sizeof(float));  // 40 -> 64 bytes
  ledger.begin_step();
  const auto a = ledger.book_step("a", 100, sizeof(float), 3);  // 3 x 448
  ledger.begin_step();
  const auto b = ledger.book_step("b", 1, 1);  // 64, reuses the start of the step area
  EXPECT_FALSE(ledger.overflowed());
  EXPECT_EQ(ledger.total_bytes(), 64u + 3 * 448u + 63u);
  std::vector<unsigned char> buffer(ledger.total_bytes() + 1);
  const Workspace workspace(ledger, buffer.data() + 1);  // any address
  for (auto region : {input, a, b}) EXPECT_EQ(reinterpret_cast<uintptr_t>(workspace.at<char>(region)) % 64, 0u);
  EXPECT_EQ(workspace.at<char>(a, 1) - workspace.at<char>(a, 0), 448);
  EXPECT_EQ(workspace.at<char>(a), workspace.at<char>(b));
  EXPECT_EQ(workspace.at<char>(a) - workspace.at<char>(input), 64);
  EXPECT_LE(workspace.at<char>(a, 2) + 448, reinterpret_cast<char*>(buffer.data() + buffer.size()));
  EXPECT_EQ(workspace.at<char>(-1), nullptr);
}

TEST(WorkspaceLedger, OverflowIsReportedNotWrapped) {
  WorkspaceLedger ledger;
  ledger.book("huge", uint64_t{1} << 62, 8);
  EXPECT_TRUE(ledger.overflowed());
  WorkspaceLedger copies;
  copies.book_step("per_thread", uint64_t{1} << 40, 4, uint64_t{1} << 30);
  EXPECT_TRUE(copies.overflowed());
}

TEST(WorkspaceLedger, PlanOfAnUnbookableProblemFails) {
  ConvProblem p;
  ConvGeometry& g = p.geometry;
  g.batch = int64_t{1} << 31, g.src_channels_per_group = int64_t{1} << 30, g.dst_channels_per_group = 1;
  g.src_size[2] = g.dst_size[2] = 1;
  for (View5* v : {&p.src, &p.dst, &p.wei, &p.grad_weight}) v->dtype = ACL_FLOAT16;  // packed: 4 bytes each
  p.src.shape[0] = g.batch, p.src.shape[1] = g.src_channels_per_group;
  p.dst.shape[0] = g.batch;
  p.wei.shape[1] = g.src_channels_per_group;
  p.grad_weight = p.wei;
  p.want_weight_grad = true;
  EXPECT_EQ(ConvPlan::build(p, "", "test"), nullptr);
}

}  // namespace
}  // namespace aclnn_cpu
