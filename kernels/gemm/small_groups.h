// Direct loops for groups with few channels (depthwise, small ResNeXt groups), where the GEMMs
// of the im2col path would be tiny. Operands are dense float; the loops walk the same runs of
// output positions as im2col, one weight tap at a time.
#pragma once

#include "kernels/conv_problem.h"

namespace aclnn_cpu {

// True when the direct loops beat GEMMs: Cin_g * Cout_g is small.
bool use_direct_loops(const ConvGeometry& g);

// dx (N, G*Cin_g, src) = backward_data(dy (N, G*Cout_g, dst), w (G*Cout_g, Cin_g, K))
void direct_backward_data(const ConvGeometry& g, const float* w, const float* dy, float* dx, int threads);
// y (N, G*Cout_g, dst) = forward(x (N, G*Cin_g, src), w)
void direct_forward(const ConvGeometry& g, const float* x, const float* w, float* y, int threads);
// dw (G*Cout_g, Cin_g, K) = backward_weight(x, dy)
void direct_backward_weight(const ConvGeometry& g, const float* x, const float* dy, float* dw, int threads);

}  // namespace aclnn_cpu
