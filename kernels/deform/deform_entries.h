// The deformable convolution's fast entries (this folder), listed ahead of the reference
// (implementations.cpp).
#pragma once

#include "kernels/core/deform_problem.h"

namespace aclnn_cpu {

extern const DeformImpl kDeformGemmForward;  // columns_forward.cpp: sampled columns and the float GEMM

}  // namespace aclnn_cpu
