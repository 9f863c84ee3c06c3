// The quantized convolution's byte tile on AVX512_VNNI (kernels/kits/quant_byte_tile_impl.h): a block's
// 16 channels in one register, two blocks a pass (12 accumulators, two weight loads and six broadcasts
// per 12 products: VPDPBUSD's full rate). The AVX-512 kit's QuantKernels (quant_kernels_avx2.cpp) take
// it, used where the CPU has AVX512_VNNI (CpuFeatures::int8_dot).
#include <immintrin.h>

#include <cstring>

#include "kernels/kits/quant_byte_tile_impl.h"

namespace aclnn_cpu {
namespace {

struct avx512_vnni_ops {
  using V = __m512i;
  static constexpr int kLanes = 16;
  static constexpr int kBlocks = 2;
  static V load(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
  static V broadcast(const uint8_t* quad) {
    int32_t bits;
    std::memcpy(&bits, quad, sizeof bits);
    return _mm512_set1_epi32(bits);
  }
  static V dot(V acc, V u8, V s8) { return _mm512_dpbusd_epi32(acc, u8, s8); }
};

}  // namespace

void quant_byte_tile_avx512_vnni(const int8_t* weights, int64_t block_stride, int blocks, int64_t points, int64_t quads,
                                 const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride,
                                 int32_t* acc) {
  byte_tile<avx512_vnni_ops>(weights, block_stride, blocks, points, quads, sources, offsets, acc_stride, acc);
}

}  // namespace aclnn_cpu
