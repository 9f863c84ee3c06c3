// The one GEMM the GEMM implementations use: single-precision, row-major, single-threaded (the
// implementations parallelise over independent tasks, which keeps results independent of the
// thread count). BLIS-style: op(B) is packed in kc x nc blocks and op(A) in mc x kc blocks (both
// into scratch from the plan's workspace) around a register-blocked micro-kernel per instruction
// set (kernels/kits/microkernel.h).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/pack.h"
#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

// A row-major matrix operand: element (i, j) of op(M) is data[i*ld + j], or data[j*ld + i]
// when `transposed`.
struct MatrixRef {
  const float* data;
  int64_t ld;
  bool transposed;
};

// Instruction set and cache blocking of a family of GEMMs, fixed at phase 1 from the CPU's cache
// sizes and the largest (m, n, k) a step will multiply. Results do not depend on mc and nc, only
// the speed does; kc is where the sums' groups end (microkernel.h), kSumGroup in every plan.
struct GemmBlocking {
  Isa isa = Isa::kGeneric;
  // Whether a product whose first depth block stores C's tiles without reading them fetches the next
  // tile's lines while one is computed (rows_product): on AMD's cores (CpuFeatures::amd), so that its
  // stores do not wait for them; not on Intel's, which stall on bursts of prefetches.
  bool prefetch_c = false;
  int64_t kc = 1;  // depth of a packed block: kSumGroup (tests set a smaller multiple of 8)
  int64_t mc = 1;  // rows of op(A) per packed block (a multiple of the micro-kernel's MR)
  int64_t nc = 1;  // columns of op(B) per packed block (a multiple of its NR)
  // Floats of packing scratch one sgemm call needs (one per thread running GEMMs); a product whose
  // op(A) is a PackedLeft packs only op(B).
  int64_t scratch_floats(bool left_prepacked = false) const;
  // The same for products whose n and k are at most max_n and max_k (op(B)'s block is then smaller).
  int64_t scratch_floats(bool left_prepacked, int64_t max_n, int64_t max_k) const;
};

// "isa=avx512": the verbose mode's note for a step that multiplies with `blocking`.
std::string isa_detail(const GemmBlocking& blocking);

// Blocking for the plan's CPU (its instruction set's micro-kernel, its vendor's prefetching).
GemmBlocking plan_gemm_blocking(int64_t max_m, int64_t max_n, int64_t max_k, const CpuFeatures& cpu);

// C (m x n, row-major, leading dim ldc) = op(A) (m x k) * op(B) (k x n) + (accumulate ? C : 0).
// `scratch` holds blocking.scratch_floats() floats, 64-byte aligned; any m, n, k works, the
// blocking's maxima are only what it was tuned for. A product with one row or one column of C
// uses fixed-order dot products instead (no packing).
void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b,
           bool accumulate, float* c, int64_t ldc);

// op(A) packed once for many products (pack_left): its rows in slivers of the micro-kernel's MR,
// each over the whole `depth`: entry (i, p) at data[(i / MR) * MR * depth + p * MR + i % MR]. A
// product reads depths [offset, offset + k) of it.
struct PackedLeft {
  const float* data;
  int64_t depth;
  int64_t offset;
};

// ceil(count / width) slivers of width x depth entries (a count below 1 as 1), or INT64_MAX where
// that does not fit in 64 bits (an empty tensor's other sizes may be anything): then no budget
// admits it, and a booking of it reports the workspace too large.
int64_t sliver_entries(int64_t count, int64_t width, int64_t depth);
// Floats of a PackedLeft of m rows and `depth` (rows rounded up to MR; the padding rows are zero).
int64_t packed_left_floats(const GemmBlocking& blocking, int64_t m, int64_t depth);
// The micro-kernel's MR: rows per sliver of a PackedLeft.
int left_sliver_rows(const GemmBlocking& blocking);
// Writes op(A) (m x k) into depths [offset, offset + k) of a PackedLeft at `out` of `depth`.
void pack_left(const GemmBlocking& blocking, int64_t m, int64_t k, MatrixRef a, float* out, int64_t depth,
               int64_t offset);

// op(B) that the GEMM never reads as a matrix: `write` puts its entries straight into the packed
// column slivers (implicit GEMM, e.g. im2col fused into packing). write(context, p0, depth, j0, cols,
// width, out) must set, for p < depth and j < cols rounded up to `width`,
//   out[(j / width) * width * depth + p * width + j % width] = op(B)(p0 + p, j0 + j)  (0 for j >= cols).
struct PanelWriter {
  void (*write)(const void* context, int64_t p0, int64_t depth, int64_t j0, int64_t cols, int width, float* out);
  const void* context;
};

// The same product with op(A) a matrix (packed per block) and op(B) written by a PanelWriter.
void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a,
           const PanelWriter& b, bool accumulate, float* c, int64_t ldc);

// The same product from a packed op(A), with op(B) a matrix or written by a PanelWriter. Always
// through the micro-kernel, so every entry is the blocked sum of its products in depth order.
// With `narrowed.out` set (where narrows_products), the whole MR x NR tiles of C, rows below
// m - m % MR and columns below n - n % NR, go there narrowed in the last depth block (for k > 0); C
// holds the rest of the results, and the earlier depth blocks' sums.
void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
           MatrixRef b, bool accumulate, float* c, int64_t ldc, const NarrowedRows& narrowed = {});
void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
           const PanelWriter& b, bool accumulate, float* c, int64_t ldc, const NarrowedRows& narrowed = {});
// Whether the micro-kernel of `blocking` reads FLOAT16/BF16 operands and narrows results in its vector
// registers (microkernel.h: vector_conversions; the AVX kits run only where the CPU has F16C, detected_isa). Every
// micro-kernel does both, with the same bits; where this is false it goes lane by lane, and plans
// convert whole rows once instead of taking sgemm's NarrowedRows, sgemm_rows with NarrowedRows,
// sgemm_rows_16bit or sgemm_a_rows_bf16.
bool converts_in_registers(const GemmBlocking& blocking);

// op(B) packed once for many products: its columns in slivers of the micro-kernel's NR, each over
// the whole `depth` (PanelWriter's layout with p0 = 0: entry (p, j) at data[(j / NR) * NR * depth +
// p * NR + j % NR], zero past the last column). Write it with pack_right, or a PanelWriter of width
// right_sliver_columns(); it takes packed_right_floats() floats. A product reads depths [offset,
// offset + k) of it.
struct PackedRight {
  const float* data;
  int64_t depth;
  int64_t offset = 0;
};
int64_t packed_right_floats(const GemmBlocking& blocking, int64_t n, int64_t depth);
// Writes op(B) (depth x n) as a PackedRight at `out`.
void pack_right(const GemmBlocking& blocking, int64_t depth, int64_t n, MatrixRef b, float* out);

// Writes op(B) (k x n) into depths [offset, offset + k) of a PackedRight at `out` of `depth`.
void pack_right(const GemmBlocking& blocking, int64_t k, int64_t n, MatrixRef b, float* out, int64_t depth,
                int64_t offset);

// C (m x n) = op(A) * op(B) + (accumulate ? C : 0) with op(A) read in place, never packed:
// op(A)(i, p) = a_base[a_rows[i] + a_columns[p]] (the rows of a padded window or a matrix, and the
// positions along them that the product reads), op(B) a PackedRight. The same chains as the other
// sgemm, so the same bits as packing op(A) from a matrix.
void sgemm_a_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const float* a_base,
                  const int64_t* a_rows, const int64_t* a_columns, const PackedRight& b, bool accumulate, float* c,
                  int64_t ldc);
// The same with op(A)'s entries BF16 values, widened as they are read: the same bits as sgemm_a_rows on
// the widened values. Every a_rows[i] + a_columns[p] is at least 1: the micro-kernel may load the 16
// bits below each entry with it (in the tensor: its previous element).
void sgemm_a_rows_bf16(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const uint16_t* a_base,
                       const int64_t* a_rows, const int64_t* a_columns, const PackedRight& b, bool accumulate, float* c,
                       int64_t ldc);

// The same product from both operands packed once (no scratch: nothing is packed per call), or with
// op(A) a matrix (`scratch` then holds blocking.scratch_floats() floats).
void sgemm(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a, const PackedRight& b,
           bool accumulate, float* c, int64_t ldc);
void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a,
           const PackedRight& b, bool accumulate, float* c, int64_t ldc);

// Implicit GEMM from a padded source window: op(B)(p, j) = b_base[b_rows[p] + j], read in place
// (never packed) by the micro-kernel. C (m x n) = op(A) * op(B), in whole micro-kernel tiles: C
// must hold round_up(m, MR) rows and round_up(n, NR) columns, and b_base[b_rows[p] + j] must be
// readable for j < round_up(n, NR) (the extra rows and columns mean nothing: computed or left as they
// were; a last tile of at most NR/2 columns runs the half-width kernel).
// The same chains as the other sgemm, so the same bits as packing op(B) from a matrix.
void sgemm_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a, const float* b_base,
                const int64_t* b_rows, float* c, int64_t ldc);
// The same with the results narrowed into `narrowed` (C only holds the earlier depth blocks' sums, where
// k is deeper than one): for m and n in whole micro-kernel tiles.
void sgemm_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a, const float* b_base,
                const int64_t* b_rows, float* c, int64_t ldc, const NarrowedRows& narrowed);
// The same with row i's results fl32(sum) + row_bias[i] (the forward operators' bias, one fp32 addition
// to each finished sum, by the micro-kernel as it stores it): k > 0, row_bias holding round_up(m, MR) values.
void sgemm_rows_with_bias(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
                          const float* b_base, const int64_t* b_rows, float* c, int64_t ldc, const float* row_bias);
// sgemm_rows with op(B)'s rows FLOAT16 (or, b_bf16, BF16) values read in place and widened by the
// micro-kernel as it loads them: op(B)(p, j) = b_base[b_rows[p] + j], never staged nor packed, the same
// chains as on the widened values. As in sgemm_rows, C holds round_up(m, MR) rows and round_up(n, NR) columns, and B's
// rows are read that wide. With `narrowed` (out set; n then a multiple of NR), the rows of whole slivers of MR go there
// as they are computed (C then only holds the earlier depth blocks' sums). Returns how many leading rows went narrowed
// (0 without `narrowed`, or for k 0): the others are in C.
int64_t sgemm_rows_16bit(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
                         const uint16_t* b_base, const int64_t* b_rows, bool b_bf16, float* c, int64_t ldc,
                         const NarrowedRows& narrowed);
// The micro-kernel's NR: the column multiple sgemm_rows computes in.
int right_sliver_columns(const GemmBlocking& blocking);
// The columns sgemm_rows computes come in steps of this many: NR/2 (a last tile that narrow runs the
// half-width kernel).
int column_granularity(const GemmBlocking& blocking);

}  // namespace aclnn_cpu
