#include "kernels/matmul/sgemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/common/blocked_sum.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {
namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }
int64_t round_down_at_least(int64_t value, int64_t multiple) { return std::max(multiple, value / multiple * multiple); }

// Floats of the packed op(A) block; the op(B) block follows it, 64-byte aligned.
int64_t a_block_floats(const GemmBlocking& b) { return round_up(b.mc * b.kc, 16); }

// Strides of op(M): element (i, j) at data[i*rows + j*cols].
int64_t row_step(const MatrixRef& m) { return m.transposed ? 1 : m.ld; }
int64_t col_step(const MatrixRef& m) { return m.transposed ? m.ld : 1; }

// Packs `count` lines of a matrix in slivers of W: line w, entry p at data[w*w_step + p*p_step];
// sliver s (at out + s * sliver_stride) holds, for each p < depth, the W entries of lines
// s*W + (0..W-1) (zeros past the last line). `interleave` packs a whole sliver whose lines run
// along p (p_step 1).
template <int W>
void pack_slivers(const float* data, int64_t w_step, int64_t p_step, int64_t count, int64_t depth,
                  Interleave interleave, float* out, int64_t sliver_stride) {
  for (int64_t s = 0; s < count; s += W, out += sliver_stride) {
    const int64_t valid = std::min<int64_t>(W, count - s);
    const float* base = data + s * w_step;
    if (p_step == 1 && valid == W) {  // lines contiguous: read W of them side by side
      interleave(base, w_step, depth, out);
    } else if (w_step == 1 && valid == W) {  // W consecutive floats per p
      for (int64_t p = 0; p < depth; ++p) std::memcpy(out + p * W, base + p * p_step, W * sizeof(float));
    } else {
      for (int64_t p = 0; p < depth; ++p) {
        for (int w = 0; w < W; ++w) out[p * W + w] = w < valid ? base[w * w_step + p * p_step] : 0.0f;
      }
    }
  }
}

using SliverPacker = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, Interleave, float*, int64_t);

// pack_slivers for a micro-kernel's MR or NR (every kernel's widths are listed).
SliverPacker sliver_packer(int width) {
  switch (width) {
    case 6: return pack_slivers<6>;
    case 8: return pack_slivers<8>;
    case 16: return pack_slivers<16>;
    default: return pack_slivers<32>;
  }
}

// One mr x nr tile of C (rows x cols of it valid) from packed slivers; a sliver with at most nr/2
// valid columns by the half-width kernel.
void tile(const MicroKernel& kernel, int64_t depth, const float* a, const float* b, float* c, int64_t ldc, int64_t rows,
          int64_t cols, bool load_c) {
  const bool half = cols <= kernel.nr / 2;
  const auto run = half ? kernel.run_half : kernel.run;
  const int64_t width = half ? kernel.nr / 2 : kernel.nr;
  if (rows == kernel.mr && cols == width) {
    run(depth, a, b, c, ldc, load_c);
    return;
  }
  alignas(64) float edge[16 * 32];  // the largest mr x nr; the kernel writes mr x width
  const int nr = kernel.nr;
  if (load_c) {  // and reads it: C's valid part, zeros around it
    std::fill_n(edge, kernel.mr * nr, 0.0f);
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(edge + i * nr, c + i * ldc, static_cast<size_t>(cols) * sizeof(float));
  }
  run(depth, a, b, edge, nr, load_c);
  for (int64_t i = 0; i < rows; ++i) std::memcpy(c + i * ldc, edge + i * nr, static_cast<size_t>(cols) * sizeof(float));
}

}  // namespace

std::string isa_detail(const GemmBlocking& blocking) { return std::string("isa=") + isa_name(blocking.isa); }

int64_t GemmBlocking::scratch_floats(bool left_prepacked) const { return scratch_floats(left_prepacked, nc, kc); }

int64_t GemmBlocking::scratch_floats(bool left_prepacked, int64_t max_n, int64_t max_k) const {
  // (multiply_blocks: op(B)'s block is its slivers of NR columns, each over the block's depth)
  const int64_t nr = isa_kit(isa).gemm.nr;
  const int64_t b_block =
      std::min(kc, std::max<int64_t>(max_k, 1)) * round_up(std::min(nc, std::max<int64_t>(max_n, 1)), nr);
  return (left_prepacked ? 0 : a_block_floats(*this)) + round_up(b_block, 16);
}

GemmBlocking plan_gemm_blocking(int64_t max_m, int64_t max_n, int64_t /*max_k*/, const CpuFeatures& cpu) {
  const Isa isa = cpu.isa;
  const MicroKernel& kernel = isa_kit(isa).gemm;
  const CacheSizes& cache = cache_sizes();
  constexpr int64_t kFloat = sizeof(float);
  GemmBlocking b;
  b.isa = isa;
  b.prefetch_c = cpu.amd;
  // One group of the blocked sum (its depth fixes the order of the sums, so it is the same on every
  // CPU): a kc x nr sliver of B (32 KiB for AVX-512's 32 columns) stays in L1 while the mr x kc
  // slivers of A stream past it. (Not shortened for a shallow product: one deeper than its plan said
  // must still end its groups where any other plan would.)
  b.kc = kSumGroup;
  // The mc x kc block of A in half of L2; the kc x nc block of B in half of this core's L3 share.
  b.mc = std::min<int64_t>(round_down_at_least(cache.l2 / 2 / (b.kc * kFloat), kernel.mr), 4096);
  b.mc = std::min(b.mc, round_up(std::max<int64_t>(1, max_m), kernel.mr));
  b.nc = std::min<int64_t>(round_down_at_least(cache.l3_per_core / 2 / (b.kc * kFloat), kernel.nr), 4096);
  b.nc = std::min(b.nc, round_up(std::max<int64_t>(1, max_n), kernel.nr));
  return b;
}

namespace {

// Where each block of the product finds its operands. A left source returns the first row sliver
// of op(A)'s rows [ic, ic + rows) at depths [pc, pc + depth), the slivers `*stride` floats apart,
// packing them into `scratch` if it has to; a right source does the same for the column slivers of
// op(B)'s columns [jc, jc + cols).
struct LeftFromMatrix {
  static constexpr bool kNeedsScratch = true;  // its mc x kc block, at the start of the scratch
  MatrixRef a;
  const float* block(const MicroKernel& kernel, int64_t ic, int64_t rows, int64_t pc, int64_t depth, float* scratch,
                     int64_t* stride) const {
    *stride = kernel.mr * depth;
    sliver_packer(kernel.mr)(a.data + ic * row_step(a) + pc * col_step(a), row_step(a), col_step(a), rows, depth,
                             kernel.interleave_mr, scratch, *stride);
    return scratch;
  }
};

struct LeftPrepacked {
  static constexpr bool kNeedsScratch = false;
  PackedLeft a;
  const float* block(const MicroKernel& kernel, int64_t ic, int64_t, int64_t pc, int64_t, float*,
                     int64_t* stride) const {
    *stride = kernel.mr * a.depth;  // ic is a multiple of mc, so of MR
    return a.data + ic / kernel.mr * *stride + (a.offset + pc) * kernel.mr;
  }
};

struct RightFromMatrix {
  MatrixRef b;
  const float* block(const MicroKernel& kernel, int64_t jc, int64_t cols, int64_t pc, int64_t depth, float* out,
                     int64_t* stride) const {
    *stride = kernel.nr * depth;
    sliver_packer(kernel.nr)(b.data + pc * row_step(b) + jc * col_step(b), col_step(b), row_step(b), cols, depth,
                             kernel.interleave_nr, out, *stride);
    return out;
  }
};

struct RightWritten {
  PanelWriter b;
  const float* block(const MicroKernel& kernel, int64_t jc, int64_t cols, int64_t pc, int64_t depth, float* out,
                     int64_t* stride) const {
    *stride = kernel.nr * depth;
    b.write(b.context, pc, depth, jc, cols, kernel.nr, out);
    return out;
  }
};

struct RightPrepacked {
  PackedRight b;
  const float* block(const MicroKernel& kernel, int64_t jc, int64_t, int64_t pc, int64_t, float*,
                     int64_t* stride) const {
    *stride = kernel.nr * b.depth;  // jc is a multiple of nc, so of NR
    return b.data + jc / kernel.nr * *stride + (b.offset + pc) * kernel.nr;
  }
};

// A product with nothing to multiply (m, n or k zero): C = C, or 0 when not accumulating. Returns
// whether it was one.
bool empty_product(int64_t m, int64_t n, int64_t k, bool accumulate, float* c, int64_t ldc) {
  if (m != 0 && n != 0 && k != 0) return false;
  if (m != 0 && n != 0 && !accumulate) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
  }
  return true;
}

// The blocked product: B in kc x nc blocks, A in mc x kc blocks, micro-kernel tiles (the whole ones of
// the last depth block narrowed where `narrowed.out` is set: sgemm's contract).
template <typename Left, typename Right>
void multiply_blocks(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, const Left& a,
                     const Right& b, bool accumulate, float* c, int64_t ldc, const NarrowedRows& narrowed = {}) {
  if (empty_product(m, n, k, accumulate, c, ldc)) return;
  const MicroKernel& kernel = isa_kit(blocking.isa).gemm;
  const bool narrow = narrowed.out != nullptr;
  float* packed_a = scratch;
  float* packed_b = scratch + (Left::kNeedsScratch ? a_block_floats(blocking) : 0);
  for (int64_t jc = 0; jc < n; jc += blocking.nc) {
    const int64_t cols = std::min(blocking.nc, n - jc);
    for (int64_t pc = 0; pc < k; pc += blocking.kc) {
      const int64_t depth = std::min(blocking.kc, k - pc);
      const bool load_c = accumulate || pc > 0;  // later depth blocks add their groups to C
      int64_t b_stride = 0;
      const float* b_block = b.block(kernel, jc, cols, pc, depth, packed_b, &b_stride);
      for (int64_t ic = 0; ic < m; ic += blocking.mc) {
        const int64_t rows = std::min(blocking.mc, m - ic);
        int64_t a_stride = 0;
        const float* a_block = a.block(kernel, ic, rows, pc, depth, packed_a, &a_stride);
        for (int64_t jr = 0; jr < cols; jr += kernel.nr) {
          for (int64_t ir = 0; ir < rows; ir += kernel.mr) {
            const float* a_sliver = a_block + ir / kernel.mr * a_stride;
            const float* b_sliver = b_block + jr / kernel.nr * b_stride;
            float* c_tile = c + (ic + ir) * ldc + jc + jr;
            if (narrow && pc + depth == k && rows - ir >= kernel.mr && cols - jr >= kernel.nr) {
              kernel.run_narrow(depth, a_sliver, b_sliver, c_tile, ldc, load_c,
                                narrowed.out + (ic + ir) * narrowed.ld + jc + jr, narrowed.ld, narrowed.bf16);
            } else {
              tile(kernel, depth, a_sliver, b_sliver, c_tile, ldc, std::min<int64_t>(kernel.mr, rows - ir),
                   std::min<int64_t>(kernel.nr, cols - jr), load_c);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b,
           bool accumulate, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // (One row or one column too: through the micro-kernel's edge tiles, so that every entry is the
  // same blocked sum however the caller cuts C's rows and columns into products.)
  multiply_blocks(blocking, scratch, m, n, k, LeftFromMatrix{a}, RightFromMatrix{b}, accumulate, c, ldc);
}

void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a,
           const PanelWriter& b, bool accumulate, float* c, int64_t ldc) {
  multiply_blocks(blocking, scratch, m, n, k, LeftFromMatrix{a}, RightWritten{b}, accumulate, c, ldc);
}

void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
           MatrixRef b, bool accumulate, float* c, int64_t ldc, const NarrowedRows& narrowed) {
  multiply_blocks(blocking, scratch, m, n, k, LeftPrepacked{a}, RightFromMatrix{b}, accumulate, c, ldc, narrowed);
}

void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
           const PanelWriter& b, bool accumulate, float* c, int64_t ldc, const NarrowedRows& narrowed) {
  multiply_blocks(blocking, scratch, m, n, k, LeftPrepacked{a}, RightWritten{b}, accumulate, c, ldc, narrowed);
}

bool converts_in_registers(const GemmBlocking& blocking) {
  // (The AVX kits' conversions are F16C's instructions, and AVX-512's: their sets include F16C,
  // detected_isa().)
  return isa_kit(blocking.isa).gemm.vector_conversions;
}

void sgemm(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a, const PackedRight& b,
           bool accumulate, float* c, int64_t ldc) {
  multiply_blocks(blocking, nullptr, m, n, k, LeftPrepacked{a}, RightPrepacked{b}, accumulate, c, ldc);
}

void sgemm(const GemmBlocking& blocking, float* scratch, int64_t m, int64_t n, int64_t k, MatrixRef a,
           const PackedRight& b, bool accumulate, float* c, int64_t ldc) {
  multiply_blocks(blocking, scratch, m, n, k, LeftFromMatrix{a}, RightPrepacked{b}, accumulate, c, ldc);
}

void pack_right(const GemmBlocking& blocking, int64_t depth, int64_t n, MatrixRef b, float* out) {
  pack_right(blocking, depth, n, b, out, depth, 0);
}

void pack_right(const GemmBlocking& blocking, int64_t k, int64_t n, MatrixRef b, float* out, int64_t depth,
                int64_t offset) {
  const MicroKernel& kernel = isa_kit(blocking.isa).gemm;
  sliver_packer(kernel.nr)(b.data, col_step(b), row_step(b), n, k, kernel.interleave_nr, out + offset * kernel.nr,
                           kernel.nr * depth);
}

namespace {

// The loops of sgemm_a_rows and sgemm_a_rows_bf16: op(A)(i, p) = a_base[a_rows[i] + a_columns[p]], read
// in place by `in_place` (the micro-kernel's run_a_rows for this type of entry).
template <typename Entry>
void a_rows_loops(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const Entry* a_base,
                  const int64_t* a_rows, const int64_t* a_columns, const PackedRight& b, bool accumulate, float* c,
                  int64_t ldc,
                  void (*in_place)(int64_t, const Entry*, const int64_t*, const int64_t*, const float*, float*, int64_t,
                                   bool)) {
  if (empty_product(m, n, k, accumulate, c, ldc)) return;
  const MicroKernel& kernel = isa_kit(blocking.isa).gemm;
  const int mr = kernel.mr, nr = kernel.nr;
  const int64_t b_sliver = nr * b.depth;
  alignas(64) float edge[16 * 32];  // a partial tile of C (the largest mr x nr)
  int64_t rows[16];                 // a sliver's row offsets (a partial one repeats its last row)
  for (int64_t pc = 0; pc < k; pc += blocking.kc) {
    const int64_t depth = std::min(blocking.kc, k - pc);
    const bool load_c = accumulate || pc > 0;  // later depth blocks add their groups to C
    // B's sliver stays in L1 while A's slivers stream past it.
    for (int64_t jr = 0; jr < n; jr += nr) {
      const int64_t valid_cols = std::min<int64_t>(nr, n - jr);
      const float* b_tile = b.data + jr / nr * b_sliver + (b.offset + pc) * nr;
      for (int64_t ir = 0; ir < m; ir += mr) {
        const int64_t valid_rows = std::min<int64_t>(mr, m - ir);
        const bool full = valid_rows == mr && valid_cols == nr;
        float* c_tile = full ? c + ir * ldc + jr : edge;
        const int64_t ld = full ? ldc : nr;
        if (!full && load_c) {  // C's valid part, zeros around it
          std::fill_n(edge, mr * nr, 0.0f);
          for (int64_t i = 0; i < valid_rows; ++i)
            std::memcpy(edge + i * nr, c + (ir + i) * ldc + jr, static_cast<size_t>(valid_cols) * sizeof(float));
        }
        for (int i = 0; i < mr; ++i) rows[i] = a_rows[ir + std::min<int64_t>(i, valid_rows - 1)];
        in_place(depth, a_base, rows, a_columns + pc, b_tile, c_tile, ld, load_c);
        if (!full) {
          for (int64_t i = 0; i < valid_rows; ++i)
            std::memcpy(c + (ir + i) * ldc + jr, edge + i * nr, static_cast<size_t>(valid_cols) * sizeof(float));
        }
      }
    }
  }
}

}  // namespace

void sgemm_a_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const float* a_base,
                  const int64_t* a_rows, const int64_t* a_columns, const PackedRight& b, bool accumulate, float* c,
                  int64_t ldc) {
  // C (m x n) (+)= op(A) (m x k, rows read in place) * op(B) (k x n, a PackedRight)
  a_rows_loops(blocking, m, n, k, a_base, a_rows, a_columns, b, accumulate, c, ldc,
               isa_kit(blocking.isa).gemm.run_a_rows);
}

void sgemm_a_rows_bf16(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const uint16_t* a_base,
                       const int64_t* a_rows, const int64_t* a_columns, const PackedRight& b, bool accumulate, float* c,
                       int64_t ldc) {
  // C (m x n) (+)= op(A) (m x k, BF16 rows read in place, widened) * op(B) (k x n, a PackedRight)
  a_rows_loops(blocking, m, n, k, a_base, a_rows, a_columns, b, accumulate, c, ldc,
               isa_kit(blocking.isa).gemm.run_a_rows_bf16);
}

int64_t sliver_entries(int64_t count, int64_t width, int64_t depth) {
  const int64_t slivers = (std::max<int64_t>(1, count) - 1) / width + 1;
  int64_t entries = 0;
  if (__builtin_mul_overflow(slivers, width, &entries) || __builtin_mul_overflow(entries, depth, &entries)) {
    return INT64_MAX;
  }
  return entries;
}

int64_t packed_right_floats(const GemmBlocking& blocking, int64_t n, int64_t depth) {
  return sliver_entries(n, right_sliver_columns(blocking), depth);
}

void sgemm_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a, const float* b_base,
                const int64_t* b_rows, float* c, int64_t ldc) {
  sgemm_rows(blocking, m, n, k, a, b_base, b_rows, c, ldc, NarrowedRows{nullptr, 0, false});
}

namespace {

// The loops of the products whose op(B) rows are read in place (sgemm_rows, sgemm_rows_16bit): op(A)'s
// mc-row blocks (packed), each over the kc-deep blocks of the depth, each over the nr-column slivers of
// C, each over the mr-row slivers of the block. tile(depth, a_sliver, pc, jr, i, rows, load_c, last)
// computes C's tile of rows [i, i + rows) (within the block: rows = its remaining rows, mr or more
// for all but the last), columns [jr, jr + nr), over depths [pc, pc + depth): load_c where an earlier
// depth block's group is in C, `last` in the last depth block.
template <typename Tile>
void for_each_rows_tile(const GemmBlocking& blocking, const MicroKernel& kernel, int64_t m, int64_t n, int64_t k,
                        const PackedLeft& a, Tile tile) {
  const LeftPrepacked left{a};
  for (int64_t ic = 0; ic < m; ic += blocking.mc) {
    const int64_t rows = std::min(blocking.mc, m - ic);
    for (int64_t pc = 0; pc < k; pc += blocking.kc) {
      const int64_t depth = std::min(blocking.kc, k - pc);
      const bool load_c = pc > 0, last = pc + depth == k;  // later depth blocks add their groups to C
      int64_t a_stride = 0;
      const float* a_block = left.block(kernel, ic, rows, pc, depth, nullptr, &a_stride);
      for (int64_t jr = 0; jr < n; jr += kernel.nr) {
        for (int64_t ir = 0; ir < rows; ir += kernel.mr)
          tile(depth, a_block + ir / kernel.mr * a_stride, pc, jr, ic + ir, rows - ir, load_c, last);
      }
    }
  }
}

// sgemm_rows, narrowed where `narrowed.out` is set, plus row_bias where set (sgemm_rows_with_bias).
void rows_product(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
                  const float* b_base, const int64_t* b_rows, float* c, int64_t ldc, const NarrowedRows& narrowed,
                  const float* row_bias) {
  const MicroKernel& kernel = isa_kit(blocking.isa).gemm;
  // (narrowed: whole tiles, and a last depth block to narrow in)
  const bool narrow = narrowed.out != nullptr && m % kernel.mr == 0 && n % kernel.nr == 0 && k > 0;
  // The first depth block stores C's tiles without reading them: where the blocking says so (AMD's
  // cores) the next tile's lines are fetched (into L1) while one is computed, so that its stores do not
  // wait for them (a 1x1 layer's gradInput writes its result in place, tile by tile).
  const bool prefetch_c = blocking.prefetch_c;
  const int64_t block_rows = std::min(blocking.mc, m);  // (of every block but the last)
  // C (m x n) = op(A) (m x k, packed) * op(B) (k x n, float rows read in place)
  for_each_rows_tile(
      blocking, kernel, m, n, k, a,
      [&](int64_t depth, const float* a_sliver, int64_t pc, int64_t jr, int64_t i, int64_t rows_left, bool load_c,
          bool last) {
        const float* b_tile = b_base + jr;
        float* c_tile = c + i * ldc + jr;
        const float* bias = row_bias != nullptr && last ? row_bias + i : nullptr;  // (added once, to the finished sums)
        if (prefetch_c && !load_c && !narrow) {  // the next tile: the next rows, or the next columns' first
          const int64_t ic = i / block_rows * block_rows;
          const float* next = rows_left > kernel.mr ? c_tile + kernel.mr * ldc
                              : jr + kernel.nr < n  ? c + ic * ldc + jr + kernel.nr
                                                    : nullptr;
          if (next != nullptr) prefetch_rows<3>(next, kernel.mr, kernel.nr, ldc);
        }
        if (narrow && last) {
          kernel.run_rows_narrow(depth, a_sliver, b_tile, b_rows + pc, c_tile, ldc, load_c,
                                 narrowed.out + i * narrowed.ld + jr, narrowed.ld, narrowed.bf16);
        } else if (n - jr <= kernel.nr / 2) {
          kernel.run_rows_half(depth, a_sliver, b_tile, b_rows + pc, c_tile, ldc, load_c, bias);
        } else {
          kernel.run_rows(depth, a_sliver, b_tile, b_rows + pc, c_tile, ldc, load_c, bias);
        }
      });
  if (k == 0) {
    for (int64_t i = 0; i < round_up(m, kernel.mr); ++i)
      std::memset(c + i * ldc, 0, static_cast<size_t>(round_up(n, kernel.nr)) * sizeof(float));
  }
}

}  // namespace

void sgemm_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a, const float* b_base,
                const int64_t* b_rows, float* c, int64_t ldc, const NarrowedRows& narrowed) {
  rows_product(blocking, m, n, k, a, b_base, b_rows, c, ldc, narrowed, nullptr);
}

void sgemm_rows_with_bias(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
                          const float* b_base, const int64_t* b_rows, float* c, int64_t ldc, const float* row_bias) {
  // C (m x n) = op(A) (m x k, packed) * op(B) (k x n, float rows read in place) + row_bias (m, per row)
  rows_product(blocking, m, n, k, a, b_base, b_rows, c, ldc, NarrowedRows{nullptr, 0, false}, row_bias);
}

int64_t sgemm_rows_16bit(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t k, const PackedLeft& a,
                         const uint16_t* b_base, const int64_t* b_rows, bool b_bf16, float* c, int64_t ldc,
                         const NarrowedRows& narrowed) {
  const MicroKernel& kernel = isa_kit(blocking.isa).gemm;
  // C (round_up(m, MR) x n) += op(A) (m x k, packed) * op(B) (k x n, 16-bit rows widened in the kernel)
  for_each_rows_tile(blocking, kernel, m, n, k, a,
                     [&](int64_t depth, const float* a_sliver, int64_t pc, int64_t jr, int64_t i, int64_t rows_left,
                         bool load_c, bool last) {
                       // (narrowed in the last depth block, whole slivers of rows: a last partial one stays in C)
                       uint16_t* out = narrowed.out != nullptr && last && rows_left >= kernel.mr
                                           ? narrowed.out + i * narrowed.ld + jr
                                           : nullptr;
                       kernel.run_rows_16bit(depth, a_sliver, b_base + jr, b_rows + pc, b_bf16, c + i * ldc + jr, ldc,
                                             load_c, out, narrowed.ld, narrowed.bf16);
                     });
  if (k == 0) {
    for (int64_t i = 0; i < round_up(m, kernel.mr); ++i) std::memset(c + i * ldc, 0, n * sizeof(float));
    return 0;
  }
  return narrowed.out != nullptr ? m / kernel.mr * kernel.mr : 0;
}

int right_sliver_columns(const GemmBlocking& blocking) { return isa_kit(blocking.isa).gemm.nr; }

int column_granularity(const GemmBlocking& blocking) { return isa_kit(blocking.isa).gemm.nr / 2; }

int left_sliver_rows(const GemmBlocking& blocking) { return isa_kit(blocking.isa).gemm.mr; }

int64_t packed_left_floats(const GemmBlocking& blocking, int64_t m, int64_t depth) {
  return sliver_entries(m, left_sliver_rows(blocking), depth);
}

void pack_left(const GemmBlocking& blocking, int64_t m, int64_t k, MatrixRef a, float* out, int64_t depth,
               int64_t offset) {
  const MicroKernel& kernel = isa_kit(blocking.isa).gemm;
  sliver_packer(kernel.mr)(a.data, row_step(a), col_step(a), m, k, kernel.interleave_mr, out + offset * kernel.mr,
                           kernel.mr * depth);
}

}  // namespace aclnn_cpu
