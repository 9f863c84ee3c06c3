#include "kernels/matmul/bf16_pairs.h"

#include "acl/acl_base.h"
#include "kernels/common/pack.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {

AmxTiles amx_pair_products(AmxTiles engine, const View5& a, const View5& b, MathMode math) {
  if (a.dtype != ACL_BF16 || b.dtype != ACL_BF16 || math != MathMode::kFull) return AmxTiles::kNone;
  return engine;
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
