// Moving between one (sample, group) slice of a dense tensor and its column matrix.
// Column matrix of a slice with C channels: rows r = c*K + k (K = kernel volume, k over
// (kd, kh, kw)), columns = output positions o over (od, oh, ow); entry = src[c, o*s - p + k*d],
// zero outside the source.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/convert.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

// What im2col reads for one (sample, group) slice: element (c, i) of the slice (channel c,
// position i of its source plane) at data[(c - first_channel) * channel_stride + i - first].
// Either the dense float slice itself ({slice, plane, 0, 0}) or a window of it staged by
// stage_window (the positions a tile reads, converted from the user's view).
struct SliceSource {
  const float* data;
  int64_t channel_stride;
  int64_t first_channel = 0;
  int64_t first = 0;
};

// Positions [first, last) of the source plane: a window (empty when first >= last).
struct PlaneWindow {
  int64_t first = 0, last = 0;
  int64_t size() const { return last > first ? last - first : 0; }
};

// A window holding every source position that the column-matrix columns [col_begin, col_end)
// read (whole source lines (d, h) between the first and the last one read, or part of one line; for
// a 1x1 kernel of stride 1 without padding, exactly the columns' positions).
PlaneWindow source_window(const ConvGeometry& g, int64_t col_begin, int64_t col_end);

// At least the size of source_window(g, o, o + count) for any o: the staging a tile of `count`
// positions needs, wherever it starts (at most the source plane).
int64_t max_source_window(const ConvGeometry& g, int64_t count);

// out[(c - c_begin) * window.size() + i - window.first] = element (n, c0 + c, position i) of the
// view as read_row_floats reads it (any dtype and strides, cubeMathType rounding), for c in
// [c_begin, c_end) and i in the window: the part of a slice a tile reads, with no dense copy of
// the whole tensor. The view's spatial dims are the geometry's source sizes.
void stage_window(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t c_begin, int64_t c_end,
                  PlaneWindow window, float* out, const Conversions16* conversions);

// The output indices o < out whose source index o * stride + shift lies in [0, size): [first, end)
// (first == end when none). Exact for any stride >= 1, size >= 0 and shift (a tap's offset less the
// padding), without overflow: strides and paddings may be as large as int64 holds.
struct OutputRange {
  int64_t first, end;
};
inline OutputRange outputs_inside(int64_t shift, int64_t size, int64_t stride, int64_t out) {
  if (shift >= size || out <= 0) return {0, 0};
  // ceil(-shift / stride) for shift < 0, as (-shift - 1) / stride + 1 (no overflow at INT64_MIN).
  const int64_t first = shift >= 0 ? 0 : std::min(out, -(shift + 1) / stride + 1);
  int64_t reach = 0;  // size - shift >= 1: o * stride < reach
  const int64_t end = __builtin_sub_overflow(size, shift, &reach) ? out : std::min(out, (reach - 1) / stride + 1);
  return {first, std::max(first, end)};
}

// Walks a column-matrix block row by row, in runs of consecutive output positions that share
// (od, oh). For each run it reports the padding parts, padding(r, o, count), and the part that
// reads the source, source(r, o, from, step, count): entries (r, o), (r, o+1), ... map to source
// elements from, from+step, ... (source offsets relative to channel 0 of the slice).
template <typename Padding, typename Source>
void for_each_run(const ConvGeometry& g, int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end,
                  Padding padding, Source source) {
  if (row_begin >= row_end || col_begin >= col_end) return;
  const int64_t kernel_volume = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t src_plane = g.src_size[0] * g.src_size[1] * g.src_size[2];
  const int64_t out_w = g.dst_size[2];
  const int64_t sw = g.stride[2];
  // Position of col_begin (the same for every row); later runs start at ow = 0 of the next output row.
  const int64_t od0 = col_begin / (g.dst_size[1] * out_w), oh0 = col_begin / out_w % g.dst_size[1];
  const int64_t ow0 = col_begin % out_w;
  // Row r = c*K + k, k over (kd, kh, kw): counted up from row_begin (no divisions per row).
  int64_t c = row_begin / kernel_volume, k = row_begin % kernel_volume;
  int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = k / g.kernel[2] % g.kernel[1], kw = k % g.kernel[2];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t w_shift = kw * g.dilation[2] - g.pad[2];  // iw = ow * sw + w_shift
    // Output columns ow whose iw lies inside the source: [ow_lo, ow_hi).
    const OutputRange inside = outputs_inside(w_shift, g.src_size[2], sw, out_w);
    const int64_t ow_lo = inside.first, ow_hi = inside.end;
    int64_t od = od0, oh = oh0, ow = ow0;
    for (int64_t o = col_begin; o < col_end;) {
      const int64_t run = std::min(col_end - o, out_w - ow);  // up to the end of this output row
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      if (id < 0 || id >= g.src_size[0] || ih < 0 || ih >= g.src_size[1]) {
        padding(r, o, run);
      } else {
        const int64_t first = std::clamp(ow_lo, ow, ow + run), last = std::clamp(ow_hi, ow, ow + run);
        if (first > ow) padding(r, o, first - ow);
        if (last > first) {
          const int64_t from = c * src_plane + (id * g.src_size[1] + ih) * g.src_size[2] + first * sw + w_shift;
          source(r, o + first - ow, from, sw, last - first);
        }
        if (ow + run > last) padding(r, o + last - ow, ow + run - last);
      }
      o += run;
      ow = 0;
      if (++oh == g.dst_size[1]) oh = 0, ++od;
    }
    if (++kw == g.kernel[2]) {  // the next row's (c, kd, kh, kw)
      kw = 0;
      if (++kh == g.kernel[1]) {
        kh = 0;
        if (++kd == g.kernel[0]) kd = 0, ++c;
      }
    }
  }
}

// cols (rows [row_begin, row_end) x columns [col_begin, col_end), row-major) <- im2col(src).
void im2col(const ConvGeometry& g, const SliceSource& src, int64_t row_begin, int64_t row_end, int64_t col_begin,
            int64_t col_end, float* cols);

// The column-matrix block (rows [p0, p0 + depth), columns [j0, j0 + cols)) written straight into
// sgemm's packed column slivers of `width` (PanelWriter's layout; a micro-kernel's NR: 8, 16 or
// 32): im2col fused into packing.
void im2col_panels(const ConvGeometry& g, const SliceSource& src, int64_t p0, int64_t depth, int64_t j0, int64_t cols,
                   int width, float* out);

// sgemm's packed column slivers of `width` (PanelWriter's layout) for the matrix B(p, j) = element
// (n, c0 + p, plane position first + j) of a view, rows [p0, p0 + depth) x columns [j0, j0 + cols):
// the gradOutput operand read from the user's view (any dtype and strides, cubeMathType rounding),
// converted while it is packed. Positions past the plane continue in the next samples' planes
// (B(p, j) = element (n + q / plane, c0 + p, q % plane), q = first + j): columns of several samples.
void view_panels(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t first, int64_t p0, int64_t depth,
                 int64_t j0, int64_t cols, int width, float* out, const Conversions16* conversions);

// dst[c, i] += every cols entry that im2col would have read from position (c, i); same block shape,
// but rows `ld` floats apart. Each entry of dst gets its additions in row order; with `isa` AVX-512,
// whole output rows of unit stride along W take col2im_unit_rows_avx512 (the same additions).
void col2im_add(const ConvGeometry& g, const float* cols, int64_t ld, int64_t row_begin, int64_t row_end,
                int64_t col_begin, int64_t col_end, float* dst, Isa isa);

}  // namespace aclnn_cpu
