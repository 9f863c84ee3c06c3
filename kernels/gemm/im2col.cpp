#include "kernels/gemm/im2col.h"

#include <algorithm>
#include <cstring>

namespace aclnn_cpu {
namespace {

// to[i] = from[i] for i < n, inline: the runs here are short (a row of an output tile, a piece of
// a sliver), where a call to memmove per run costs more than the copy. Fixed-size memcpy compiles
// to one vector move; a plain loop would be turned back into a memmove call.
inline void copy_run(const float* from, int64_t n, float* to) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(to + i, from + i, 8 * sizeof(float));
  for (; i + 2 <= n; i += 2) std::memcpy(to + i, from + i, 2 * sizeof(float));
  if (i < n) to[i] = from[i];
}

}  // namespace

void im2col(const ConvGeometry& g, const float* src, int64_t row_begin, int64_t row_end, int64_t col_begin,
            int64_t col_end, float* cols) {
  const int64_t width = col_end - col_begin;
  auto entry = [=](int64_t r, int64_t o) { return cols + (r - row_begin) * width + (o - col_begin); };
  for_each_run(
      g, row_begin, row_end, col_begin, col_end,
      [entry](int64_t r, int64_t o, int64_t count) { std::fill_n(entry(r, o), count, 0.0f); },
      [src, entry](int64_t r, int64_t o, int64_t from, int64_t step, int64_t count) {
        float* out = entry(r, o);
        const float* in = src + from;
        if (step == 1) {
          copy_run(in, count, out);
        } else {
          for (int64_t i = 0; i < count; ++i) out[i] = in[i * step];
        }
      });
}

namespace {

template <int W>
void im2col_panels_of(const ConvGeometry& g, const float* src, int64_t p0, int64_t depth, int64_t j0, int64_t cols,
                      float* out) {
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
      [=](int64_t r, int64_t o, int64_t from, int64_t step, int64_t count) {
        const float* in = src + from;
        if (step == 1) {
          pieces(r, o, count, [in](float* to, int64_t first, int64_t n) { copy_run(in + first, n, to); });
        } else {
          pieces(r, o, count, [in, step](float* to, int64_t first, int64_t n) {
            for (int64_t i = 0; i < n; ++i) to[i] = in[(first + i) * step];
          });
        }
      });
  if (const int64_t used = cols % W; used != 0) {  // the last sliver's lanes past the last column
    float* last = out + cols / W * sliver;
    for (int64_t p = 0; p < depth; ++p) std::fill_n(last + p * W + used, W - used, 0.0f);
  }
}

}  // namespace

void im2col_panels(const ConvGeometry& g, const float* src, int64_t p0, int64_t depth, int64_t j0, int64_t cols,
                   int width, float* out) {
  switch (width) {  // the micro-kernels' NR (microkernel_*.cpp)
    case 8: return im2col_panels_of<8>(g, src, p0, depth, j0, cols, out);
    case 16: return im2col_panels_of<16>(g, src, p0, depth, j0, cols, out);
    default: return im2col_panels_of<32>(g, src, p0, depth, j0, cols, out);
  }
}

void col2im_add(const ConvGeometry& g, const float* cols, int64_t row_begin, int64_t row_end, int64_t col_begin,
                int64_t col_end, float* dst) {
  const int64_t width = col_end - col_begin;
  for_each_run(
      g, row_begin, row_end, col_begin, col_end, [](int64_t, int64_t, int64_t) {},
      [=](int64_t r, int64_t o, int64_t to, int64_t step, int64_t count) {
        const float* __restrict in = cols + (r - row_begin) * width + (o - col_begin);
        float* __restrict out = dst + to;  // cols and dst never overlap
        if (step == 1) {
          for (int64_t i = 0; i < count; ++i) out[i] += in[i];
        } else {
          for (int64_t i = 0; i < count; ++i) out[i * step] += in[i];
        }
      });
}

}  // namespace aclnn_cpu
