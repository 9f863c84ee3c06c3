// The deformable convolution's reference entries (deform_ref.cpp): double precision, last in each of
// the operator's lists (kernels/deform/implementations.cpp).
#pragma once

#include "kernels/core/deform_problem.h"

namespace aclnn_cpu {

extern const DeformImpl kDeformRefForward;         // out, and deformOut where asked
extern const DeformImpl kDeformRefBackwardData;    // gradInput and gradOffset
extern const DeformImpl kDeformRefBackwardWeight;  // gradWeight, from offsetOut
extern const DeformImpl kDeformRefBias;            // gradBias

}  // namespace aclnn_cpu
