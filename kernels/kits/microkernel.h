// Register-blocked GEMM micro-kernels, one per instruction set, each in its own translation unit
// compiled for that instruction set only (the kits, kernels/kits/kit_*.cpp), with internal linkage
// for everything it inlines: no code compiled for AVX-512 can be merged into a generic caller.
//
// A micro-kernel computes one MR x NR tile of C (row-major, leading dimension ldc) over a depth of
// kc <= kSumGroup (one group of the blocked sum, kernels/common/blocked_sum.h):
//   s_b[i][j] = fma(a[p][i], b[p][j], ... fma(a[p0][i], b[p0][j], 0))  for the block p0 <= p < p0 + kSumBlock,
//   C[i][j] = (load_c ? C[i][j] : 0) + ((s_0 + s_1) + ... + s_7)      (as many blocks as kc holds),
// from packed panels a (kc x MR: for each p, MR consecutive floats) and b (kc x NR likewise).
// The order of every entry's operations is fixed by kc alone, so the result does not depend on
// MR, NR, the cache blocking or the instruction set: the AVX-512, AVX2 and aarch64 kernels give
// identical bits. (The generic x86-64 kernel has no FMA instruction: it rounds the product and
// the sum separately.)
#pragma once

#include <cstdint>

#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

// Packs a whole sliver from operand rows that run along p: out[p*W + w] = rows[w*stride + p] for
// w < W (the kernel's mr or nr), p < depth.
using Interleave = void (*)(const float* rows, int64_t stride, int64_t depth, float* out);

// Every instruction set fills every slot, from one tile template (microkernel_tile.h).
struct MicroKernel {
  Isa isa;
  int mr, nr;
  // Whether the 16-bit loads and narrowing stores below are vector instructions: plans read FLOAT16
  // and BF16 operands in place and narrow in the kernel where they are (where they are not, the
  // slots still give the same bits, lane by lane, and plans convert whole rows once instead).
  bool vector_conversions;
  void (*run)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c);
  // The same for the first nr/2 columns only (a last sliver that narrow).
  void (*run_half)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c);
  // The packers of whole slivers of A (W = mr) and B (W = nr), in this instruction set's vectors.
  Interleave interleave_mr, interleave_nr;
  // run() with B read in place instead of from a packed sliver: b[p][j] = b_base[b_rows[p] + j]
  // (implicit GEMM: the rows of a padded source window), the same chains; where `bias` is set, row i
  // stored as C[i][j] + bias[i] (one fp32 addition to the finished sum: the forward operators' bias).
  void (*run_rows)(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                   bool load_c, const float* bias);
  // run_rows for the first nr/2 columns only (a last tile that narrow).
  void (*run_rows_half)(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                        bool load_c, const float* bias);
  // run() with A read in place instead of from a packed sliver: a[p][i] = a_base[a_rows[i] +
  // a_columns[p]] for i < mr (rows of a padded window or of a matrix, positions along them), the
  // same chains.
  void (*run_a_rows)(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns, const float* b,
                     float* c, int64_t ldc, bool load_c);
  // run_rows for a whole tile whose results go out narrowed: out[i * ldo + j] = C[i][j] rounded once to
  // nearest even as FLOAT16 bits (or, `bf16`, BF16), c only read (when load_c). The last depth block
  // of a product whose results are FLOAT16/BF16 (each result rounded once, as it is computed).
  void (*run_rows_narrow)(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, const float* c,
                          int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool bf16);
  // run_rows with B's rows 16-bit values read in place: b[p][j] = b_base[b_rows[p] + j] widened from
  // FLOAT16 (or, b_bf16, BF16) as it is loaded, the same chains as on those values widened first; the
  // results stored into c, or where `out` is set narrowed there as run_rows_narrow narrows them (c then
  // only read when load_c).
  void (*run_rows_16bit)(int64_t kc, const float* a, const uint16_t* b_base, const int64_t* b_rows, bool b_bf16,
                         float* c, int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool out_bf16);
  // run_a_rows with A's entries BF16 values read in place: a[p][i] = a_base[a_rows[i] + a_columns[p]]
  // widened as it is broadcast; the caller guarantees a_rows[i] + a_columns[p] >= 1 (an instruction
  // set may load the 16 bits below each entry with it).
  void (*run_a_rows_bf16)(int64_t kc, const uint16_t* a_base, const int64_t* a_rows, const int64_t* a_columns,
                          const float* b, float* c, int64_t ldc, bool load_c);
  // run() for a whole tile whose results go out narrowed, as run_rows_narrow narrows them (c only read,
  // when load_c).
  void (*run_narrow)(int64_t kc, const float* a, const float* b, const float* c, int64_t ldc, bool load_c,
                     uint16_t* out, int64_t ldo, bool bf16);
};

// The portable packers (kit_generic.cpp, baseline instructions) for the widths an instruction
// set has no transpose of its own for: out[p*W + w] = rows[w*stride + p], W = 6 or 8.
void interleave_6_portable(const float* rows, int64_t stride, int64_t depth, float* out);
void interleave_8_portable(const float* rows, int64_t stride, int64_t depth, float* out);

}  // namespace aclnn_cpu
