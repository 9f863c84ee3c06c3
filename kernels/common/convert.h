// FLOAT16 <-> float conversion of contiguous runs with the CPU's F16C instructions, for the dense
// copies (pack.cpp). Both are exact or round to nearest even, as Eigen::half's portable
// conversion does: only the speed differs.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

// Whether the F16C paths may run: the CPU has F16C and AVX2, and ACLNN_CONVBWD_ISA allows AVX.
bool f16c_conversions();

#ifdef ACLNN_HAVE_X86_KERNELS
// convert_avx2.cpp (-mavx2 -mf16c): out[i] = in[i] for i < n.
void halves_to_floats_avx2(const uint16_t* in, float* out, int64_t n);
void floats_to_halves_avx2(const float* in, uint16_t* out, int64_t n);
// The same for BF16 (to BF16: nearest even, NaNs quiet with their sign, as Eigen::bfloat16).
void bf16_to_floats_avx2(const uint16_t* in, float* out, int64_t n);
void floats_to_bf16_avx2(const float* in, uint16_t* out, int64_t n);
#endif

}  // namespace aclnn_cpu
