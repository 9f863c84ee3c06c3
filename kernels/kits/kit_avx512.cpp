// The AVX-512 kit (kit.h): one ops type on zmm vectors (16 floats) and every kernel shape from it.
// The GEMM's MicroTile (microkernel_tile.h): an 8 x 32 tile in 16 accumulators (8 x 16 for a last
// column sliver with at most 16 valid columns), FLOAT16 and BF16 operands widened in registers and
// results narrowed as they leave them. The row kernels: forward rows in blocks of 8 channels x 32
// positions (16 accumulators), or 1 x 64 for one output channel; weight rows in blocks of 8 channels x
// 3 taps (24 accumulators), 4 x 3 for fewer channels, or 1 x 9 for one; input rows in chunks of 14
// positions x 32 channels (28 accumulators). The Winograd transforms, the AMX tiles' order on the FMAs,
// and the 16-bit conversions: convert_avx512.cpp's narrowing (convert_avx512_bf16.cpp's BF16 narrowing
// in the kit for CPUs with AVX512_BF16), convert_avx2.cpp's elsewhere. Compiled with -mavx512f -mfma;
// called only when the CPU has AVX-512F (and what the AVX2 kit needs: detected_isa()).
#include <immintrin.h>

#include <cstring>

#include "kernels/amx/amx_fma_tiles.h"
#include "kernels/common/keep_in_register.h"
#include "kernels/common/narrow_avx512.h"
#include "kernels/kits/kit.h"
#include "kernels/kits/microkernel_tile.h"
#include "kernels/kits/transpose_avx.h"

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
  // (the row kernels: row_kernels_impl.h)
  static constexpr bool kPrefetchEachRow = true;
  using Mask = __mmask16;
  static constexpr bool kCheapMasks = true;  // a masked load costs what a load does
  static Mask mask_first(int64_t n) { return static_cast<Mask>((1u << n) - 1); }
  static Vec load_masked(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void in_register(Vec& v) { keep_in_register(v); }
  static void store_masked(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  // Lanes [lo, hi) (0 <= lo < hi <= 16), none, and a load of only the mask's lanes from an address that
  // may lie outside any object where no lane is read (a masked-out lane is never touched: no fault).
  static constexpr bool kFaultFreeMasks = true;
  static Mask mask_lanes(int64_t lo, int64_t hi) { return static_cast<Mask>(((1u << hi) - 1) & ~((1u << lo) - 1)); }
  static Mask no_lanes() { return 0; }
  static Vec load_lanes(uintptr_t at, Mask m) { return _mm512_maskz_loadu_ps(m, reinterpret_cast<const void*>(at)); }
};

constexpr int kMr = 8;
using Tile = MicroTile<avx512_ops, kMr, 2>;

void interleave_mr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kMr>(rows, stride, depth, out);
}
void interleave_nr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<Tile::kNr>(rows, stride, depth, out);
}

#include "kernels/kits/row_kernels_impl.h"
#include "kernels/kits/row_kernels_weight_input_impl.h"

// One channel of 3 x 3 taps on a grid: each source vector loaded once for the rows it reaches (its
// source staged, or read in place).
bool band_job(const ForwardRows& job) {
  return job.out_channels == 1 && job.channels == 1 && job.grid_rows == 3 && job.taps == 9 && job.chain_taps == 3;
}
// (rows read in place: the 3 x 3 bands, rows of at most kMaxInPlaceVectors vectors)
bool reads_in_place_avx512(const ForwardRows& job) {
  return band_job(job) && job.width <= kMaxInPlaceVectors * kRowLanes;
}
void forward_rows_avx512(const ForwardRows& job) {
  if (band_job(job)) return forward_band_rows<avx512_ops, 4, 2, 3, 3>(job);
  if (job.out_channels == 1) return forward_rows<avx512_ops, 1, 4, 3>(job);
  forward_rows<avx512_ops, 8, 2>(job);
}
int64_t weight_block_avx512(int64_t out_channels) { return out_channels == 1 ? 1 : out_channels < 8 ? 4 : 8; }
void weight_rows_avx512(const WeightRows& job) {
  if (job.out_channels == 1 && job.grid_rows == 3 && job.taps == 9) return weight_band_rows<avx512_ops, 8, 3, 3>(job);
  if (job.out_channels == 1) return weight_rows<avx512_ops, 1, 9>(job);
  if (job.out_channels < 8) return weight_rows<avx512_ops, 4, 3>(job);
  weight_rows<avx512_ops, 8, 3>(job);
}

// (two rows of 7 positions, a 7 x 7 plane's, in the registers of a chunk of 14)
constexpr int64_t kPairedRowWidth = 7;
void input_rows_avx512(const InputRows& job) { input_rows<avx512_ops, 2, 14, kPairedRowWidth>(job); }

#include "kernels/kits/winograd_transforms_impl.h"

}  // namespace

// The AMX tiles' order on this set's FMAs (kernels/amx/amx_fma_tiles.h): the kit's fma_pairs.
using FmaTiles = AmxFmaTiles<avx512_ops, 4, 2>;
ACLNN_AMX_DEFINE_PRODUCTS(fma_avx512, FmaTiles)

namespace {

// AVX2's conversions (convert_avx2.cpp) but for BF16 narrowing, `floats_to_bf16`, and AVX-512's
// narrowing of rows. (constexpr, as every kit: constant-initialized, so that no code of this file's
// instruction set runs when the library loads on a CPU without it)
constexpr Conversions16 conversions_avx512(void (*floats_to_bf16)(const float*, uint16_t*, int64_t)) {
  return {halves_to_floats_avx2,
          floats_to_halves_avx2,
          bf16_to_floats_avx2,
          floats_to_bf16,
          narrow_rows_avx512,
          widen_rows_avx2,
          widen_strided_avx2,
          copy_rows_avx2,
          copy_rows_even_avx2,
          split_rows_avx2,
          rows_to_vectors_avx2,
          add_to_double_lanes_avx2,
          add_channels_to_double_lanes_avx2,
          add_halves_to_double_lanes_avx2};
}
constexpr Conversions16 kConversionsAvx512 = conversions_avx512(floats_to_bf16_avx512);
constexpr Conversions16 kConversionsAvx512Bf16 = conversions_avx512(floats_to_bf16_avx512bf16);

constexpr IsaKit kit_avx512(const Conversions16* conversions) {
  return {Isa::kAvx512,
          Tile::kernel(Isa::kAvx512, interleave_mr_avx512, interleave_nr_avx512),
          {Isa::kAvx512, forward_rows_avx512, weight_rows_avx512, weight_block_avx512, input_rows_avx512,
           kPairedRowWidth, reads_in_place_avx512},
          transforms_of<avx512_ops>(),
          {amx_pair_rows_fma_avx512, amx_pair_a_rows_fma_avx512},
          conversions,
          &kDeformKernelsAvx2,
          &kQuantKernelsAvx512};
}

}  // namespace

extern constexpr IsaKit kKitAvx512 = kit_avx512(&kConversionsAvx512);
extern constexpr IsaKit kKitAvx512Bf16 = kit_avx512(&kConversionsAvx512Bf16);

}  // namespace aclnn_cpu
