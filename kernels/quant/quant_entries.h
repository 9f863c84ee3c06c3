// The quantized convolution's fast entries (this folder), listed ahead of the reference
// (implementations.cpp).
#pragma once

#include "kernels/core/quant_problem.h"

namespace aclnn_cpu {

// direct_s8.cpp: the kit's integer tile over a padded channels-last int16 copy of x
extern const QuantImpl kQuantDirectS8;

}  // namespace aclnn_cpu
