// col2im over whole output rows for a unit stride along W, with AVX-512 (col2im_avx512.cpp, compiled
// with -mavx512f, called only where the plan chose AVX-512). Plain integers only: this header is read
// by that translation unit, which must not compile any inline function that others share.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

// dst[c][id][ih][iw] += cols[r - row_begin][q * out_w + ow - col_begin] for every column-matrix row
// r = ((c * kernel[0] + kd) * kernel[1] + kh) * kernel[2] + kw in [row_begin, row_end) and output row
// q = od * out_h + oh in [q0, q1), where id = od * stride[0] - pad[0] + kd * dilation[0], ih = oh *
// stride[1] - pad[1] + kh * dilation[1] and iw = ow - pad[2] + kw * dilation[2] lie inside the
// source (src[0] x src[1] x src[2] planes); col_begin = q0 * out_w. Each dst entry gets its additions
// in row order, as the scalar col2im adds them. (ConvGeometry's sizes, copied: its header has inline
// functions that this translation unit must not compile.)
struct Col2imUnitRows {
  const float* cols;
  int64_t ld, row_begin, row_end, q0, q1, out_h, out_w;
  int64_t src[3], kernel[3], stride[3], pad[3], dilation[3];
  float* dst;
};

#ifdef ACLNN_HAVE_X86_KERNELS
void col2im_unit_rows_avx512(const Col2imUnitRows& job);
#endif

}  // namespace aclnn_cpu
