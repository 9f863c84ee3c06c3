// BF16 operands as pairs: 32-bit words holding two BF16 values, the even entry in the low half, as
// the AMX tiles' order multiplies them (kernels/amx/amx.h). The staging and packing the pair products
// of the GEMM entries and `channels_last` share; the families reach the tiles' products (amx.h) only
// through this header.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/amx/amx.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

// The AMX tiles (kernels/amx/amx.h) whose order a product of operands read from views `a` and `b`
// takes: the plan's pair-product engine (CpuFeatures::pairs) where both are BF16 and used as they are
// (not rounded to FLOAT16 by cubeMathType 2), else kNone.
AmxTiles amx_pair_products(AmxTiles engine, const View5& a, const View5& b, MathMode math);

// The products of a plan's pair-product engine (AmxTiles), in the AMX tiles' order (kernels/amx/amx.h):
// the FMA tiles (kFma*) from the kit of their instruction set (IsaKit::fma_pairs), the others from amx/.
//
// C (m x n) = A (m x 2 pairs) * B (2 pairs x n), A packed (pack_amx_left for `tiles`), B's pair row q
// read in place, column j's pair at b_base[b_rows[q] + j], staged 32 columns at a time into `stage`
// (amx_stage_words(pairs) words) unless a chunk's 16 rows are evenly spaced. Whole blocks: C holds
// round_up(m, 32) rows and round_up(n, 32) columns, and b_base is readable that far.
void amx_pair_rows(AmxTiles tiles, int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base,
                   const int64_t* b_rows, uint32_t* stage, float* c, int64_t ldc);
// C (m x n) (+ C's values, `accumulate`) = A (m x 2 pairs) * B (2 pairs x n), A's pair q of row i the
// two BF16 entries at a_base[a_rows[i] + a_columns[q]] and + 1 (read in place, staged by blocks of 32
// rows), B packed in slivers of 32 columns (PackedPairsRight: pair q of column j at b_data[(j / 32) *
// 32 * b_pairs + q * 32 + j % 32], zero past the last column), pairs [b_offset, b_offset + pairs) of it.
// C is exactly m x n (a partial block is computed aside); `stage` holds amx_a_stage_words(pairs) words.
void amx_pair_a_rows(AmxTiles tiles, int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,
                     const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset,
                     bool accumulate, float* c, int64_t ldc, uint32_t* stage);

// The BF16 nearest to a float (ties to even, NaNs quiet; the float copy of a BF16 input converts
// back exactly).
inline uint16_t bf16_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(bits >> 16 | 0x40);
  return static_cast<uint16_t>((bits + 0x7FFFu + (bits >> 16 & 1u)) >> 16);
}
inline uint32_t bf16_pair(uint16_t even, uint16_t odd) { return uint32_t{even} | uint32_t{odd} << 16; }

// out[i] = the pair of channels c (low half) and c + 1 (high half; zero unless `odd`) at position
// first + i of plane n (positions (d, h, w) row-major) of a BF16 view, for i < count; `scratch`
// holds 2 * count floats (for views whose planes are not contiguous, read with `conversions`, the plan's
// kit's).
void stage_channel_pairs(const View5& view, int64_t n, int64_t c, bool odd, int64_t first, int64_t count,
                         float* scratch, uint32_t* out, const Conversions16* conversions);

// A right operand in slivers of 32 columns (kAmxBlock): pair q of column j at data[(j / 32) * 32 *
// pairs + q * 32 + j % 32] (zero past the last column); a product (amx_pair_a_rows) reads pairs
// [offset, offset + its depth).
struct PackedPairsRight {
  const uint32_t* data;
  int64_t pairs, offset;
};
int64_t packed_pairs_right_words(int64_t n, int64_t pairs);
// Writes pairs of depth entries of `count` columns, column j's entries (2q, 2q+1) at
// rows[j * row_stride + 2q] and + 1 (floats holding BF16 values, which convert exactly), into
// pairs [offset, offset + pairs) of columns [j0, j0 + count) of a packed right operand of `depth` pairs.
void pack_pairs_right(const float* rows, int64_t row_stride, int64_t count, int64_t pairs, uint32_t* out, int64_t depth,
                      int64_t j0, int64_t offset);

}  // namespace aclnn_cpu
