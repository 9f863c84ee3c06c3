#include "kernels/gemm/padded_window.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "common/dtype.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/common/runs.h"
#include "kernels/common/tiling.h"
#include "kernels/common/transpose_4x4.h"
#include "kernels/matmul/bf16_pairs.h"

namespace aclnn_cpu {

bool padded_windows_apply(const ConvGeometry& g) {
  if (g.batch <= 0) return false;
  for (int a = 0; a < 3; ++a) {  // (sizes that keep every window size far below 2^63)
    const int64_t s = g.stride[a];
    if (s <= 0 || s > (int64_t{1} << 20) || g.kernel[a] <= 0 || g.dst_size[a] <= 0 ||
        g.dst_size[a] > (int64_t{1} << 20) || !product_within(g.kernel[a], g.dilation[a], int64_t{1} << 20))
      return false;
    // Taps kh = 0 .. K-1 read phases kh*d mod s: all s of them when gcd(d, s) = 1 and K >= s.
    if (a > 0 && s > 1 && (g.kernel[a] < s || std::gcd(g.dilation[a], s) != 1)) return false;
  }
  return true;
}

BandTiling::BandTiling(const ConvGeometry& g, int64_t bands, int64_t max_columns) : g_(g) {
  const int64_t out_h = g.dst_size[1], out_w = g.dst_size[2];
  const int64_t spill = (g.kernel[2] - 1) * g.dilation[2] / g.stride[2];  // columns of X past a row's width
  const int64_t per_plane = ceil_div(std::max<int64_t>(1, bands), std::max<int64_t>(1, g.dst_size[0]));
  if (out_w + spill <= max_columns && out_h >= per_plane) {  // whole rows
    rows_ = std::clamp<int64_t>(out_h / per_plane, 1, max_columns / (out_w + spill));
    width_ = out_w;
    per_plane_ = ceil_div(out_h, rows_);
  } else {  // pieces of one row
    whole_rows_ = false;
    const int64_t per_row = ceil_div(per_plane, std::max<int64_t>(1, out_h));
    width_ = std::clamp<int64_t>(std::min(out_w / per_row, max_columns - spill), 1, std::max<int64_t>(1, out_w));
    per_plane_ = out_h * ceil_div(out_w, width_);
  }
}

void BandTiling::fit_tiles(int64_t bands, int64_t granularity, int64_t max_columns) {
  if (!whole_rows_ || granularity <= 0) return;
  const int64_t out_h = g_.dst_size[1], x = window_width();
  const int64_t least = ceil_div(ceil_div(std::max<int64_t>(1, bands), std::max<int64_t>(1, g_.dst_size[0])), 2);
  // Every band computes (rows - 1) X + W columns (the last one too: it reads past the plane).
  auto computed = [&](int64_t rows) { return ceil_div(out_h, rows) * round_up((rows - 1) * x + width_, granularity); };
  int64_t best = rows_;
  for (int64_t rows = 1; rows <= out_h && (rows - 1) * x + width_ <= max_columns; ++rows) {
    if (ceil_div(out_h, rows) >= least && computed(rows) < computed(best)) best = rows;
  }
  rows_ = best;
  per_plane_ = ceil_div(out_h, rows_);
}

OutputBand BandTiling::band(int64_t index) const {
  OutputBand b;
  b.od = index / per_plane_;
  const int64_t i = index % per_plane_;
  if (whole_rows_) {
    b.h0 = i * rows_;
    b.h1 = std::min(g_.dst_size[1], b.h0 + rows_);
    b.w0 = 0;
    b.w1 = g_.dst_size[2];
  } else {
    const int64_t pieces = ceil_div(g_.dst_size[2], width_);
    b.h0 = i / pieces;
    b.h1 = b.h0 + 1;
    b.w0 = i % pieces * width_;
    b.w1 = std::min(g_.dst_size[2], b.w0 + width_);
  }
  return b;
}

int64_t BandTiling::channel_floats() const {
  int64_t floats = g_.kernel[0];
  for (int64_t factor : {g_.stride[1], g_.stride[2], window_rows(), window_width()}) {
    if (__builtin_mul_overflow(floats, factor, &floats)) return INT64_MAX;
  }
  return floats;
}

void BandTiling::row_offsets(int64_t row_begin, int64_t row_end, int64_t first_channel, int64_t* out) const {
  const int64_t rows = window_rows(), width = window_width(), sh = g_.stride[1], sw = g_.stride[2];
  const int64_t taps_hw = g_.kernel[1] * g_.kernel[2], taps = g_.kernel[0] * taps_hw;
  if (taps == 0) return;  // no rows
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t c = r / taps - first_channel, kd = r % taps / taps_hw;
    const int64_t h = r % taps_hw / g_.kernel[2] * g_.dilation[1], w = r % g_.kernel[2] * g_.dilation[2];
    *out++ = ((((c * g_.kernel[0] + kd) * sh + h % sh) * sw + w % sw) * rows + h / sh) * width + w / sw;
  }
}

namespace {

// Calls line(offset, id, ih, first, x0, x1) for every line of a band's window (padded_window.h):
// `offset` its place in a channel's window, (id, ih) the source plane and row it copies (inside
// the source or not), `first` the source column of its entry 0, and [x0, x1) the entries inside
// the source row (x0 = x1 = width where the line lies outside the source: all padding).
// (Only the lines of kernel depths [depths.begin, depths.end).)
template <typename Line>
void for_each_window_line(const ConvGeometry& g, const BandTiling& tiling, const OutputBand& band, KernelDepths depths,
                          Line line) {
  const int64_t rows = tiling.window_rows(), width = tiling.window_width();
  const int64_t sh = g.stride[1], sw = g.stride[2];
  for (int64_t kd = depths.begin; kd < depths.end; ++kd) {
    const int64_t id = band.od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    for (int64_t a = 0; a < sh; ++a) {
      for (int64_t b = 0; b < sw; ++b) {
        const int64_t first = band.w0 * sw + b - g.pad[2];  // source column of x = 0
        // Entries [x0, x1) lie inside the source row.
        const int64_t x0 = std::min(width, ceil_div(std::max<int64_t>(0, -first), sw));
        const int64_t x1 = std::clamp(ceil_div(std::max<int64_t>(0, g.src_size[2] - first), sw), x0, width);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t ih = (band.h0 + r) * sh + a - g.pad[1];
          const bool inside = id >= 0 && id < g.src_size[0] && ih >= 0 && ih < g.src_size[1] && x0 < x1;
          line((((kd * sh + a) * sw + b) * rows + r) * width, id, ih, first, inside ? x0 : width, inside ? x1 : width);
        }
      }
    }
  }
}

KernelDepths all_depths(const ConvGeometry& g) { return {0, g.kernel[0]}; }

}  // namespace

KernelDepths kernel_depths_inside(const ConvGeometry& g, int64_t od) {
  KernelDepths inside{g.kernel[0], 0};
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    if (id >= 0 && id < g.src_size[0]) inside = {std::min(inside.begin, kd), kd + 1};
  }
  return inside.end > inside.begin ? inside : KernelDepths{};
}

void stage_padded_window(const View5& view, MathMode math, const ConvGeometry& g, const BandTiling& tiling, int64_t n,
                         int64_t c0, int64_t channels, const OutputBand& band, KernelDepths depths, int64_t slack,
                         float* out, const Conversions16* conversions) {
  const int64_t width = tiling.window_width(), sw = g.stride[2], channel_floats = tiling.channel_floats();
  // Channels nearer in memory than positions (channels last: TBC) are read a position's channels
  // together, all channels of a window line at once; otherwise channel by channel, a run each.
  const bool channels_last = channels > 1 && std::abs(view.stride[1]) < std::abs(view.stride[4]);
  // FLOAT entries 1 or 2 apart in the source (a unit-stride row, or its phases for stride 2), read as they are.
  const int64_t step = view.stride[4] * sw;
  const bool float_rows = !channels_last && view.dtype == ACL_FLOAT && math != MathMode::kFp16Inputs &&
                          (step == 1 || step == 2) && view.data != nullptr;
  // FLOAT16/BF16 entries likewise: a window line of every channel widened in one call.
  const bool half_rows = !channels_last && (view.dtype == ACL_FLOAT16 || view.dtype == ACL_BF16) &&
                         math == MathMode::kFull && (step == 1 || step == 2) && channels > 0 && view.data != nullptr &&
                         conversions != nullptr;
  for_each_window_line(
      g, tiling, band, depths, [&](int64_t offset, int64_t id, int64_t ih, int64_t first, int64_t x0, int64_t x1) {
        float* line = out + offset;               // channel 0's
        for (int64_t c = 0; c < channels; ++c) {  // the zero borders (the whole line outside the source)
          float* to = line + c * channel_floats;
          zero_run(to, x0);
          zero_run(to + x1, width - x1);
        }
        if (x0 == x1) return;
        if (float_rows) {  // the common case: copies (a window line is often only 28 floats)
          const float* from = static_cast<const float*>(view.data) + view.element(n, c0, id, ih, first + x0 * sw);
          if (conversions != nullptr) {  // every channel's line in one call, prefetched ahead in each plane
            step == 1 ? conversions->copy_rows(from, view.stride[1], x1 - x0, channels, line + x0, channel_floats)
                      : conversions->copy_rows_even(from, view.stride[1], x1 - x0, channels, line + x0, channel_floats);
            return;
          }
          for (int64_t c = 0; c < channels; ++c) {
            float* to = line + c * channel_floats + x0;
            step == 1 ? copy_run(from + c * view.stride[1], x1 - x0, to)
                      : copy_run_even(from + c * view.stride[1], x1 - x0, to);
          }
        } else if (half_rows) {
          const uint16_t* from = static_cast<const uint16_t*>(view.data) + view.element(n, c0, id, ih, first + x0 * sw);
          conversions->widen_rows(from, view.dtype == ACL_BF16, view.stride[1], step, x1 - x0, channels, line + x0,
                                  channel_floats);
        } else if (channels_last) {
          read_row_channels(view, math, n, c0, channels, id, ih, first + x0 * sw, sw, x1 - x0, line + x0,
                            channel_floats);
        } else {
          for (int64_t c = 0; c < channels; ++c) {
            read_row_floats(view, math, n, c0 + c, id, ih, first + x0 * sw, sw, x1 - x0, line + c * channel_floats + x0,
                            conversions);
          }
        }
      });
  std::memset(out + channels * channel_floats, 0, static_cast<size_t>(slack) * sizeof(float));
}

void stage_padded_window_pairs(const View5& view, const ConvGeometry& g, const BandTiling& tiling, int64_t n,
                               int64_t c0, int64_t channels, const OutputBand& band, int64_t slack, uint32_t* out) {
  const int64_t width = tiling.window_width(), sw = g.stride[2], channel_words = tiling.channel_floats();
  const int64_t pairs = ceil_div(channels, 2), step = view.stride[4] * sw;
  const auto* data = static_cast<const uint16_t*>(view.data);
  for_each_window_line(g, tiling, band, all_depths(g),
                       [&](int64_t offset, int64_t id, int64_t ih, int64_t first, int64_t x0, int64_t x1) {
                         for (int64_t c = 0; c < pairs; ++c) {
                           uint32_t* to = out + c * channel_words + offset;
                           std::fill(to, to + x0, 0u);
                           std::fill(to + x1, to + width, 0u);
                           if (x0 == x1) continue;
                           const uint16_t* even = data + view.element(n, c0 + 2 * c, id, ih, first + x0 * sw);
                           if (2 * c + 1 == channels) {  // an odd channel count: the last pair's second channel is zero
                             for (int64_t x = 0; x < x1 - x0; ++x) to[x0 + x] = even[x * step];
                             continue;
                           }
                           const uint16_t* odd = even + view.stride[1];
                           if (step == 1) {
                             for (int64_t x = 0; x < x1 - x0; ++x) to[x0 + x] = bf16_pair(even[x], odd[x]);
                           } else {
                             for (int64_t x = 0; x < x1 - x0; ++x)
                               to[x0 + x] = bf16_pair(even[x * step], odd[x * step]);
                           }
                         }
                       });
  std::fill(out + pairs * channel_words, out + pairs * channel_words + slack, 0u);
}

void stage_padded_window_bf16(const View5& view, const ConvGeometry& g, const BandTiling& tiling, int64_t n, int64_t c0,
                              int64_t channels, const OutputBand& band, uint16_t* out) {
  const int64_t width = tiling.window_width(), sw = g.stride[2], channel_words = tiling.channel_floats();
  const int64_t step = view.stride[4] * sw;
  const auto* data = static_cast<const uint16_t*>(view.data);
  for_each_window_line(g, tiling, band, all_depths(g),
                       [&](int64_t offset, int64_t id, int64_t ih, int64_t first, int64_t x0, int64_t x1) {
                         for (int64_t c = 0; c < channels; ++c) {
                           uint16_t* to = out + c * channel_words + offset;
                           std::fill(to, to + x0, uint16_t{0});
                           std::fill(to + x1, to + width, uint16_t{0});
                           if (x0 == x1) continue;
                           const uint16_t* from = data + view.element(n, c0 + c, id, ih, first + x0 * sw);
                           if (step == 1) {
                             std::memcpy(to + x0, from, static_cast<size_t>(x1 - x0) * sizeof(uint16_t));
                           } else {
                             for (int64_t x = 0; x < x1 - x0; ++x) to[x0 + x] = from[x * step];
                           }
                         }
                       });
}

void window_panels(const float* window, const int64_t* line_offsets, int64_t lines, int64_t band_width,
                   int64_t window_width, int64_t p0, int64_t depth, int width, int64_t panel_depth, float* out) {
  for (int64_t j0 = 0; j0 < lines; j0 += width, out += width * panel_depth) {
    const int64_t valid = std::min<int64_t>(width, lines - j0);
    for (int64_t p = p0; p < p0 + depth;) {  // runs of positions within one output row
      const int64_t run = std::min(band_width - p % band_width, p0 + depth - p);
      const int64_t q = p / band_width * window_width + p % band_width;
      float* to = out + (p - p0) * width;
      int64_t j = 0;
      for (; j + 4 <= valid; j += 4) {  // 4 lines side by side, 4 positions at a time
        const float* rows[4];
        for (int i = 0; i < 4; ++i) rows[i] = window + line_offsets[j0 + j + i] + q;
        int64_t i = 0;
        for (; i + 4 <= run; i += 4) {
          transpose_4x4_rows(rows, to + i * width + j, width);
          for (const float*& row : rows) row += 4;
        }
        for (; i < run; ++i) {
          for (int l = 0; l < 4; ++l) to[i * width + j + l] = rows[l][i % 4];  // rows advanced to i - i % 4
        }
      }
      for (; j < width; ++j) {
        const float* line = j < valid ? window + line_offsets[j0 + j] + q : nullptr;
        for (int64_t i = 0; i < run; ++i) to[i * width + j] = line != nullptr ? line[i] : 0.0f;
      }
      p += run;
    }
  }
}

}  // namespace aclnn_cpu
