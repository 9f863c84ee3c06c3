// col2im over whole output rows for a unit stride along W, with AVX-512 (col2im_avx512.cpp, compiled
// with -mavx512f, called only where the plan chose AVX-512). Plain integers only: this header is read
// by that translation unit, which must not compile any inline function that others share.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

// dst[c][id][ih][iw] += cols[r - row_begin][q * out_w + ow - col_begin] for every column-matrix row
// r = ((c * kernel_d + kd) * kernel_h + kh) * kernel_w + kw in [row_begin, row_end) and output row
// q = od * out_h + oh in [q0, q1), where id = od * stride_d - pad_d + kd * dil_d, ih = oh * stride_h -
// pad_h + kh * dil_h and iw = ow - pad_w + kw * dil_w lie inside the source (src_d x src_h x src_w
// planes); col_begin = q0 * out_w. Each dst entry gets its additions in row order, as the scalar
// col2im adds them.
struct Col2imUnitRows {
  const float* cols;
  int64_t ld, row_begin, row_end, q0, q1;
  int64_t out_h, out_w, src_d, src_h, src_w;
  int64_t kernel_d, kernel_h, kernel_w, stride_d, stride_h, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w;
  float* dst;
};

#ifdef ACLNN_HAVE_X86_KERNELS
void col2im_unit_rows_avx512(const Col2imUnitRows& job);
#endif

}  // namespace aclnn_cpu
