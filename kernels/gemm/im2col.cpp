#include "kernels/gemm/im2col.h"

#include <algorithm>

namespace aclnn_cpu {
namespace {

// Walks a column-matrix block row by row, in runs of consecutive output positions that share
// (od, oh). For each run it reports the padding parts, padding(at, count), and the part that
// reads the source, source(at, from, step, count): block entries at, at+1, ... map to source
// elements from, from+step, ...
template <typename Padding, typename Source>
void for_each_run(const ConvGeometry& g, int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end,
                  Padding padding, Source source) {
  const int64_t kernel_volume = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t src_plane = g.src_size[0] * g.src_size[1] * g.src_size[2];
  const int64_t width = col_end - col_begin, out_w = g.dst_size[2];
  const int64_t sw = g.stride[2];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t c = r / kernel_volume, k = r % kernel_volume;
    const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = k / g.kernel[2] % g.kernel[1], kw = k % g.kernel[2];
    const int64_t w_shift = kw * g.dilation[2] - g.pad[2];  // iw = ow * sw + w_shift
    // Output columns ow whose iw lies inside the source: [ow_lo, ow_hi).
    const int64_t ow_lo = w_shift >= 0 ? 0 : (-w_shift + sw - 1) / sw;
    const int64_t ow_hi = std::max<int64_t>(ow_lo, std::min(out_w, (g.src_size[2] - w_shift + sw - 1) / sw));
    int64_t at = (r - row_begin) * width;
    for (int64_t o = col_begin; o < col_end;) {
      const int64_t od = o / (g.dst_size[1] * out_w), oh = o / out_w % g.dst_size[1], ow = o % out_w;
      const int64_t run = std::min(col_end - o, out_w - ow);  // up to the end of this output row
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      if (id < 0 || id >= g.src_size[0] || ih < 0 || ih >= g.src_size[1]) {
        padding(at, run);
      } else {
        const int64_t first = std::clamp(ow_lo, ow, ow + run), last = std::clamp(ow_hi, ow, ow + run);
        if (first > ow) padding(at, first - ow);
        if (last > first) {
          const int64_t from = c * src_plane + (id * g.src_size[1] + ih) * g.src_size[2] + first * sw + w_shift;
          source(at + first - ow, from, sw, last - first);
        }
        if (ow + run > last) padding(at + last - ow, ow + run - last);
      }
      at += run;
      o += run;
    }
  }
}

}  // namespace

void im2col(const ConvGeometry& g, const float* src, int64_t row_begin, int64_t row_end, int64_t col_begin,
            int64_t col_end, float* cols) {
  for_each_run(
      g, row_begin, row_end, col_begin, col_end,
      [cols](int64_t at, int64_t count) { std::fill_n(cols + at, count, 0.0f); },
      [src, cols](int64_t at, int64_t from, int64_t step, int64_t count) {
        float* out = cols + at;
        const float* in = src + from;
        if (step == 1) {
          std::copy_n(in, count, out);
        } else {
          for (int64_t i = 0; i < count; ++i) out[i] = in[i * step];
        }
      });
}

void col2im_add(const ConvGeometry& g, const float* cols, int64_t row_begin, int64_t row_end, int64_t col_begin,
                int64_t col_end, float* dst) {
  for_each_run(
      g, row_begin, row_end, col_begin, col_end, [](int64_t, int64_t) {},
      [cols, dst](int64_t at, int64_t to, int64_t step, int64_t count) {
        const float* in = cols + at;
        float* out = dst + to;
        for (int64_t i = 0; i < count; ++i) out[i * step] += in[i];
      });
}

}  // namespace aclnn_cpu
