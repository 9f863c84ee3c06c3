// The quantized convolution's tile on AVX2 (kernels/kits/quant_kernels.h): each column pair row is two
// registers of 8 columns; each weight pair is broadcast and multiplied into them with PMADDWD (two
// exact products summed in int32), then added into 4 x 2 accumulators. The AVX2 and AVX-512 kits take it.
#include <immintrin.h>

#include <cstring>

#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {
namespace {

void tile_avx2(const int16_t* weights, int64_t pairs, const int16_t* columns, int64_t column_stride, int32_t* acc) {
  __m256i sums[kQuantTileRows][2];
  for (auto& row : sums) row[0] = row[1] = _mm256_setzero_si256();
  for (int64_t q = 0; q < pairs; ++q) {
    const int16_t* pair_row = columns + 2 * q * column_stride;
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair_row));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair_row + 16));
    for (int r = 0; r < kQuantTileRows; ++r) {
      int32_t pair;
      std::memcpy(&pair, weights + 2 * (r * pairs + q), sizeof pair);
      const __m256i w = _mm256_set1_epi32(pair);
      sums[r][0] = _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(w, low));
      sums[r][1] = _mm256_add_epi32(sums[r][1], _mm256_madd_epi16(w, high));
    }
  }
  for (int r = 0; r < kQuantTileRows; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kQuantTileCols), sums[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kQuantTileCols + 8), sums[r][1]);
  }
}

}  // namespace

extern const QuantKernels kQuantKernelsAvx2 = {tile_avx2};

}  // namespace aclnn_cpu
