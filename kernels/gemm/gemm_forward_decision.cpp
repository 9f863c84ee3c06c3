// The forward GEMM entries' decisions (gemm_forward_decision.h).
#include "kernels/gemm/gemm_forward_decision.h"

#include <algorithm>

#include "acl/acl_base.h"
#include "kernels/common/im2col.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/matmul/bf16_pairs.h"

namespace aclnn_cpu {
namespace {

// Fewest positions a band takes where output channels can be cut instead: a band's columns are padded
// to whole micro-kernel tiles, so narrower bands waste products (and restage their windows).
constexpr int64_t kMinBandColumns = 64;
// Bytes of a group's W (packed for AMX tiles) past which AMX products take blocks of rows.
constexpr uint64_t kAmxWeightCache = uint64_t{1} << 20;

// Where a forward convolution's source may be read from padded windows (padded_windows_apply; not a
// 1x1 kernel of stride 1, whose source is its column matrix already), its bands and GEMM blocking, a
// band's window within the staging budget. A slice's kTargetTasks share comes from bands of at least
// kMinBandColumns positions where its plane has them, the rest from `row_blocks` blocks of output
// channels (whole slivers of the micro-kernel's rows), where `row_blocks` is not null (else all of it
// from bands). Neither cut changes an entry's sum.
Support forward_bands(const ConvGeometry& g, const CpuFeatures& cpu, GemmBlocking* blocking, BandTiling* bands,
                      int64_t* row_blocks) {
  if (!padded_windows_apply(g)) return refuse("strides or dilation that padded windows do not serve");
  if (columns_are_source(g)) return refuse("1x1 kernel of stride 1: its source is its column matrix");
  const Shape s(g);
  const int64_t pieces = pieces_for_tasks(s.n * s.groups);
  const int64_t band_pieces =
      row_blocks == nullptr ? pieces : std::max<int64_t>(1, std::min(pieces, s.dst_plane / kMinBandColumns));
  *blocking = plan_gemm_blocking(s.cout, ceil_div(s.dst_plane, band_pieces), s.rows(), cpu);
  const int64_t mr = left_sliver_rows(*blocking), nr = right_sliver_columns(*blocking);
  const int64_t result_rows = round_up(s.cout, mr);
  const int64_t max_columns = std::max<int64_t>(4 * nr, kColumnBudget / result_rows);
  *bands = BandTiling(g, band_pieces, max_columns);
  bands->fit_tiles(band_pieces, column_granularity(*blocking), max_columns);
  if (row_blocks != nullptr)
    *row_blocks = ceil_div(s.cout, round_up(ceil_div(s.cout, ceil_div(pieces, bands->bands())), mr));
  if (!product_within(s.cin, bands->channel_floats(), kStagingBudget))
    return refuse("a window past the staging budget");
  if (!product_within(result_rows, round_up(bands->columns(), nr), int64_t{1} << 58)) return refuse("bands too wide");
  return kSupported;
}

}  // namespace

Support decide_windows(const ConvGeometry& g, const View5& source, const ConvProblem& p, const CpuFeatures& cpu) {
  const std::string& forced = p.forced_choices;
  WindowsDecision d;
  const AmxTiles amx = amx_pair_products(cpu.pairs, source, p.wei, p.math);
  if (take_choice(forced, "pairs", amx != AmxTiles::kNone, true)) d.amx = amx;
  const bool paired = d.amx != AmxTiles::kNone;
  const Shape s(g);
  const int64_t depth = (paired ? ceil_div(s.cin, 2) : s.cin) * s.kernel_volume;
  const bool large_w = paired && uint64_t(amx_left_words(s.cout, depth)) > kAmxWeightCache / sizeof(uint32_t);
  const Support fits = forward_bands(g, cpu, &d.blocking, &d.bands, paired && !large_w ? nullptr : &d.row_blocks);
  if (!fits) return fits;
  d.depth_major = take_choice(forced, "depth_major", !paired && g.kernel[0] > 1, true);
  d.reasons.note(forced, paired, "pairs", "BF16 source and weights in the AMX tiles' order");
  d.reasons.note(forced, d.depth_major, "depth_major", "a kernel deeper than one plane");
  return supported_as(std::move(d));
}

TilesDecision decide_tiles(const ConvGeometry& g, const View5& source, const ConvProblem& p, const CpuFeatures& cpu) {
  const Shape s(g);
  const std::string& forced = p.forced_choices;
  const bool pointwise = columns_are_source(g);
  TilesDecision d;
  // Output tiles small enough for kTargetTasks tasks (the packed panels bound the scratch). (A 1x1
  // kernel's tiles in whole 32-column micro-kernel tiles: its source rows are then read in place,
  // run_tiles.)
  d.tile = std::max<int64_t>(1, s.dst_plane / pieces_for_tasks(s.n * s.groups));
  if (pointwise && d.tile > 32) d.tile = d.tile / 32 * 32;
  d.blocking = plan_gemm_blocking(s.cout, d.tile, s.rows(), cpu);
  // A 1x1 kernel's BF16 source and weights (used as they are) in pair products in the AMX tiles'
  // order where the CPU runs it (amx.h), a tile's source staged as rows of channel pairs and its result
  // within the staging budget.
  const AmxTiles amx = amx_pair_products(cpu.pairs, source, p.wei, p.math);
  const int64_t pairs_ld = round_up(d.tile, kAmxBlock);
  const bool pairs_fit = pointwise && amx != AmxTiles::kNone &&
                         product_within(ceil_div(s.cin, 2), pairs_ld, kStagingBudget) &&
                         product_within(round_up(s.cout, kAmxBlock), pairs_ld, kStagingBudget);
  if (take_choice(forced, "pairs", pairs_fit, true)) d.amx = amx;
  if (d.amx == AmxTiles::kNone) {
    // A FLOAT16/BF16 1x1 source with contiguous planes (no rounding asked of it), where the result goes
    // by parts: whole tiles of it read in place by the micro-kernel, widened as they are loaded
    // (sgemm_rows_16bit: not staged, not packed), their results narrowed as they are computed.
    const bool by_parts =
        DenseFloatOutput::stores_parts_of(p.grad_input, result_bias(p) != nullptr, bias_added_in_place(p) != nullptr);
    d.rows16 = take_choice(forced, "rows16",
                           pointwise && (source.dtype == ACL_FLOAT16 || source.dtype == ACL_BF16) &&
                               p.math == MathMode::kFull && planes_contiguous(source) && by_parts &&
                               converts_in_registers(d.blocking),
                           true);
    // Tasks stage their windows of the source (no dense float copy of it), within the staging budget:
    // a source that is not a dense float array, and a 1x1 kernel's tiles of unit-stride rows (each
    // channel's run of the tile copied in order, not one line of every channel's row per micro-kernel
    // tile).
    d.staged = take_choice(forced, "source_staged",
                           (stage_from_view(source, p.math) || (pointwise && source.stride[4] == 1)) &&
                               product_within(s.cin, max_source_window(g, d.tile), kStagingBudget),
                           true);
  }
  d.reasons.note(forced, d.amx != AmxTiles::kNone, "pairs",
                 "a 1x1 kernel's BF16 source and weights in the AMX tiles' order");
  d.reasons.note(forced, d.rows16, "rows16", "a 1x1 kernel's 16-bit rows widened by the micro-kernel");
  d.reasons.note(forced, d.staged, "source_staged", "each task stages its tile's window from the source's view");
  return d;
}

}  // namespace aclnn_cpu
