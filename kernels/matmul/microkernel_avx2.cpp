// AVX2 + FMA micro-kernel: MicroTile (microkernel_tile.h) on ymm vectors, a 6 x 16 tile in 12
// accumulators (6 x 8 for a last column sliver with at most 8 valid columns), FLOAT16 and BF16
// operands widened in registers and results narrowed as they leave them. Compiled with -mavx2 -mfma
// -mf16c; called only when the CPU has AVX2 and FMA (its 16-bit slots only where it has F16C too:
// f16c_conversions()).
#include <immintrin.h>

#include <cstring>

#include "kernels/amx/amx_fma_tiles.h"
#include "kernels/common/halves_avx2.h"
#include "kernels/matmul/microkernel.h"
#include "kernels/matmul/microkernel_tile.h"
#include "kernels/matmul/transpose_avx.h"

namespace aclnn_cpu {
namespace {

struct avx2_ops {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static constexpr bool kVectorConversions = true;
  // BF16 rows as pairs: 8 pairs widen with one shift and one AND, where widening 16 values in order
  // takes two zero-extensions and two shifts, which compete with the FMAs for their ports on AMD's
  // cores.
  static constexpr bool kBf16PairSplit = true;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec broadcast(float x) { return _mm256_set1_ps(x); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec madd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static void prefetch_a(const float*) {}

  static Vec upper_halves() { return _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0xFFFF0000u))); }
  template <bool kBf16>
  static Vec widen(const uint16_t* p) {
    return widen8_avx2<kBf16>(p);
  }
  // The 32 bits that end with the entry broadcast and their low half cleared: an exact widening that
  // costs an AND, not a shuffle (one VBROADCASTSS from 2 bytes below the entry).
  static Vec broadcast_bf16(const uint16_t* p) {
    float pair;
    std::memcpy(&pair, p - 1, sizeof pair);
    return _mm256_and_ps(_mm256_set1_ps(pair), upper_halves());
  }
  static void store16(uint16_t* p, Vec v, bool bf16) {
    constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m128i narrow = bf16 ? narrow_bf16_avx2(v) : _mm256_cvtps_ph(v, kNearestEven);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), narrow);
  }
  // 8 BF16 pairs (32-bit words): their low halves (even entries) and high halves (odd ones) widened,
  // a denormal half as zero of its sign (AmxFmaTiles: as the tiles take BF16 inputs).
  static void widen_pairs(const uint32_t* p, Vec& even, Vec& odd) {
    load_bf16_pairs(reinterpret_cast<const uint16_t*>(p), even, odd);
    even = flush_denormal(even), odd = flush_denormal(odd);
  }
  static Vec flush_denormal(Vec v) {  // v & (sign | all where the exponent is not zero)
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i exponent = _mm256_and_si256(bits, _mm256_set1_epi32(0x7F800000));
    const __m256i tiny = _mm256_cmpeq_epi32(exponent, _mm256_setzero_si256());
    return _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_and_si256(tiny, _mm256_set1_epi32(0x7FFFFFFF)), bits));
  }
  // Columns 0, 2, ..., 14 and 1, 3, ..., 15 of 16 BF16 values.
  static void load_bf16_pairs(const uint16_t* p, Vec& even, Vec& odd) {
    const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    even = _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
    odd = _mm256_and_ps(_mm256_castsi256_ps(pairs), upper_halves());
  }
  // The even columns in lo and the odd ones in hi become columns 0..7 in lo and 8..15 in hi.
  static void from_pairs(Vec& lo, Vec& hi) {
    const __m256 low = _mm256_unpacklo_ps(lo, hi), high = _mm256_unpackhi_ps(lo, hi);  // 0-3 8-11 | 4-7 12-15
    lo = _mm256_permute2f128_ps(low, high, 0x20);
    hi = _mm256_permute2f128_ps(low, high, 0x31);
  }
};
using Tile = MicroTile<avx2_ops, 6, 2>;

void interleave_nr_avx2(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<Tile::kNr>(rows, stride, depth, out);
}

}  // namespace

// The AMX tiles' order on this set's FMAs (kernels/amx/amx_fma_tiles.h), for amx_pair_rows and
// amx_pair_a_rows (amx.cpp).
using FmaTiles = AmxFmaTiles<avx2_ops, 2, 2>;
ACLNN_AMX_DEFINE_PRODUCTS(fma_avx2, FmaTiles)

extern const MicroKernel kMicroKernelAvx2 = Tile::kernel(Isa::kAvx2, interleave_6_portable, interleave_nr_avx2);

}  // namespace aclnn_cpu
