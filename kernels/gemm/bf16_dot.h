// Products of BF16 operands with AVX512_BF16's pair dot products (VDPBF16PS): each instruction
// multiplies 16 pairs of BF16 entries of B by one broadcast pair of A and adds both products to 16
// float accumulators, twice the multiply-adds of a float FMA on half the bytes. BF16 products are
// exact in float (8-bit significands), so an entry is a chain of float multiply-adds as in sgemm,
// over the depth in pairs: for each pair q, acc = fma(a[2q+1], b[2q+1], acc), then fma(a[2q],
// b[2q], acc) (the instruction's order), rounded to nearest even, with inputs and results that are
// denormal flushed to zero. The chains do not depend on the blocking or the thread count; they
// differ from sgemm's (depth order, denormals), so a plan that takes these products says so
// (":bf16_dot" in its verbose line) and gives the same bits on every CPU that has them.
//
// Operands come as 32-bit words holding a pair of BF16 values: the even entry in the low half.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/amx/amx.h"
#include "kernels/common/cpu_isa.h"
#include "kernels/core/conv_problem.h"
#include "kernels/gemm/sgemm.h"

namespace aclnn_cpu {

// Whether a product of operands read from views `a` and `b` may take them: bf16_dot_available(),
// both BF16, and used as they are (not rounded to FLOAT16 by cubeMathType 2). Read at phase 1.
bool bf16_pair_products(const View5& a, const View5& b, MathMode math);
// The AMX tiles (kernels/amx/amx.h) a product of operands read from views `a` and `b` takes: amx_tiles()
// where both are BF16 and used as they are, else kNone. Read at phase 1.
AmxTiles amx_pair_products(const View5& a, const View5& b, MathMode math);

// The BF16 nearest to a float (ties to even, NaNs quiet; the float copy of a BF16 input converts
// back exactly).
inline uint16_t bf16_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(bits >> 16 | 0x40);
  return static_cast<uint16_t>((bits + 0x7FFFu + (bits >> 16 & 1u)) >> 16);
}
inline uint32_t bf16_pair(uint16_t even, uint16_t odd) { return uint32_t{even} | uint32_t{odd} << 16; }

// The micro-kernel's tile: 8 rows x 32 columns (a last tile of at most 16 columns runs 16 wide).
constexpr int kBf16DotRows = 8, kBf16DotColumns = 32;

// A left operand in slivers of 8 rows: pair q of row i at data[(i / 8) * 8 * pairs + q * 8 + i % 8].
struct PackedPairs {
  const uint32_t* data;
  int64_t pairs;
};
// Words of a PackedPairs of m rows (rounded up to 8; the padding rows are zero).
int64_t packed_pairs_words(int64_t m, int64_t pairs);

// Implicit GEMM as sgemm_rows, on pairs: C (m x n) = A (m x 2 pairs) * B (2 pairs x n) with A
// packed and B's pair row q read in place, column j's pair at b_base[b_rows[q] + j]. Whole tiles:
// C holds round_up(m, 8) rows and round_up(n, 32) columns (or n rounded up to 16 where the last
// tile is that narrow), b_base readable that far. `blocking` gives the depth (kc / 2 pairs) and
// rows (mc) per block.
void bf16_dot_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t pairs, const PackedPairs& a,
                   const uint32_t* b_base, const int64_t* b_rows, float* c, int64_t ldc);

// Writes pair(i, q) (a word: bf16_pair) as PackedPairs for rows i < m and pairs q < pairs, zero
// rows past m.
template <typename Pair>
void pack_pairs_left(int64_t m, int64_t pairs, Pair pair, uint32_t* out) {
  for (int64_t i0 = 0; i0 < m; i0 += kBf16DotRows) {
    for (int64_t q = 0; q < pairs; ++q) {
      for (int64_t i = i0; i < i0 + kBf16DotRows; ++i)
        out[i0 * pairs + q * kBf16DotRows + i - i0] = i < m ? pair(i, q) : 0;
    }
  }
}

// out[i] = the pair of channels c (low half) and c + 1 (high half; zero unless `odd`) at position
// first + i of plane n (positions (d, h, w) row-major) of a BF16 view, for i < count; `scratch`
// holds 2 * count floats (for views whose planes are not contiguous).
void stage_channel_pairs(const View5& view, int64_t n, int64_t c, bool odd, int64_t first, int64_t count,
                         float* scratch, uint32_t* out);

// A right operand in slivers of 32 columns: pair q of column j at data[(j / 32) * 32 * pairs + q * 32 +
// j % 32] (zero past the last column); a product reads pairs [offset, offset + its depth).
struct PackedPairsRight {
  const uint32_t* data;
  int64_t pairs, offset;
};
int64_t packed_pairs_right_words(int64_t n, int64_t pairs);
// Writes pairs of depth entries of `count` columns, column j's entries (2q, 2q+1) at
// rows[j * row_stride + 2q] and + 1 (floats holding BF16 values, which convert exactly), into
// pairs [offset, offset + pairs) of columns [j0, j0 + count) of a PackedPairsRight of `depth` pairs.
void pack_pairs_right(const float* rows, int64_t row_stride, int64_t count, int64_t pairs, uint32_t* out, int64_t depth,
                      int64_t j0, int64_t offset);

// C (m x n) = A * B (+ C when `accumulate`) as sgemm_a_rows, on pairs: A's pair q of row i is the two
// BF16 entries at a_base[a_rows[i] + a_columns[q]] and + 1 (read in place), B a PackedPairsRight.
// Partial tiles of C are computed aside: C is m x n.
void bf16_dot_a_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base,
                     const int64_t* a_rows, const int64_t* a_columns, const PackedPairsRight& b, bool accumulate,
                     float* c, int64_t ldc);

// The micro-kernel (microkernel_avx512_bf16.cpp): one 8 x 32 tile (16 wide when `half`) over kc
// pairs, A from a packed sliver (8 words per pair), B row q at b_base + b_rows[q].
#ifdef ACLNN_HAVE_X86_KERNELS
void bf16_dot_rows_tile_avx512(int64_t kc, const uint32_t* a, const uint32_t* b_base, const int64_t* b_rows, float* c,
                               int64_t ldc, bool load_c, bool half);
// The same with A's 8 rows read in place (pair q of row i at a_base + a_rows[i] + a_columns[q]) and B
// a packed sliver (32 words per pair).
void bf16_dot_a_rows_tile_avx512(int64_t kc, const uint16_t* a_base, const int64_t* a_rows, const int64_t* a_columns,
                                 const uint32_t* b, float* c, int64_t ldc, bool load_c);
#endif

}  // namespace aclnn_cpu
