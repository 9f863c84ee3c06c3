#include "kernels/matmul/bf16_pairs.h"

#include "acl/acl_base.h"
#include "kernels/common/pack.h"
#include "kernels/kits/kit.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {

AmxTiles amx_pair_products(AmxTiles engine, const View5& a, const View5& b, MathMode math) {
  if (a.dtype != ACL_BF16 || b.dtype != ACL_BF16 || math != MathMode::kFull) return AmxTiles::kNone;
  return engine;
}

void stage_channel_pairs(const View5& view, int64_t n, int64_t c, bool odd, int64_t first, int64_t count,
                         float* scratch, uint32_t* out, const Conversions16* conversions) {
  if (planes_contiguous(view) && odd) {  // two runs of BF16 values, interleaved
    const uint16_t* even_run = static_cast<const uint16_t*>(view.data) + view.element(n, c, 0, 0, first);
    const uint16_t* odd_run = even_run + view.stride[1];
    for (int64_t i = 0; i < count; ++i) out[i] = bf16_pair(even_run[i], odd_run[i]);
    return;
  }
  read_plane_floats(view, MathMode::kFull, n, c, first, count, scratch, conversions);
  if (odd) read_plane_floats(view, MathMode::kFull, n, c + 1, first, count, scratch + count, conversions);
  for (int64_t i = 0; i < count; ++i)
    out[i] = bf16_pair(bf16_bits(scratch[i]), odd ? bf16_bits(scratch[count + i]) : 0);
}

namespace {

// The products `tiles` names: a kit's FMA tiles, or amx/'s (the emulation where the kit has none).
AmxProducts pair_products(AmxTiles tiles) {
  const auto fma = [](Isa isa) {
    const AmxProducts& products = isa_kit(isa).fma_pairs;
    return products.rows != nullptr ? products : amx_products(AmxTiles::kEmulated);
  };
  switch (tiles) {
    case AmxTiles::kFmaAvx512: return fma(Isa::kAvx512);
    case AmxTiles::kFmaAvx2: return fma(Isa::kAvx2);
    case AmxTiles::kFmaNeon: return fma(Isa::kGeneric);
    default: return amx_products(tiles);
  }
}

}  // namespace

void amx_pair_rows(AmxTiles tiles, int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base,
                   const int64_t* b_rows, uint32_t* stage, float* c, int64_t ldc) {
  pair_products(tiles).rows(m, n, pairs, a, b_base, b_rows, stage, c, ldc);
}

void amx_pair_a_rows(AmxTiles tiles, int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,
                     const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset,
                     bool accumulate, float* c, int64_t ldc, uint32_t* stage) {
  pair_products(tiles).a_rows(m, n, pairs, a_base, a_rows, a_columns, b_data, b_pairs, b_offset, accumulate, c, ldc,
                              stage);
}

int64_t packed_pairs_right_words(int64_t n, int64_t pairs) { return sliver_entries(n, kAmxBlock, pairs); }

void pack_pairs_right(const float* rows, int64_t row_stride, int64_t count, int64_t pairs, uint32_t* out, int64_t depth,
                      int64_t j0, int64_t offset) {
  constexpr int64_t nr = kAmxBlock;
  for (int64_t j = j0; j < j0 + count; ++j) {
    const float* row = rows + (j - j0) * row_stride;
    uint32_t* to = out + j / nr * nr * depth + offset * nr + j % nr;
    for (int64_t q = 0; q < pairs; ++q) to[q * nr] = bf16_pair(bf16_bits(row[2 * q]), bf16_bits(row[2 * q + 1]));
  }
}

}  // namespace aclnn_cpu
