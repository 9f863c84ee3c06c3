// The small-group entries' staging (small_group.cpp): a slice of the source in zero-padded rows that
// every kernel tap reads at a fixed offset.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/common/tiling.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/kits/row_kernels.h"

namespace aclnn_cpu {
namespace small_group {

// A slice's source channels in zero-padded rows, for the forward geometry g (src -> dst): output
// row r = (od, oh) and kernel tap t = (a, b, c) read row (od*sD + a*dD, oh*sH + b*dH) of the staged
// plane. A staged row holds the source row split into sW phases (phase q, entry j: source column
// j*sW + q - pW), so that every tap reads consecutive entries: tap[t] + w for output column w.
struct Staging {
  int64_t out_rows = 0, width = 0;  // output rows (D x H) and their width
  int64_t phase_width = 0, row_stride = 0, rows_h = 0, rows_d = 0, channel_stride = 0;
  std::vector<int64_t> tap, row_base;
  std::vector<int64_t> inside_lo, inside_hi;  // per phase q: its entries [lo, hi) lie inside a source row

  explicit Staging(const ConvGeometry& g) {
    const int64_t* s = g.stride;
    const int64_t* d = g.dilation;
    const int64_t* k = g.kernel;
    out_rows = g.dst_size[0] * g.dst_size[1];
    width = g.dst_size[2];
    phase_width = round_up(width, kRowLanes) + (k[2] - 1) * d[2] / s[2];
    row_stride = s[2] * phase_width;
    rows_h = (g.dst_size[1] - 1) * s[1] + (k[1] - 1) * d[1] + 1;
    rows_d = (g.dst_size[0] - 1) * s[0] + (k[0] - 1) * d[0] + 1;
    channel_stride = rows_d * rows_h * row_stride;
    for (int64_t a = 0; a < k[0]; ++a) {
      for (int64_t b = 0; b < k[1]; ++b) {
        for (int64_t c = 0; c < k[2]; ++c) {
          tap.push_back((a * d[0] * rows_h + b * d[1]) * row_stride + c * d[2] % s[2] * phase_width + c * d[2] / s[2]);
        }
      }
    }
    for (int64_t od = 0; od < g.dst_size[0]; ++od) {
      for (int64_t oh = 0; oh < g.dst_size[1]; ++oh) row_base.push_back((od * s[0] * rows_h + oh * s[1]) * row_stride);
    }
    for (int64_t q = 0; q < s[2]; ++q) {
      // Entries j < phase_width of phase q whose source column j*sW + q - pW lies before `column`
      // (a pad too large for 64 bits puts every entry, or none, before it).
      const auto entries_before = [&](int64_t column) {
        int64_t reach = 0;  // column - (q - pW)
        if (__builtin_add_overflow(column - q, g.pad[2], &reach)) return g.pad[2] > 0 ? phase_width : int64_t{0};
        return std::min(phase_width, ceil_div(std::max<int64_t>(0, reach), s[2]));
      };
      const int64_t lo = entries_before(0);
      inside_lo.push_back(lo);
      inside_hi.push_back(std::max(lo, entries_before(g.src_size[2])));
    }
  }

  // Floats of a staged slice of `channels` channels, in double (for the budget check, before the
  // sizes are known to be reasonable).
  static double floats(const ConvGeometry& g, int64_t channels) {
    const double w = double(g.dst_size[2]) + kRowLanes + double(g.kernel[2] - 1) * double(g.dilation[2]);
    const double h =
        double(g.dst_size[1] - 1) * double(g.stride[1]) + double(g.kernel[1] - 1) * double(g.dilation[1]) + 1;
    const double z =
        double(g.dst_size[0] - 1) * double(g.stride[0]) + double(g.kernel[0] - 1) * double(g.dilation[0]) + 1;
    return double(std::max<int64_t>(1, channels)) * z * h * w * double(g.stride[2]);  // (sizes even with none)
  }

  // The rows' grid structure (WeightRows', ForwardRows'), where they have one: a kernel of one plane's
  // depth, stride and dilation 1 along H (consecutive output rows and kernel rows a staged row apart).
  template <typename Rows>  // (WeightRows or ForwardRows)
  void describe_grid(const ConvGeometry& g, Rows& rows) const {
    if (g.kernel[0] != 1 || g.stride[1] != 1 || g.dilation[1] != 1) return;
    rows.plane_rows = g.dst_size[1];
    rows.row_step = row_stride;
    rows.grid_rows = g.kernel[1];
  }

  // Whether the staged rows hold every source entry (with a trailing padding larger than the
  // kernel's reach, the last source rows and columns meet no output and are not staged).
  bool holds_whole_source(const ConvGeometry& g) const {
    const int64_t staged[3] = {rows_d, rows_h, (width - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1};
    for (int a = 0; a < 3; ++a) {
      if (g.pad[a] < 0 || g.pad[a] > staged[a] || g.src_size[a] > staged[a] - g.pad[a]) return false;
    }
    return true;
  }

  // Zeroes a buffer of `channels` staged channels. stage() writes only the entries that lie inside
  // the source, so a buffer cleared once keeps the zero padding of every slice staged into it.
  void clear(float* out, int64_t channels) const { std::fill_n(out, channels * channel_stride, 0.0f); }

  // Copies channels [c0, c0 + channels) of sample n of the source view (src planes of g; any dtype
  // and strides, rounded as cubeMathType asks) into `out`, a buffer cleared for as many channels
  // (`conversions`: the plan's kit's).
  void stage(const ConvGeometry& g, const View5& src, MathMode math, int64_t n, int64_t c0, int64_t channels,
             float* out, const Conversions16* conversions) const {
    const int64_t src_d = g.src_size[0], src_h = g.src_size[1], sw = g.stride[2];
    // Entries 1 (or for FLOAT16/BF16, 2) apart: each channel's rows of a plane phase copied or widened in one
    // call (a channel's plane is one run of memory, which the copy prefetches ahead in; a row of every
    // channel per call read as many planes at once).
    int64_t step = 0;  // (0 where the product overflows: an empty source's strides are unbounded)
    if (__builtin_mul_overflow(src.stride[4], sw, &step)) step = 0;
    const bool some = channels > 0 && src.data != nullptr && conversions != nullptr;
    const bool half_rows = some && (src.dtype == ACL_FLOAT16 || src.dtype == ACL_BF16) && math == MathMode::kFull &&
                           (step == 1 || step == 2);
    const bool float_rows = some && src.dtype == ACL_FLOAT && math != MathMode::kFp16Inputs && step == 1;
    if (half_rows || float_rows) {  // channel by channel (a plane is one run), each phase's rows in one call
      const int64_t y0 = std::max<int64_t>(0, g.pad[1]);  // the staged rows [y0, y1) lie inside the source
      const int64_t y1 = g.pad[1] >= rows_h ? y0 : std::min(rows_h, g.pad[1] + src_h);
      for (int64_t ch = 0; ch < channels; ++ch) {
        for (int64_t z = 0; z < rows_d && y1 > y0; ++z) {
          const int64_t sz = z - g.pad[0];
          if (sz < 0 || sz >= src_d) continue;  // a padding plane
          for (int64_t q = 0; q < sw; ++q) {
            const int64_t lo = inside_lo[q], hi = inside_hi[q];
            if (hi == lo) continue;
            const int64_t at = src.element(n, c0 + ch, sz, y0 - g.pad[1], lo * sw + q - g.pad[2]);
            float* rows = out + ch * channel_stride + (z * rows_h + y0) * row_stride + q * phase_width + lo;
            if (half_rows) {
              conversions->widen_rows(static_cast<const uint16_t*>(src.data) + at, src.dtype == ACL_BF16, src.stride[3],
                                      step, hi - lo, y1 - y0, rows, row_stride);
            } else {
              conversions->copy_rows(static_cast<const float*>(src.data) + at, src.stride[3], hi - lo, y1 - y0, rows,
                                     row_stride);
            }
          }
        }
      }
      return;
    }
    for (int64_t z = 0; z < rows_d; ++z) {
      for (int64_t y = 0; y < rows_h; ++y) {
        float* rows = out + (z * rows_h + y) * row_stride;  // channel 0's
        const int64_t sz = z - g.pad[0], sy = y - g.pad[1];
        if (sz < 0 || sz >= src_d || sy < 0 || sy >= src_h) continue;  // a padding row
        for (int64_t q = 0; q < sw; ++q, rows += phase_width) {
          const int64_t lo = inside_lo[q], hi = inside_hi[q];
          if (hi == lo) continue;
          const int64_t column = lo * sw + q - g.pad[2];  // entry lo's, inside the source row
          for (int64_t ch = 0; ch < channels; ++ch) {
            read_row_floats(src, math, n, c0 + ch, sz, sy, column, sw, hi - lo, rows + ch * channel_stride + lo,
                            conversions);
          }
        }
      }
    }
  }
};

}  // namespace small_group
}  // namespace aclnn_cpu
