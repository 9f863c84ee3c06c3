// Register-blocked GEMM micro-kernels, one per instruction set, each in its own translation unit
// compiled for that instruction set only (kernels/gemm/microkernel_*.cpp), with internal linkage
// for everything it inlines: no code compiled for AVX-512 can be merged into a generic caller.
//
// A micro-kernel computes one MR x NR tile of C (row-major, leading dimension ldc):
//   C[i][j] = fma(a[p][i], b[p][j], ... fma(a[0][i], b[0][j], load_c ? C[i][j] : 0))  for p < kc,
// from packed panels a (kc x MR: for each p, MR consecutive floats) and b (kc x NR likewise).
// Every entry is one chain of fused multiply-adds in p order, so the result does not depend on
// MR, NR, the cache blocking or the instruction set: the AVX-512, AVX2 and aarch64 kernels give
// identical bits. (The generic x86-64 kernel has no FMA instruction: it rounds the product and
// the sum separately.)
#pragma once

#include <cstdint>

#include "kernels/common/cpu_isa.h"

namespace aclnn_cpu {

// Each instruction set's file assigns the slots it has by name (microkernel_*.cpp); a null slot
// means that set has no such kernel and sgemm packs the operand instead.
struct MicroKernel {
  Isa isa;
  int mr, nr;
  void (*run)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c);
  // The same for the first nr/2 columns only (a last sliver that narrow), or nullptr.
  void (*run_half)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) = nullptr;
  // Packing of a whole sliver from operand rows that run along p (out[p*W + w] = rows[w*stride + p],
  // W = mr or nr) in this instruction set's vectors, or nullptr for the portable packer.
  void (*interleave_mr)(const float* rows, int64_t stride, int64_t depth, float* out) = nullptr;
  void (*interleave_nr)(const float* rows, int64_t stride, int64_t depth, float* out) = nullptr;
  // run() with B read in place instead of from a packed sliver: b[p][j] = b_base[b_rows[p] + j]
  // (implicit GEMM: the rows of a padded source window), the same chains; or nullptr (the caller
  // then packs the sliver and calls run()).
  void (*run_rows)(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                   bool load_c) = nullptr;
  // run_rows for the first nr/2 columns only (a last tile that narrow), or nullptr.
  void (*run_rows_half)(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                        bool load_c) = nullptr;
  // run() with A read in place instead of from a packed sliver: a[p][i] = a_base[a_rows[i] +
  // a_columns[p]] for i < mr (rows of a padded window or of a matrix, positions along them), the
  // same chains; or nullptr (the caller then packs the sliver and calls run()).
  void (*run_a_rows)(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns, const float* b,
                     float* c, int64_t ldc, bool load_c) = nullptr;
  // run_rows for a whole tile whose results go out narrowed: out[i * ldo + j] = C[i][j] rounded once to
  // nearest even as FLOAT16 bits (or, `bf16`, BF16), c only read (when load_c); or nullptr. The last depth
  // block of a product whose results are FLOAT16/BF16 (each result rounded once, as it is computed).
  void (*run_rows_narrow)(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, const float* c,
                          int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool bf16) = nullptr;
  // run_rows with B's rows 16-bit values read in place: b[p][j] = b_base[b_rows[p] + j] widened from
  // FLOAT16 (or, b_bf16, BF16) as it is loaded, the same chains as on those values widened first; the
  // results stored into c, or where `out` is set narrowed there as run_rows_narrow narrows them (c then
  // only read when load_c); or nullptr. Needs F16C besides the kernel's own instruction set.
  void (*run_rows_16bit)(int64_t kc, const float* a, const uint16_t* b_base, const int64_t* b_rows, bool b_bf16,
                         float* c, int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool out_bf16) = nullptr;
  // run_a_rows with A's entries BF16 values read in place: a[p][i] = a_base[a_rows[i] + a_columns[p]]
  // widened as it is broadcast (the 32 bits that end with it loaded, its neighbour below cleared: no
  // shuffle), so the caller guarantees a_rows[i] + a_columns[p] >= 1; or nullptr.
  void (*run_a_rows_bf16)(int64_t kc, const uint16_t* a_base, const int64_t* a_rows, const int64_t* a_columns,
                          const float* b, float* c, int64_t ldc, bool load_c) = nullptr;
  // run() for a whole tile whose results go out narrowed, as run_rows_narrow narrows them (c only read,
  // when load_c); or nullptr. Needs F16C besides the kernel's own instruction set.
  void (*run_narrow)(int64_t kc, const float* a, const float* b, const float* c, int64_t ldc, bool load_c,
                     uint16_t* out, int64_t ldo, bool bf16) = nullptr;
};

extern const MicroKernel kMicroKernelGeneric;  // microkernel_generic.cpp
#ifdef ACLNN_HAVE_X86_KERNELS
extern const MicroKernel kMicroKernelAvx2;    // microkernel_avx2.cpp (-mavx2 -mfma)
extern const MicroKernel kMicroKernelAvx512;  // microkernel_avx512.cpp (-mavx512f -mfma)
#endif

// The micro-kernel of `isa` (which the CPU must run).
const MicroKernel& micro_kernel(Isa isa);

}  // namespace aclnn_cpu
