// The summation order of the float kernels' long sums (the GEMM micro-kernels, and the direct
// gradInput row kernels): accuracy by design, independent of the instruction set, the thread count
// and the tiling.
//
// A sum of n products is cut, from its first product on, into groups of kSumGroup products, and each
// group into blocks of kSumBlock:
//   - each block is one chain of fused multiply-adds from zero, in order;
//   - a group's block sums are added in order;
//   - the group sums are added in order to the result (to what C held, where a product accumulates).
// Every product then meets at most kSumBlock + kSumGroup / kSumBlock - 1 + ceil(n / kSumGroup)
// roundings, against n in one chain: to first order
//   |error| <= (kSumBlock + kSumGroup / kSumBlock - 1 + ceil(n / kSumGroup)) * 2^-24 * sum |products|
// (57 units for n = 4608, a 3x3 kernel over 512 channels, where one chain allows 4608); each sum a
// caller adds to it afterwards (another tap's GEMM, a partial) is one rounding more. Typical errors
// grow like the square root of those counts.
//
// Where the cuts fall is part of each kernel's documented order (docs/kernels.md): a function of the
// problem alone, never of the instruction set, the register tile or the cache blocking.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

constexpr int64_t kSumBlock = 32;   // products per chain from zero
constexpr int64_t kSumGroup = 256;  // products per group (a multiple of kSumBlock)
static_assert(kSumGroup % kSumBlock == 0, "groups of whole blocks");

}  // namespace aclnn_cpu
