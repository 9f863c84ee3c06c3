// Pieces several implementations share: packing strided views into dense arrays, and the bias reduction.
#pragma once

#include <cstdint>

#include "kernels/conv_problem.h"

namespace aclnn_cpu {

// True when the view is FLOAT laid out densely in (N, C, D, H, W) order (unit dims may have any
// stride): kernels can then read or write it in place.
bool is_dense_float(const View5& view);

// The view's first element, as float (valid when is_dense_float).
float* dense_float_data(const View5& view);

// Copies a view into a dense (N, C, D, H, W) array of T (double or float), rounding each value
// to FLOAT16 first when `math` asks for it. Exact otherwise (FLOAT16/BF16 widen exactly).
// Each of these runs on up to `threads` OpenMP threads.
template <typename T>
void pack_dense(const View5& view, MathMode math, T* out, int threads);

// out[c] = sum over n and space of dy[n, c, ...] in double, rounded once into out's dtype.
// (A vector reduction: cubeMathType does not apply to it.)
void reduce_bias(const View5& dy, const View5& out, int threads);

// Stores a dense (N, C, D, H, W) array shaped like `out` into the strided view, rounding once.
template <typename T>
void store_dense(const T* values, const View5& out, int threads);

}  // namespace aclnn_cpu
