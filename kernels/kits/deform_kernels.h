// The deformable convolution's sampling loops (kernels/deform/columns_forward.cpp, columns_backward.cpp),
// one set per instruction set, as the other kernels of the kits: reads of a padded float plane
// (kernels/deform/columns.h: PaddedPlanes) at each point's four neighbours, slots base, base + 1,
// base + pitch and base + pitch + 1 (x0..x3). Every set gives the same bits: each loop's order of
// operations is fixed and none fuses a multiply-add (their files are compiled without contraction).
#pragma once

#include <cstdint>

namespace aclnn_cpu {

struct DeformKernels {
  // out[j] = ((w0[j]*x0 + w1[j]*x1) + w2[j]*x2) + w3[j]*x3 in float, for j < count, x_i the neighbours of
  // base[j]; weight i of point j at weights[i * stride + j].
  void (*sample)(const float* plane, int64_t pitch, const int32_t* base, const float* weights, int64_t stride,
                 int64_t count, float* out);
  // sums[4*j + i] += double(gradient[j]) * double(x_i) for j < count and i < 4 (each product exact).
  void (*neighbour_sums)(const float* plane, int64_t pitch, const int32_t* base, const float* gradient, int64_t count,
                         double* sums);
};

extern const DeformKernels kDeformKernelsGeneric;  // deform_kernels_generic.cpp: the loops as written
#ifdef ACLNN_HAVE_X86_KERNELS
extern const DeformKernels kDeformKernelsAvx2;  // deform_kernels_avx2.cpp (-mavx2): pair loads, double lanes
#endif

}  // namespace aclnn_cpu
