// What small_group's gradInput (small_group.cpp) decides in supports() and plans from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/pack.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/direct/small_group_staging.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {
namespace small_group {

constexpr int64_t kBufferedSlice = int64_t{256} << 10;  // bytes of a gradInput slice's buffer, at most

// Whether the row kernels read the source of forward convolution g in place (ForwardRows::source_row),
// not staged: float values used as they are, planes each one run of memory with unit steps along W (a
// stride of 1 there), one plane of depth read by one output plane (no depth padding), and kernels that
// read every block's job so.
inline bool reads_source_in_place(const ConvGeometry& g, const View5& source, MathMode math,
                                  const RowKernels& kernels) {
  const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group;
  if (source.dtype != ACL_FLOAT || math != MathMode::kFull || !planes_contiguous(source) || g.stride[2] != 1 ||
      g.src_size[0] != 1 || g.dst_size[0] != 1 || g.kernel[0] != 1 || g.pad[0] != 0)
    return false;
  const Staging staging(g);
  for (int64_t blk = 0; blk < ceil_div(cout, kForwardBlock); ++blk) {
    ForwardRows job{};  // (the fields the kernels choose by)
    job.rows = staging.out_rows, job.channels = cin, job.taps = g.kernel_volume(), job.width = g.dst_size[2];
    job.out_channels = std::min<int64_t>(kForwardBlock, cout - blk * kForwardBlock);
    job.chain_taps = cout == 1 ? g.kernel[2] : 0;
    staging.describe_grid(g, job);
    if (!kernels.reads_in_place(job)) return false;
  }
  return true;
}

// What small_group's gradInput decides in supports() and plans from: a slice's result computed in a
// per-thread buffer and rounded into the user's view from there (a result that is not dense float,
// within kBufferedSlice; no float copy of the whole result), and the source read in place by the kernels.
struct SmallGroupDecision final : EntryDecision {
  bool buffered = false, in_place = false;
  ChoiceReasons reasons;
  std::string describe() const override { return reasons.text; }
};
inline SmallGroupDecision decide_input(const ConvProblem& p, const CpuFeatures& cpu) {
  const bool flipped = p.input_grad == InputGrad::kBackwardData;
  const ConvGeometry g = flipped ? flipped_geometry(p.geometry) : p.geometry;
  const std::string& forced = p.forced_choices;
  SmallGroupDecision d;
  // (a forward operator's bias added by the kernels: written in place)
  const double slice_bytes = double(g.dst_channels_per_group) * double(g.dst_plane()) * 4;
  d.buffered = take_choice(forced, "buffered",
                           !result_in_place(p) && bias_added_in_place(p) == nullptr && !may_overlap(p.grad_input) &&
                               slice_bytes < double(int64_t{1} << 58),
                           slice_bytes <= double(kBufferedSlice));
  d.in_place = take_choice(forced, "source_in_place",
                           reads_source_in_place(g, flipped ? p.dst : p.src, p.math, cpu.kit->rows), true);
  d.reasons.note(forced, d.buffered, "buffered", "each slice's result rounded from a buffer of its thread's");
  d.reasons.note(forced, d.in_place, "source_in_place", "float planes read in place by the row kernels");
  return d;
}

}  // namespace small_group
}  // namespace aclnn_cpu
