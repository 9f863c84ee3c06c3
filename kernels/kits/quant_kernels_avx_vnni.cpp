// The quantized convolution's byte tile on AVX-VNNI (kernels/kits/quant_byte_tile_impl.h, VEX-encoded
// VPDPBUSD on 256-bit registers): a block's 16 channels in two registers, one block a pass (12
// accumulators of 16 registers). The AVX2 kit's QuantKernels (quant_kernels_avx2.cpp) take it, used where
// the CPU has AVX-VNNI (CpuFeatures::int8_dot).
#include <immintrin.h>

#include <cstring>

#include "kernels/kits/quant_byte_tile_impl.h"

namespace aclnn_cpu {
namespace {

struct avx_vnni_ops {
  using V = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kBlocks = 1;
  static V load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(int32_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static V broadcast(const uint8_t* quad) {
    int32_t bits;
    std::memcpy(&bits, quad, sizeof bits);
    return _mm256_set1_epi32(bits);
  }
  static V dot(V acc, V u8, V s8) { return _mm256_dpbusd_avx_epi32(acc, u8, s8); }
};

}  // namespace

void quant_byte_tile_avx_vnni(const int8_t* weights, int64_t block_stride, int blocks, int64_t points, int64_t quads,
                              const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride, int32_t* acc) {
  byte_tile<avx_vnni_ops>(weights, block_stride, blocks, points, quads, sources, offsets, acc_stride, acc);
}

}  // namespace aclnn_cpu
