// AVX-512F float -> BF16 narrowing (convert.h), 16 values per step with the mask registers: the
// same integer rounding as floats_to_bf16_avx2, so the same bits, in about a third of its
// instructions. Compiled with -mavx512f; called only through the AVX-512 kits' conversions
// (IsaKit::conversions: the plan's instruction set is avx512).
#include <immintrin.h>

#include "kernels/common/convert.h"
#include "kernels/common/narrow_avx512.h"

namespace aclnn_cpu {

void narrow_rows_avx512(const float* in, int64_t in_stride, int64_t n, int64_t rows, uint16_t* out, int64_t out_stride,
                        bool bf16) {
  const int64_t whole = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - whole)) - 1);
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
    for (int64_t i = 0; i < whole; i += 16) narrow_avx512::store16(out + i, _mm512_loadu_ps(in + i), bf16);
    if (tail != 0) narrow_avx512::store16_masked(out + whole, _mm512_maskz_loadu_ps(tail, in + whole), bf16, tail);
  }
}

void floats_to_bf16_avx512(const float* in, uint16_t* out, int64_t n) { narrow_rows_avx512(in, n, n, 1, out, n, true); }

}  // namespace aclnn_cpu
