// Whether a view's values, as the kernels read them, are all finite: the test behind the
// non-finite repair (kernels/ref/conv_ref.h), which needs it to be cheap where everything is.
#pragma once

#include <cstdint>

#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

// True when planes (n, c0 .. c0 + channels - 1) of the view hold no Inf or NaN, read as the
// kernels read them (rounded to FLOAT16 first under MathMode::kFp16Inputs, where a large FLOAT or
// BF16 value becomes Inf). A dense run is tested on its bits, a vector's worth at a time; values read
// as stored, at a strided view's strides, on their bits too (no conversion).
bool all_finite(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t channels);
// True when values[0 .. count) hold no Inf or NaN (tested on their bits).
bool all_finite(const float* values, int64_t count);

}  // namespace aclnn_cpu
