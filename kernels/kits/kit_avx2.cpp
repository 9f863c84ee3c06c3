// The AVX2 + FMA kit (kit.h): one ops type on ymm vectors (8 floats) and every kernel shape from it.
// The GEMM's MicroTile (microkernel_tile.h): a 6 x 16 tile in 12 accumulators (6 x 8 for a last column
// sliver with at most 8 valid columns), FLOAT16 and BF16 operands widened in registers and results
// narrowed as they leave them.
// The row kernels, a 16-lane vector of the rows' layout taken as two parts of 8: forward rows in blocks
// of 4 channels x 8 positions x 3 rows (12 accumulators), or 1 x 32 x 3 for one output channel; weight
// rows in blocks of 4 channels x 3 taps (12), 2 x 4 below 4 channels, 1 x 9 for one; input rows in
// chunks of 6 positions x 16 channels (12). Twelve of the 16 registers hold accumulators: with 8, the
// FMA units wait on the chains' latency. The Winograd transforms, the AMX tiles' order on the FMAs, and
// the 16-bit conversions of convert_avx2.cpp. Compiled with -mavx2 -mfma -mf16c; called only when the
// CPU has AVX2, FMA and F16C (detected_isa()).
#include <immintrin.h>

#include <cstring>

#include "kernels/amx/amx_fma_tiles.h"
#include "kernels/common/halves_avx2.h"
#include "kernels/common/keep_in_register.h"
#include "kernels/kits/kit.h"
#include "kernels/kits/microkernel_tile.h"
#include "kernels/kits/transpose_avx.h"

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
  // (the row kernels: row_kernels_impl.h, a 16-lane vector of the rows' layout taken as two parts of 8)
  // The prefetch steps once per pass: in the rows' loop its counters would take general registers the
  // loop needs.
  static constexpr bool kPrefetchEachRow = false;
  // A masked load is a load and an AND (vmaskmovps is microcoded on AMD's cores): the lanes past the
  // first n are read, and cleared before any product (an infinity there makes no NaN).
  static constexpr bool kCheapMasks = false;
  static constexpr bool kFaultFreeMasks = false;  // (every source staged)
  struct Mask {
    __m256 keep;
    int64_t count;
  };
  static Mask mask_first(int64_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return {_mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane)), n};
  }
  static Vec load_masked(const float* p, Mask m) { return _mm256_and_ps(_mm256_loadu_ps(p), m.keep); }
  // The first lanes stored one by one, nothing past them (vmaskmovps stores are microcoded on AMD's cores).
  static void store_masked(float* p, Vec v, Mask m) {
    alignas(32) float lanes[kLanes];
    _mm256_store_ps(lanes, v);
    for (int64_t l = 0; l < m.count; ++l) p[l] = lanes[l];
  }
  static void in_register(Vec& v) { keep_in_register(v); }
};

using Tile = MicroTile<avx2_ops, 6, 2>;

void interleave_nr_avx2(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<Tile::kNr>(rows, stride, depth, out);
}

#include "kernels/kits/row_kernels_impl.h"
#include "kernels/kits/row_kernels_weight_input_impl.h"

void forward_rows_avx2(const ForwardRows& job) {
  // (one channel: 3 rows x 2 vectors, so that the accumulators and the sums of the kernel rows' chains
  // both stay in the 16 registers)
  // (one channel of 3 x 3 taps on a grid: each source vector loaded once for the rows it reaches)
  if (job.out_channels == 1 && job.channels == 1 && job.grid_rows == 3 && job.taps == 9 && job.chain_taps == 3)
    return forward_band_rows<avx2_ops, 2, 2, 3, 3>(job);
  if (job.out_channels == 1) return forward_rows<avx2_ops, 1, 2, 3>(job);
  forward_rows<avx2_ops, 4, 1, 3>(job);
}
int64_t weight_block_avx2(int64_t out_channels) { return out_channels == 1 ? 1 : out_channels < 4 ? 2 : 4; }
void weight_rows_avx2(const WeightRows& job) {
  if (job.out_channels == 1) return weight_rows<avx2_ops, 1, 9>(job);
  if (job.out_channels < 4) return weight_rows<avx2_ops, 2, 4>(job);
  weight_rows<avx2_ops, 4, 3>(job);
}

bool reads_in_place_avx2(const ForwardRows&) { return avx2_ops::kFaultFreeMasks; }
void input_rows_avx2(const InputRows& job) { input_rows<avx2_ops, 1, 6>(job); }

#include "kernels/kits/winograd_transforms_impl.h"

}  // namespace

// The AMX tiles' order on this set's FMAs (kernels/amx/amx_fma_tiles.h): the kit's fma_pairs.
using FmaTiles = AmxFmaTiles<avx2_ops, 2, 2>;
ACLNN_AMX_DEFINE_PRODUCTS(fma_avx2, FmaTiles)

// The conversions of convert_avx2.cpp (also the AVX-512 kits' where they have no wider ones).
constexpr Conversions16 kConversionsAvx2 = {halves_to_floats_avx2,
                                            floats_to_halves_avx2,
                                            bf16_to_floats_avx2,
                                            floats_to_bf16_avx2,
                                            narrow_rows_avx2,
                                            widen_rows_avx2,
                                            widen_strided_avx2,
                                            copy_rows_avx2,
                                            copy_rows_even_avx2,
                                            split_rows_avx2,
                                            rows_to_vectors_avx2,
                                            add_to_double_lanes_avx2,
                                            add_channels_to_double_lanes_avx2,
                                            add_halves_to_double_lanes_avx2};

extern constexpr IsaKit kKitAvx2 = {
    Isa::kAvx2,
    Tile::kernel(Isa::kAvx2, interleave_6_portable, interleave_nr_avx2),
    {Isa::kAvx2, forward_rows_avx2, weight_rows_avx2, weight_block_avx2, input_rows_avx2, 0, reads_in_place_avx2},
    transforms_of<avx2_ops>(),
    {amx_pair_rows_fma_avx2, amx_pair_a_rows_fma_avx2},
    &kConversionsAvx2,
    &kDeformKernelsAvx2,
    &kQuantKernelsAvx2};

}  // namespace aclnn_cpu
