// The quantized convolution's integer tile (kernels/quant/gemm_s8.cpp), one per instruction set. Its
// operands are INT8 values widened to int16 and laid out in pairs along the sum (K): a weight row holds
// (w[k], w[k+1]) per pair, a column block holds, per pair, (x[k], x[k+1]) of each column side by side,
// the layout of a pairwise multiply-add (x86 PMADDWD and VPDPWSSD, aarch64 SMLAL pairs). The products
// are exact and the sums are int32 modulo 2^32, so every set gives the same sums in any order.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

constexpr int kQuantTileRows = 4;   // output channels per tile
constexpr int kQuantTileCols = 16;  // columns (output positions) per tile

struct QuantKernels {
  // acc[r * kQuantTileCols + j] = sum_{q < pairs} weights[r][q] . columns[q][j] (modulo 2^32) for
  // r < kQuantTileRows, j < kQuantTileCols, where weights[r][q] is the int16 pair at
  // weights + 2 * (r * pairs + q) and columns[q][j] the pair at columns + 2 * (q * column_stride + j).
  void (*tile)(const int16_t* weights, int64_t pairs, const int16_t* columns, int64_t column_stride, int32_t* acc);
};

extern const QuantKernels kQuantKernelsGeneric;  // quant_kernels_generic.cpp: the loops as written
#ifdef ACLNN_HAVE_X86_KERNELS
extern const QuantKernels kQuantKernelsAvx2;  // quant_kernels_avx2.cpp (-mavx2): PMADDWD on 8 columns a register
#endif

}  // namespace aclnn_cpu
