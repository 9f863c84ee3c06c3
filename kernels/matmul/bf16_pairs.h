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
// holds 2 * count floats (for views whose planes are not contiguous).
void stage_channel_pairs(const View5& view, int64_t n, int64_t c, bool odd, int64_t first, int64_t count,
                         float* scratch, uint32_t* out);

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
