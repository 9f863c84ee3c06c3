// The deformable sampling loops as written (kernels/kits/deform_kernels.h): every CPU's, and the order
// the vector sets keep. Compiled without contraction (src/CMakeLists.txt).
#include "kernels/kits/deform_kernels.h"

namespace aclnn_cpu {
namespace {

void sample_generic(const float* plane, int64_t pitch, const int32_t* base, const float* weights, int64_t stride,
                    int64_t count, float* out) {
  const float *w0 = weights, *w1 = w0 + stride, *w2 = w1 + stride, *w3 = w2 + stride;
  for (int64_t j = 0; j < count; ++j) {
    const float *upper = plane + base[j], *lower = upper + pitch;
    out[j] = ((w0[j] * upper[0] + w1[j] * upper[1]) + w2[j] * lower[0]) + w3[j] * lower[1];
  }
}

void neighbour_sums_generic(const float* plane, int64_t pitch, const int32_t* base, const float* gradient,
                            int64_t count, double* sums) {
  for (int64_t j = 0; j < count; ++j) {
    const float *upper = plane + base[j], *lower = upper + pitch;
    const double carried = gradient[j];
    double* s = sums + 4 * j;
    s[0] += carried * static_cast<double>(upper[0]);
    s[1] += carried * static_cast<double>(upper[1]);
    s[2] += carried * static_cast<double>(lower[0]);
    s[3] += carried * static_cast<double>(lower[1]);
  }
}

}  // namespace

extern const DeformKernels kDeformKernelsGeneric = {sample_generic, neighbour_sums_generic};

}  // namespace aclnn_cpu
