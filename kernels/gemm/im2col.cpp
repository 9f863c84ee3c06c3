#include "kernels/gemm/im2col.h"

#include <algorithm>

namespace aclnn_cpu {

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
          std::copy_n(in, count, out);
        } else {
          for (int64_t i = 0; i < count; ++i) out[i] = in[i * step];
        }
      });
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
