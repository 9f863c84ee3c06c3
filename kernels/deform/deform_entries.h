// The deformable convolution's fast entries (this folder), listed ahead of the reference
// (implementations.cpp).
#pragma once

#include "kernels/core/deform_problem.h"

namespace aclnn_cpu {

extern const DeformImpl kDeformGemmForward;  // columns_forward.cpp: sampled columns and the float GEMM
// columns_backward.cpp: the columns' gradient by the float GEMM, scattered through the sampling table
extern const DeformImpl kDeformGemmBackwardData;
extern const DeformImpl kDeformGemmBackwardWeight;  // ... gradWeight by the float GEMM over offsetOut
extern const DeformImpl kDeformLanesBias;           // ... the convolution's gradBias reduction

}  // namespace aclnn_cpu
