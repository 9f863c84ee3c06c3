#include "kernels/common/im2col.h"

#include <algorithm>
#include <cstring>

#include "acl/acl_base.h"
#include "kernels/common/col2im_avx512.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/common/runs.h"
#include "kernels/common/tiling.h"

namespace aclnn_cpu {
namespace {

// The slice element `from` (an offset from channel 0 of a dense slice, as for_each_run reports it).
inline const float* element(const ConvGeometry& g, const SliceSource& src, int64_t from) {
  const int64_t plane = g.src_plane();
  if (src.channel_stride == plane && src.first == 0 && src.first_channel == 0) return src.data + from;
  return src.data + (from / plane - src.first_channel) * src.channel_stride + (from % plane - src.first);
}

// to[i] = src[from + i * step] for i < n.
inline void read_run(const float* from, int64_t step, int64_t n, float* to) {
  if (step == 1) {
    copy_run(from, n, to);
  } else {
    for (int64_t i = 0; i < n; ++i) to[i] = from[i * step];
  }
}

}  // namespace

PlaneWindow source_window(const ConvGeometry& g, int64_t col_begin, int64_t col_end) {
  // A 1x1 kernel of stride 1 without padding reads the columns' own positions: exactly those (the
  // rows of a tile's window then lie the tile's width apart).
  if (columns_are_source(g)) return col_begin < col_end ? PlaneWindow{col_begin, col_end} : PlaneWindow{};
  const int64_t out_h = g.dst_size[1], out_w = g.dst_size[2];
  const int64_t depth = g.src_size[0], height = g.src_size[1], width = g.src_size[2];
  if (col_begin >= col_end || depth <= 0 || height <= 0 || width <= 0) return {};  // (all padding)
  // Along axis a: the source index of output position o's first (or last) tap, clamped to
  // [0, size). Saturating: hostile empty problems have output positions far past 2^63 / stride.
  auto source_index = [&g](int64_t o, int a, bool last_tap, int64_t size) {
    int64_t at = 0, span = 0;
    bool past_end = __builtin_mul_overflow(o, g.stride[a], &at) || __builtin_sub_overflow(at, g.pad[a], &at);
    if (last_tap) {
      past_end = past_end || __builtin_mul_overflow(g.dilation[a], g.kernel[a] - 1, &span) ||
                 __builtin_add_overflow(at, span, &at);
    }
    return past_end ? size - 1 : std::clamp<int64_t>(at, 0, size - 1);
  };
  const int64_t last = col_end - 1;
  const int64_t od0 = col_begin / (out_h * out_w), oh0 = col_begin / out_w % out_h, ow0 = col_begin % out_w;
  const int64_t od1 = last / (out_h * out_w), oh1 = last / out_w % out_h, ow1 = last % out_w;
  const int64_t d_lo = source_index(od0, 0, false, depth), d_hi = source_index(od1, 0, true, depth);
  int64_t h_lo = 0, h_hi = height - 1;  // all lines of each depth slice, unless in one output slice
  if (od0 == od1) h_lo = source_index(oh0, 1, false, height), h_hi = source_index(oh1, 1, true, height);
  int64_t w_lo = 0, w_hi = width - 1;  // whole lines, unless in one output line
  if (od0 == od1 && oh0 == oh1) w_lo = source_index(ow0, 2, false, width), w_hi = source_index(ow1, 2, true, width);
  return {(d_lo * height + h_lo) * width + w_lo, (d_hi * height + h_hi) * width + w_hi + 1};
}

int64_t max_source_window(const ConvGeometry& g, int64_t count) {
  const int64_t depth = g.src_size[0], height = g.src_size[1], width = g.src_size[2];
  const int64_t out_w = std::max<int64_t>(1, g.dst_size[2]), out_hw = out_w * std::max<int64_t>(1, g.dst_size[1]);
  if (count <= 0 || depth <= 0 || height <= 0 || width <= 0) return 0;
  // Source lines along axis a that `outputs` consecutive output indices read (at most `size`).
  auto lines = [&g](int64_t outputs, int a, int64_t size) {
    int64_t reach = 0, span = 0;
    const bool past = __builtin_mul_overflow(outputs - 1, g.stride[a], &reach) ||
                      __builtin_mul_overflow(g.dilation[a], g.kernel[a] - 1, &span) ||
                      __builtin_add_overflow(reach, span, &reach);
    return past || reach >= size ? size : reach + 1;
  };
  // Within one output depth slice: the depth slices one tap row spans (whole), plus the rows of the
  // output rows touched; across output slices (when there are several): whole depth slices.
  const int64_t rows = std::min(g.dst_size[1], count / out_w + 2), slices = std::min(g.dst_size[0], count / out_hw + 2);
  const int64_t plane = depth * height * width;
  const int64_t within = (lines(1, 0, depth) - 1) * height * width + lines(rows, 1, height) * width;
  const int64_t across = slices > 1 ? lines(slices, 0, depth) * height * width : 0;  // (one output slice: none)
  return std::min(plane, std::max(within, across));
}

void stage_window(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t c_begin, int64_t c_end,
                  PlaneWindow window, float* out, const Conversions16* conversions) {
  // FLOAT16/BF16 planes lying whole: the channels' runs widened in one call, which prefetches ahead in
  // each run (the positions of the task's next piece).
  if ((view.dtype == ACL_FLOAT16 || view.dtype == ACL_BF16) && math == MathMode::kFull && planes_contiguous(view) &&
      conversions != nullptr && c_end > c_begin && window.size() > 0) {
    conversions->widen_rows(static_cast<const uint16_t*>(view.data) + view.element(n, c0 + c_begin, 0, 0, window.first),
                            view.dtype == ACL_BF16, view.stride[1], 1, window.size(), c_end - c_begin, out,
                            window.size());
    return;
  }
  for (int64_t c = c_begin; c < c_end; ++c, out += window.size()) {
    read_plane_floats(view, math, n, c0 + c, window.first, window.size(), out, conversions);
  }
}

void im2col(const ConvGeometry& g, const SliceSource& src, int64_t row_begin, int64_t row_end, int64_t col_begin,
            int64_t col_end, float* cols) {
  const int64_t width = col_end - col_begin;
  auto entry = [=](int64_t r, int64_t o) { return cols + (r - row_begin) * width + (o - col_begin); };
  for_each_run(
      g, row_begin, row_end, col_begin, col_end,
      [entry](int64_t r, int64_t o, int64_t count) { std::fill_n(entry(r, o), count, 0.0f); },
      [&g, &src, entry](int64_t r, int64_t o, int64_t from, int64_t step, int64_t count) {
        read_run(element(g, src, from), step, count, entry(r, o));
      });
}

namespace {

template <int W>
void im2col_panels_of(const ConvGeometry& g, const SliceSource& src, int64_t p0, int64_t depth, int64_t j0,
                      int64_t cols, float* out) {
  const int64_t sliver = W * depth;
  // Entries (r, o .. o + count) in pieces that stay within one sliver: put(to, first, n) with
  // `first` the piece's index in the run.
  auto pieces = [=](int64_t r, int64_t o, int64_t count, auto put) {
    const int64_t j = o - j0;
    float* to = out + j / W * sliver + (r - p0) * W;
    for (int64_t lane = j % W, done = 0; done < count; lane = 0, to += sliver) {
      const int64_t n = std::min<int64_t>(count - done, W - lane);
      put(to + lane, done, n);
      done += n;
    }
  };
  for_each_run(
      g, p0, p0 + depth, j0, j0 + cols,
      [=](int64_t r, int64_t o, int64_t count) {
        pieces(r, o, count, [](float* to, int64_t, int64_t n) { std::fill_n(to, n, 0.0f); });
      },
      [&](int64_t r, int64_t o, int64_t from, int64_t step, int64_t count) {
        const float* in = element(g, src, from);
        pieces(r, o, count,
               [in, step](float* to, int64_t first, int64_t n) { read_run(in + first * step, step, n, to); });
      });
  if (const int64_t used = cols % W; used != 0) {  // the last sliver's lanes past the last column
    float* last = out + cols / W * sliver;
    for (int64_t p = 0; p < depth; ++p) std::fill_n(last + p * W + used, W - used, 0.0f);
  }
}

}  // namespace

void im2col_panels(const ConvGeometry& g, const SliceSource& src, int64_t p0, int64_t depth, int64_t j0, int64_t cols,
                   int width, float* out) {
  switch (width) {  // the micro-kernels' NR (kernels/kits/kit_*.cpp)
    case 8: return im2col_panels_of<8>(g, src, p0, depth, j0, cols, out);
    case 16: return im2col_panels_of<16>(g, src, p0, depth, j0, cols, out);
    default: return im2col_panels_of<32>(g, src, p0, depth, j0, cols, out);
  }
}

void view_panels(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t first, int64_t p0, int64_t depth,
                 int64_t j0, int64_t cols, int width, float* out, const Conversions16* conversions) {
  constexpr int64_t kChunk = 256;  // positions read per call, at most
  alignas(64) float row[kChunk];
  const int64_t sliver = width * depth, plane = view.shape[2] * view.shape[3] * view.shape[4];
  // A FLOAT view with contiguous planes and nothing to round is copied straight into the slivers
  // (not through `row`, which would copy every entry once more).
  const bool direct = view.dtype == ACL_FLOAT && math != MathMode::kFp16Inputs && planes_contiguous(view);
  for (int64_t p = 0; p < depth; ++p) {
    for (int64_t j = 0; j < cols;) {  // a chunk at a time, within one sample's plane
      const int64_t at = first + j0 + j, run = std::min({cols - j, kChunk, plane - at % plane});
      const float* from = row;
      if (direct) {
        from = static_cast<const float*>(view.data) + view.element(n + at / plane, c0 + p0 + p, 0, 0, 0) + at % plane;
      } else {
        read_plane_floats(view, math, n + at / plane, c0 + p0 + p, at % plane, run, row, conversions);
      }
      for (int64_t i = 0; i < run;) {  // into the slivers the run crosses
        const int64_t lane = (j + i) % width, piece = std::min<int64_t>(run - i, width - lane);
        copy_run(from + i, piece, out + (j + i) / width * sliver + p * width + lane);
        i += piece;
      }
      j += run;
    }
  }
  if (const int64_t used = cols % width; used != 0) {  // the last sliver's lanes past the last column
    float* last = out + cols / width * sliver;
    for (int64_t p = 0; p < depth; ++p) std::fill_n(last + p * width + used, width - used, 0.0f);
  }
}

namespace {

// out[i * step] += in[i] for i < n (n is often a row of 7 or 14): unit steps in SSE2 fours, steps of 2
// four at a time with shuffles (the odd entries written back as they were, never past out[2(n-1)],
// the run's last entry: no other task's), then one by one.
inline void add_run(const float* __restrict in, int64_t n, int64_t step, float* __restrict out) {
  int64_t i = 0;
#ifdef __SSE2__
  if (step == 1) {
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(out + i, _mm_add_ps(_mm_loadu_ps(out + i), _mm_loadu_ps(in + i)));
  } else if (step == 2) {
    for (; i + 4 < n; i += 4) {
      const __m128 lo = _mm_loadu_ps(out + 2 * i), hi = _mm_loadu_ps(out + 2 * i + 4);
      const __m128 even = _mm_add_ps(_mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), _mm_loadu_ps(in + i));
      const __m128 odd = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
      _mm_storeu_ps(out + 2 * i, _mm_unpacklo_ps(even, odd));
      _mm_storeu_ps(out + 2 * i + 4, _mm_unpackhi_ps(even, odd));
    }
  }
#endif
  for (; i < n; ++i) out[i * step] += in[i];
}

// col2im_add for whole output rows (col_begin and col_end at row starts): per column-matrix row,
// its output rows in one loop, the inside columns found once per row. Each entry of dst gets the
// same additions in the same order as through for_each_run.
void col2im_add_rows(const ConvGeometry& g, const float* cols, int64_t ld, int64_t row_begin, int64_t row_end,
                     int64_t col_begin, int64_t col_end, float* dst, Isa isa) {
  const int64_t out_w = g.dst_size[2], out_h = g.dst_size[1], sw = g.stride[2];
  const int64_t src_plane = g.src_size[0] * g.src_size[1] * g.src_size[2];
  const int64_t q0 = col_begin / out_w, q1 = col_end / out_w;  // output rows (od, oh) flattened
#ifdef ACLNN_HAVE_X86_KERNELS
  if (sw == 1 && isa == Isa::kAvx512) {
    Col2imUnitRows job{cols, ld, row_begin, row_end, q0, q1, out_h, out_w, {}, {}, {}, {}, {}, dst};
    std::copy_n(g.src_size, 3, job.src), std::copy_n(g.kernel, 3, job.kernel), std::copy_n(g.stride, 3, job.stride);
    std::copy_n(g.pad, 3, job.pad), std::copy_n(g.dilation, 3, job.dilation);
    return col2im_unit_rows_avx512(job);
  }
#else
  (void)isa;
#endif
  int64_t c = row_begin / g.kernel_volume(), k = row_begin % g.kernel_volume();
  int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = k / g.kernel[2] % g.kernel[1], kw = k % g.kernel[2];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t w_shift = kw * g.dilation[2] - g.pad[2];  // iw = ow * sw + w_shift
    // Output columns ow whose iw lies inside the source: [ow_lo, ow_hi).
    const OutputRange inside = outputs_inside(w_shift, g.src_size[2], sw, out_w);
    const int64_t ow_lo = inside.first, ow_hi = inside.end;
    const float* in = cols + (r - row_begin) * ld;  // column col_begin's
    float* out = dst + c * src_plane;
    if (ow_lo < ow_hi) out += ow_lo * sw + w_shift;  // the first inside entry (>= 0)
    for (int64_t q = q0; ow_lo < ow_hi && q < q1; ++q) {
      const int64_t id = q / out_h * g.stride[0] - g.pad[0] + kd * g.dilation[0];
      const int64_t ih = q % out_h * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      if (id < 0 || id >= g.src_size[0] || ih < 0 || ih >= g.src_size[1]) continue;
      add_run(in + (q * out_w - col_begin) + ow_lo, ow_hi - ow_lo, sw, out + (id * g.src_size[1] + ih) * g.src_size[2]);
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

}  // namespace

void col2im_add(const ConvGeometry& g, const float* cols, int64_t ld, int64_t row_begin, int64_t row_end,
                int64_t col_begin, int64_t col_end, float* dst, Isa isa) {
  if (row_begin >= row_end || col_begin >= col_end) return;
  if (col_begin % g.dst_size[2] == 0 && col_end % g.dst_size[2] == 0) {
    return col2im_add_rows(g, cols, ld, row_begin, row_end, col_begin, col_end, dst, isa);
  }
  for_each_run(
      g, row_begin, row_end, col_begin, col_end, [](int64_t, int64_t, int64_t) {},
      [=](int64_t r, int64_t o, int64_t to, int64_t step, int64_t count) {
        add_run(cols + (r - row_begin) * ld + (o - col_begin), count, step, dst + to);  // (never overlapping)
      });
}

}  // namespace aclnn_cpu
