// BF16 products in the order of AMX tiles (TDPBF16PS), written once over a tile-operations layer
// (amx_tiles.h) with four implementations: the CPU's tile instructions (amx_hardware.cpp, x86-64
// only), AVX512_BF16's pair instructions (amx_avx512_bf16.cpp), a vector set's float FMAs
// (amx_fma_tiles.h) and an exact emulation in portable C++ (amx_emulated.cpp), so that the packing,
// tiling and loops run in every test on every machine and each implementation is checked against the
// emulation bit for bit (tests/test_amx.cpp; the hardware by scripts/amx_check.sh).
//
// The order of an entry's sum (TDPBF16PS as a Sapphire Rapids host was measured to compute it against
// software emulations, not its published pseudocode's plain sum; confirmed by scripts/amx_check.sh
// on a 16-core Xeon with AMX-BF16, and to be confirmed by it on each new AMX host): the depth is cut into chunks of 16
// pairs (32 BF16 products) from its first pair on, a last chunk padded with zero pairs; per chunk, the even products
// (the low halves of the pairs) are one chain of fused multiply-adds from zero in order, the odd products another, then
// even + odd, then the entry + that. BF16 inputs that are denormal count as zero, and every result (each multiply-add
// and add) that is tiny is flushed to zero of its sign, tiny as x86's FTZ finds it (below FLT_MIN after rounding to 24
// bits with an unbounded exponent). Each step rounds once: a product is never rounded apart from its addition.
//
// Operands are 32-bit words holding a pair of BF16 values, the even one in the low half (bf16_pairs.h).
#pragma once

#include <cstdint>

#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

// (Which tiles a plan's pair products take, AmxTiles, is a CPU feature: kernels/core/cpu_isa.h.)
const char* amx_detail(AmxTiles tiles);  // the verbose note: ":amx", ":amx_emulated", ":amx_avx512bf16", ":amx_fma"

constexpr int64_t kAmxRows = 16;   // rows of a tile (of A and of C)
constexpr int64_t kAmxPairs = 16;  // pairs of a chunk: A's tile columns, B's tile rows
constexpr int64_t kAmxBlock = 32;  // rows and columns of C a block of 2 x 2 tiles computes

// A left operand in tiles of 16 rows x 16 pairs: pair q of row i at
//   data[((i / 16) * chunks + q / 16) * 256 + (i % 16) * 16 + q % 16],  chunks = ceil(pairs / 16),
// rows up to a multiple of 32 and pairs up to whole chunks (zero past the last). For kVectors each
// chunk of a row holds its chains' words instead (amx_avx512_bf16.cpp): word k < 8 (pair 2k+1's even
// half | pair 2k's even half << 16), word 8 + k (pair 2k+1's odd half | pair 2k's odd half << 16).
int64_t amx_left_words(int64_t m, int64_t pairs);
// Writes pair(i, q) (a word) for rows [i0, i1) (zero past m) of an amx_left_words(m, pairs) operand
// for `tiles`.
template <typename Pair>
void pack_amx_left(AmxTiles tiles, int64_t m, int64_t pairs, int64_t i0, int64_t i1, Pair pair, uint32_t* out) {
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs;
  const auto word = [&](int64_t i, int64_t q) { return i < m && q < pairs ? pair(i, q) : 0u; };
  for (int64_t i = i0; i < i1; ++i) {
    uint32_t* row = out + i / kAmxRows * chunks * kAmxRows * kAmxPairs + i % kAmxRows * kAmxPairs;
    for (int64_t t = 0; t < chunks; ++t) {
      uint32_t* words = row + t * kAmxRows * kAmxPairs;
      const int64_t q0 = t * kAmxPairs;
      if (tiles != AmxTiles::kVectors) {
        for (int64_t k = 0; k < kAmxPairs; ++k) words[k] = word(i, q0 + k);
        continue;
      }
      for (int64_t k = 0; k < kAmxPairs / 2; ++k) {  // (each word written once: no store read back)
        const uint32_t x = word(i, q0 + 2 * k), y = word(i, q0 + 2 * k + 1);
        words[k] = (y & 0xFFFFu) | x << 16;
        words[kAmxPairs / 2 + k] = y >> 16 | (x & 0xFFFF0000u);
      }
    }
  }
}

// Words of the staging amx_pair_rows (kernels/matmul/bf16_pairs.h) needs (per thread).
int64_t amx_stage_words(int64_t pairs);
// Words of the staging amx_pair_a_rows needs (per thread).
int64_t amx_a_stage_words(int64_t pairs);

// One implementation's two products in the order above (amx_pair_rows and amx_pair_a_rows,
// kernels/matmul/bf16_pairs.h, say what they compute): the tiles', AVX512_BF16's, the emulation's, or a
// kit's on its FMAs (IsaKit::fma_pairs).
struct AmxProducts {
  void (*rows)(int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base, const int64_t* b_rows,
               uint32_t* stage, float* c, int64_t ldc) = nullptr;
  void (*a_rows)(int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,
                 const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset, bool accumulate,
                 float* c, int64_t ldc, uint32_t* stage) = nullptr;
};
// The products of this layer's implementations: the CPU's tiles (kHardware), AVX512_BF16's pair
// instructions (kVectors), else the emulation (a build without the others, and kEmulated; the FMA
// tiles, kFma*, are the kits').
AmxProducts amx_products(AmxTiles tiles);

}  // namespace aclnn_cpu
