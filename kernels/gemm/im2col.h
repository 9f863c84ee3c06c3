// Moving between one (sample, group) slice of a dense tensor and its column matrix.
// Column matrix of a slice with C channels: rows r = c*K + k (K = kernel volume, k over
// (kd, kh, kw)), columns = output positions o over (od, oh, ow); entry = src[c, o*s - p + k*d],
// zero outside the source.
#pragma once

#include <cstdint>

#include "kernels/conv_problem.h"

namespace aclnn_cpu {

// cols (rows [row_begin, row_end) x columns [col_begin, col_end), row-major) <- im2col(src).
// `src` points at channel 0 of the slice (C x src spatial, dense).
void im2col(const ConvGeometry& g, const float* src, int64_t row_begin, int64_t row_end, int64_t col_begin,
            int64_t col_end, float* cols);

// dst[c, i] += every cols entry that im2col would have read from position (c, i); same block shape.
void col2im_add(const ConvGeometry& g, const float* cols, int64_t row_begin, int64_t row_end, int64_t col_begin,
                int64_t col_end, float* dst);

}  // namespace aclnn_cpu
