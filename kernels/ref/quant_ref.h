// The quantized convolution's reference entry (quant_ref.cpp): each output's sum in int64 over the
// products as the formula reads them, last in the operator's list (kernels/quant/implementations.cpp).
#pragma once

#include "kernels/core/quant_problem.h"

namespace aclnn_cpu {

extern const QuantImpl kQuantRef;

}  // namespace aclnn_cpu
