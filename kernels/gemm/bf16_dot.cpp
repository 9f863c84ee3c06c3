#include "kernels/gemm/bf16_dot.h"

#include <algorithm>

#include "acl/acl_base.h"
#include "kernels/common/cpu_isa.h"
#include "kernels/common/pack.h"

namespace aclnn_cpu {

bool bf16_pair_products(const View5& a, const View5& b, MathMode math) {
  return bf16_dot_available() && a.dtype == ACL_BF16 && b.dtype == ACL_BF16 && math == MathMode::kFull;
}

AmxTiles amx_pair_products(const View5& a, const View5& b, MathMode math) {
  if (a.dtype != ACL_BF16 || b.dtype != ACL_BF16 || math != MathMode::kFull) return AmxTiles::kNone;
  return amx_tiles();
}

void stage_channel_pairs(const View5& view, int64_t n, int64_t c, bool odd, int64_t first, int64_t count,
                         float* scratch, uint32_t* out) {
  if (planes_contiguous(view) && odd) {  // two runs of BF16 values, interleaved
    const uint16_t* even_run = static_cast<const uint16_t*>(view.data) + view.element(n, c, 0, 0, first);
    const uint16_t* odd_run = even_run + view.stride[1];
    for (int64_t i = 0; i < count; ++i) out[i] = bf16_pair(even_run[i], odd_run[i]);
    return;
  }
  read_plane_floats(view, MathMode::kFull, n, c, first, count, scratch);
  if (odd) read_plane_floats(view, MathMode::kFull, n, c + 1, first, count, scratch + count);
  for (int64_t i = 0; i < count; ++i)
    out[i] = bf16_pair(bf16_bits(scratch[i]), odd ? bf16_bits(scratch[count + i]) : 0);
}

int64_t packed_pairs_words(int64_t m, int64_t pairs) { return sliver_entries(m, kBf16DotRows, pairs); }

int64_t packed_pairs_right_words(int64_t n, int64_t pairs) { return sliver_entries(n, kBf16DotColumns, pairs); }

void pack_pairs_right(const float* rows, int64_t row_stride, int64_t count, int64_t pairs, uint32_t* out, int64_t depth,
                      int64_t j0, int64_t offset) {
  constexpr int nr = kBf16DotColumns;
  for (int64_t j = j0; j < j0 + count; ++j) {
    const float* row = rows + (j - j0) * row_stride;
    uint32_t* to = out + j / nr * nr * depth + offset * nr + j % nr;
    for (int64_t q = 0; q < pairs; ++q) to[q * nr] = bf16_pair(bf16_bits(row[2 * q]), bf16_bits(row[2 * q + 1]));
  }
}

void bf16_dot_a_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base,
                     const int64_t* a_rows, const int64_t* a_columns, const PackedPairsRight& b, bool accumulate,
                     float* c, int64_t ldc) {
#ifdef ACLNN_HAVE_X86_KERNELS
  constexpr int mr = kBf16DotRows, nr = kBf16DotColumns;
  if (pairs == 0 && !accumulate) {
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
  }
  const int64_t kc = std::max<int64_t>(1, blocking.kc / 2);
  alignas(64) float edge[mr * nr];  // a partial tile of C
  int64_t rows[mr];                 // a sliver's row offsets (a partial one repeats its last row)
  for (int64_t pc = 0; pc < pairs; pc += kc) {
    const int64_t depth = std::min(kc, pairs - pc);
    const bool load_c = accumulate || pc > 0;  // later depth blocks continue each entry's chain
    for (int64_t jr = 0; jr < n; jr += nr) {   // B's sliver stays in L1 while A's rows pass
      const int64_t valid_cols = std::min<int64_t>(nr, n - jr);
      const uint32_t* b_tile = b.data + jr / nr * nr * b.pairs + (b.offset + pc) * nr;
      for (int64_t ir = 0; ir < m; ir += mr) {
        const int64_t valid_rows = std::min<int64_t>(mr, m - ir);
        const bool full = valid_rows == mr && valid_cols == nr;
        float* c_tile = full ? c + ir * ldc + jr : edge;
        if (!full && load_c) {  // C's valid part, zeros around it
          std::fill_n(edge, mr * nr, 0.0f);
          for (int64_t i = 0; i < valid_rows; ++i) std::copy_n(c + (ir + i) * ldc + jr, valid_cols, edge + i * nr);
        }
        for (int i = 0; i < mr; ++i) rows[i] = a_rows[ir + std::min<int64_t>(i, valid_rows - 1)];
        bf16_dot_a_rows_tile_avx512(depth, a_base, rows, a_columns + pc, b_tile, c_tile, full ? ldc : nr, load_c);
        if (!full) {
          for (int64_t i = 0; i < valid_rows; ++i) std::copy_n(edge + i * nr, valid_cols, c + (ir + i) * ldc + jr);
        }
      }
    }
  }
#else
  (void)blocking, (void)m, (void)n, (void)pairs, (void)a_base, (void)a_rows, (void)a_columns, (void)b;
  (void)accumulate, (void)c, (void)ldc;
  std::abort();  // never planned: bf16_dot_available() is false without the x86 kernels
#endif
}

void bf16_dot_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t pairs, const PackedPairs& a,
                   const uint32_t* b_base, const int64_t* b_rows, float* c, int64_t ldc) {
#ifdef ACLNN_HAVE_X86_KERNELS
  constexpr int mr = kBf16DotRows, nr = kBf16DotColumns;
  const int64_t kc = std::max<int64_t>(1, blocking.kc / 2), mc = std::max<int64_t>(mr, blocking.mc / mr * mr);
  for (int64_t ic = 0; ic < m; ic += mc) {
    const int64_t rows = std::min(mc, m - ic);
    for (int64_t pc = 0; pc < pairs; pc += kc) {
      const int64_t depth = std::min(kc, pairs - pc);
      for (int64_t jr = 0; jr < n; jr += nr) {  // A's block stays in L2 while B's columns pass
        for (int64_t ir = 0; ir < rows; ir += mr) {
          const uint32_t* sliver = a.data + (ic + ir) / mr * mr * a.pairs + pc * mr;
          bf16_dot_rows_tile_avx512(depth, sliver, b_base + jr, b_rows + pc, c + (ic + ir) * ldc + jr, ldc, pc > 0,
                                    n - jr <= nr / 2);
        }
      }
    }
  }
  if (pairs == 0) {
    for (int64_t i = 0; i < (m + mr - 1) / mr * mr; ++i)
      std::memset(c + i * ldc, 0, static_cast<size_t>((n + nr - 1) / nr * nr) * sizeof(float));
  }
#else
  (void)blocking, (void)m, (void)n, (void)pairs, (void)a, (void)b_base, (void)b_rows, (void)c, (void)ldc;
  std::abort();  // never planned: bf16_dot_available() is false without the x86 kernels
#endif
}

}  // namespace aclnn_cpu
