// The quantized convolution's fast entries (this folder), listed ahead of the reference
// (implementations.cpp).
#pragma once

#include "kernels/core/quant_problem.h"

namespace aclnn_cpu {

extern const QuantImpl kQuantGemmS8;  // gemm_s8.cpp: unrolled int16 pair columns and the kit's integer tile

}  // namespace aclnn_cpu
