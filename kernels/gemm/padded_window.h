// Implicit GEMM for forward convolutions: each task computes one band of output positions from a
// padded window of the source, in which every row of the band's column matrix is one contiguous
// run, so the micro-kernel reads it in place (sgemm_rows) instead of im2col packing it.
//
// A band is positions [h0, h1) x [w0, w1) of output plane od. With strides (sD, sH, sW), output
// (oh, ow) and tap (kh, kw) read source row oh*sH + kh*dH - pH and column ow*sW + kw*dW - pW: the
// window splits the source rows and columns into their sH x sW *phases* (residues mod the stride),
// so that consecutive output positions read consecutive window entries. For each channel c, kernel
// depth tap kd, row phase a < sH and column phase b < sW it holds Rp x X source elements (zero
// outside the source):
//   window[((((c * kD + kd) * sH + a) * sW + b) * Rp + r) * X + x]
//       = src[c, od*sD - pD + kd*dD, (h0 + r)*sH + a - pH, (w0 + x)*sW + b - pW],
// with Rp = rows of the band + (kH - 1) dH / sH and X = width of the band + (kW - 1) dW / sW
// (integer division). Column q = (oh - h0) * X + (ow - w0) of the band's column matrix and its row
// (c, kd, kh, kw) then read window[row_offset + q] with
//   row_offset = ((((c * kD + kd) * sH + kh*dH % sH) * sW + kw*dW % sW) * Rp + kh*dH / sH) * X + kw*dW / sW:
// the columns with ow - w0 past the band's width wrap into the next row and are computed only to be
// dropped ((kW - 1) dW / sW of every X, the price of runs that long). Stride 1 has one phase: the
// window is the band's source rows, padded.
#pragma once

#include <cstdint>

#include "kernels/common/convert.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

// Whether a forward convolution can be computed from padded windows: not empty, output sizes,
// strides and kernel spans up to 2^20, and in H and W every phase read by some tap (dilation and
// stride coprime, at least as many taps as the stride: a 1x1 kernel of stride 2 would copy three
// phases it never reads).
bool padded_windows_apply(const ConvGeometry& g);

struct OutputBand {
  int64_t od = 0, h0 = 0, h1 = 0, w0 = 0, w1 = 0;
};

// How a (sample, group) slice's output plane is cut into bands: whole output rows (rows_ per band
// within one od) when a row fits in `max_columns` and each plane has enough rows, else pieces of one
// row (width_ per band). Every band's window has the same R x X (the last band of a plane or row
// reads past it: more padding).
class BandTiling {
 public:
  BandTiling() = default;
  // At least `bands` bands per slice where the plane has that many positions, each of at most
  // `max_columns` columns where one row's window fits.
  BandTiling(const ConvGeometry& g, int64_t bands, int64_t max_columns);
  // Re-chooses the rows per band (whole-row bands only) so that the columns every band computes,
  // rounded up to `granularity` (the micro-kernel's column step), waste the least over the plane,
  // keeping at least half the `bands` asked for and within `max_columns`. For products whose values
  // do not depend on the bands (gradInput): the tiling only decides which columns are computed.
  void fit_tiles(int64_t bands, int64_t granularity, int64_t max_columns);
  int64_t bands() const { return g_.dst_size[0] * per_plane_; }  // per slice
  OutputBand band(int64_t index) const;
  int64_t window_rows() const { return rows_ + (g_.kernel[1] - 1) * g_.dilation[1] / g_.stride[1]; }    // Rp
  int64_t window_width() const { return width_ + (g_.kernel[2] - 1) * g_.dilation[2] / g_.stride[2]; }  // X
  // Columns of every band's column matrix: up to the last valid one.
  int64_t columns() const { return (rows_ - 1) * window_width() + width_; }
  // Whether every band is an even number of positions wide (its positions then pair up within rows).
  bool even_widths() const { return width_ % 2 == 0 && (whole_rows_ || g_.dst_size[2] % width_ % 2 == 0); }
  // Floats of one channel's window (kD x sH x sW x Rp x X), or INT64_MAX when that overflows.
  int64_t channel_floats() const;
  // out[r - row_begin] = the offset of column-matrix row r = c * K + k (K = kernel volume) in a
  // window that starts at channel first_channel, for r in [row_begin, row_end).
  void row_offsets(int64_t row_begin, int64_t row_end, int64_t first_channel, int64_t* out) const;

 private:
  ConvGeometry g_;
  int64_t rows_ = 1, width_ = 1, per_plane_ = 1;
  bool whole_rows_ = true;
};

// The kernel depths [kd0, kd1) whose taps read source planes from output plane od (od*sD - pD +
// kd*dD inside the source: a contiguous range), or {0, 0} where none does. The window slabs of the
// others are all padding.
struct KernelDepths {
  int64_t begin = 0, end = 0;
};
KernelDepths kernel_depths_inside(const ConvGeometry& g, int64_t od);

// Products from windows may take their depths (the column-matrix rows r = c*K + k, K = kD*kH*kW) in
// depth-major order, q = (kd*C + c)*kH*kW + kh*kW + kw for C channels, so that the taps of one
// kernel depth are one contiguous range of C*kH*kW depths, skipped where they read only padding.
// The row r at depth q:
inline int64_t depth_major_row(const ConvGeometry& g, int64_t channels, int64_t q) {
  const int64_t taps_hw = g.kernel[1] * g.kernel[2], slab = channels * taps_hw;
  return q % slab / taps_hw * g.kernel_volume() + q / slab * taps_hw + q % taps_hw;
}

// out = the window of `band` (layout above) for source channels [c0, c0 + channels) of sample n,
// read from the view (any dtype and strides, cubeMathType rounding, read_row_floats), followed by
// `slack` zeros; only the slabs of kernel depths `depths` (the others are left as they are: the
// products that read them are skipped). `conversions`: the plan's kit's.
void stage_padded_window(const View5& view, MathMode math, const ConvGeometry& g, const BandTiling& tiling, int64_t n,
                         int64_t c0, int64_t channels, const OutputBand& band, KernelDepths depths, int64_t slack,
                         float* out, const Conversions16* conversions);

// The window of `band` for BF16 source channels [c0, c0 + channels) as pairs of channels for
// amx_pair_rows: word e of channel pair c (c < ceil(channels / 2)) at out[c * channel_floats() + e]
// holds entry e of channels 2c (low half) and 2c + 1 (high half; zero past the last channel), the
// entries as they are in the view (BF16 only), followed by `slack` zero words. A column-matrix row
// (c, tap) of the pair window is then row_offsets' row (c, tap) of a window of ceil(channels / 2)
// channels.
void stage_padded_window_pairs(const View5& view, const ConvGeometry& g, const BandTiling& tiling, int64_t n,
                               int64_t c0, int64_t channels, const OutputBand& band, int64_t slack, uint32_t* out);

// The same window as BF16 values (`view` BF16), entry e of channel c at out[c * channel_floats() + e].
void stage_padded_window_bf16(const View5& view, const ConvGeometry& g, const BandTiling& tiling, int64_t n, int64_t c0,
                              int64_t channels, const OutputBand& band, uint16_t* out);

// sgemm's packed column slivers of `width` (PanelWriter's layout) for the transposed column matrix
// of a band read from its window: B(p, j) = window[line_offsets[j] + q(p)], rows [p0, p0 + depth)
// x columns [0, lines), where p counts the band's positions row by row (band_width of them per
// output row) and q(p) = (p / band_width) * window_width + p % band_width. Only the band's valid
// positions are read (gradWeight's reduction never sees the window's spill columns). The slivers
// are `width * panel_depth` floats apart (panel_depth >= depth: the band's rows may be part of a
// deeper panel, out then pointing at the first of them).
void window_panels(const float* window, const int64_t* line_offsets, int64_t lines, int64_t band_width,
                   int64_t window_width, int64_t p0, int64_t depth, int width, int64_t panel_depth, float* out);

}  // namespace aclnn_cpu
