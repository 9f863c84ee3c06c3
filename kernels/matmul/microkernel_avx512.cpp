// AVX-512F micro-kernel: MicroTile (microkernel_tile.h) on zmm vectors, an 8 x 32 tile in 16
// accumulators (8 x 16 for a last column sliver with at most 16 valid columns), FLOAT16 and BF16
// operands widened in registers and results narrowed as they leave them. Compiled with -mavx512f
// -mfma; called only when the CPU has AVX-512F.
#include <immintrin.h>

#include <cstring>

#include "kernels/amx/amx_fma_tiles.h"
#include "kernels/common/narrow_avx512.h"
#include "kernels/matmul/microkernel.h"
#include "kernels/matmul/microkernel_tile.h"
#include "kernels/matmul/transpose_avx.h"

namespace aclnn_cpu {
namespace {

struct avx512_ops {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static constexpr bool kVectorConversions = true;
  static constexpr bool kBf16PairSplit = false;  // (16 BF16 values widen in two instructions)
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec madd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static void prefetch_a(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }

  template <bool kBf16>
  static Vec widen(const uint16_t* p) {
    // (the zero-masking forms: see narrow_avx512.h)
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (kBf16) {
      return _mm512_castsi512_ps(
          _mm512_maskz_slli_epi32(narrow_avx512::kAll, _mm512_maskz_cvtepu16_epi32(narrow_avx512::kAll, bits), 16));
    } else {
      return _mm512_maskz_cvtph_ps(narrow_avx512::kAll, bits);
    }
  }
  // The 32 bits that end with the entry broadcast and their low half cleared (exact).
  static Vec broadcast_bf16(const uint16_t* p) {
    int32_t pair;
    std::memcpy(&pair, p - 1, sizeof pair);
    return _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_set1_epi32(pair), _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  static void store16(uint16_t* p, Vec v, bool bf16) { narrow_avx512::store16(p, v, bf16); }
  // 16 BF16 pairs (32-bit words): their low halves (even entries) and high halves (odd ones) widened,
  // a denormal half as zero of its sign (AmxFmaTiles: as the tiles take BF16 inputs).
  static void widen_pairs(const uint32_t* p, Vec& even, Vec& odd) {
    const __m512i words = _mm512_loadu_si512(p);
    even = flush_denormal(_mm512_maskz_slli_epi32(narrow_avx512::kAll, words, 16));
    odd = flush_denormal(_mm512_and_si512(words, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  static Vec flush_denormal(__m512i bits) {  // bits & (sign | all where the exponent is not zero)
    const __mmask16 normal = _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7F800000));
    const __m512i sign = _mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0x80000000u)));
    return _mm512_castsi512_ps(_mm512_mask_mov_epi32(sign, normal, bits));
  }
};
constexpr int kMr = 8;
using Tile = MicroTile<avx512_ops, kMr, 2>;

void interleave_mr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kMr>(rows, stride, depth, out);
}
void interleave_nr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<Tile::kNr>(rows, stride, depth, out);
}

}  // namespace

// The AMX tiles' order on this set's FMAs (kernels/amx/amx_fma_tiles.h), for amx_pair_rows and
// amx_pair_a_rows (amx.cpp).
using FmaTiles = AmxFmaTiles<avx512_ops, 4, 2>;
ACLNN_AMX_DEFINE_PRODUCTS(fma_avx512, FmaTiles)

extern const MicroKernel kMicroKernelAvx512 = Tile::kernel(Isa::kAvx512, interleave_mr_avx512, interleave_nr_avx512);

}  // namespace aclnn_cpu
