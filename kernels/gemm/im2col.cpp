#include "kernels/gemm/im2col.h"

namespace aclnn_cpu {
namespace {

// Visits every (row, column) of a column-matrix block with the source element it maps to
// (-1 when it falls in the padding): visit(block_index, src_index).
template <typename Visit>
void for_each_entry(const ConvGeometry& g, int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end,
                    Visit visit) {
  const int64_t kernel_volume = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t src_plane = g.src_size[0] * g.src_size[1] * g.src_size[2];
  const int64_t width = col_end - col_begin;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t c = r / kernel_volume, k = r % kernel_volume;
    const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = k / g.kernel[2] % g.kernel[1], kw = k % g.kernel[2];
    const int64_t base = (r - row_begin) * width - col_begin;
    // Output position of col_begin, then step through the block in order.
    int64_t od = col_begin / (g.dst_size[1] * g.dst_size[2]);
    int64_t oh = col_begin / g.dst_size[2] % g.dst_size[1];
    int64_t ow = col_begin % g.dst_size[2];
    for (int64_t o = col_begin; o < col_end; ++o) {
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
      const bool inside = id >= 0 && id < g.src_size[0] && ih >= 0 && ih < g.src_size[1] && iw >= 0 &&
                          iw < g.src_size[2];
      visit(base + o, inside ? c * src_plane + (id * g.src_size[1] + ih) * g.src_size[2] + iw : -1);
      if (++ow == g.dst_size[2]) {
        ow = 0;
        if (++oh == g.dst_size[1]) oh = 0, ++od;
      }
    }
  }
}

}  // namespace

void im2col(const ConvGeometry& g, const float* src, int64_t row_begin, int64_t row_end, int64_t col_begin,
            int64_t col_end, float* cols) {
  for_each_entry(g, row_begin, row_end, col_begin, col_end,
                 [src, cols](int64_t at, int64_t from) { cols[at] = from < 0 ? 0.0f : src[from]; });
}

void col2im_add(const ConvGeometry& g, const float* cols, int64_t row_begin, int64_t row_end, int64_t col_begin,
                int64_t col_end, float* dst) {
  for_each_entry(g, row_begin, row_end, col_begin, col_end, [cols, dst](int64_t at, int64_t to) {
    if (to >= 0) dst[to] += cols[at];
  });
}

}  // namespace aclnn_cpu
