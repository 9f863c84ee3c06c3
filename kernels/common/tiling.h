// Sizes and tiling shared by the GEMM implementations. Every choice is a function of the
// geometry alone (never of the thread count), and is made at phase 1.
#pragma once

#include <algorithm>
#include <cstdint>

#include "acl/acl_base.h"
#include "kernels/common/pack.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/plan.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

constexpr int64_t kTargetTasks = 64;                   // tasks each parallel phase offers (4 per thread at 16)
constexpr int64_t kMinTilePositions = 256;             // output positions per column-matrix tile, at least
constexpr int64_t kPartialBudget = int64_t{16} << 20;  // bytes of weight-gradient partial sums

// a / b rounded up, for a >= 0 and b > 0 (no a + b - 1 that could overflow on empty tensors with
// huge dims).
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
// a rounded up to a multiple of b (same domain).
inline int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Whether a * b <= limit, for a, b >= 0, without forming a product that could overflow.
inline bool product_within(int64_t a, int64_t b, int64_t limit) { return b == 0 || a <= limit / b; }
// a * b for a, b >= 0, or INT64_MAX where that does not fit (a size no budget admits).
inline int64_t saturating_product(int64_t a, int64_t b) { return product_within(a, b, INT64_MAX) ? a * b : INT64_MAX; }

// Into how many pieces each of `units` independent units of work must be cut for kTargetTasks tasks.
inline int64_t pieces_for_tasks(int64_t units) { return ceil_div(kTargetTasks, std::max<int64_t>(1, units)); }

// Floats of column matrix per task and tile (512 KiB): the tile im2col writes is still in L2
// when the GEMM packs it. A constant, not the CPU's L2 size: the tiling decides the order in which
// col2im adds, and results must not depend on the machine.
constexpr int64_t kColumnBudget = int64_t{1} << 17;

struct Shape {
  int64_t n, groups, cin, cout, src_plane, dst_plane, kernel_volume;
  explicit Shape(const ConvGeometry& g)
      : n(g.batch),
        groups(g.groups),
        cin(g.src_channels_per_group),
        cout(g.dst_channels_per_group),
        src_plane(g.src_plane()),
        dst_plane(g.dst_plane()),
        kernel_volume(g.kernel_volume()) {}
  int64_t rows() const { return cin * kernel_volume; }  // rows of a group's column matrix
  // Output positions per tile, so a tile of `tile_rows` rows stays within the column budget
  // (but never fewer than kMinTilePositions, or the GEMMs get too thin).
  int64_t tile(int64_t tile_rows) const {
    const int64_t fit = kColumnBudget / std::max<int64_t>(1, tile_rows);
    return std::max<int64_t>(1, std::min(dst_plane, std::max(kMinTilePositions, fit)));
  }
};

// 1x1 kernel, stride 1, no padding: the column matrix is the source itself (C x plane).
inline bool columns_are_source(const ConvGeometry& g) {
  for (int a = 0; a < 3; ++a) {
    if (g.kernel[a] != 1 || g.stride[a] != 1 || g.pad[a] != 0 || g.src_size[a] != g.dst_size[a]) return false;
  }
  return true;
}

// Whether a GEMM step reads `view` by staging the part of each slice a tile needs (im2col.h's
// stage_window) rather than from a dense float copy of the whole tensor: it is not a dense float
// array already (another dtype, cubeMathType 2 rounding, strides), and its rows are contiguous (a
// gather along W, as in ConvTbc's T x B x C, is cheaper copied once).
inline bool stage_from_view(const View5& view, MathMode math) {
  return !float_in_place(view, math) && view.stride[4] == 1;
}
// Floats of staged source per thread, at most (else the step asks for a dense copy).
constexpr int64_t kStagingBudget = int64_t{4} << 20;

// The forward operators' bias (ConvProblem::grad_input_bias) of a gradInput step's result, or null.
inline const View5* result_bias(const ConvProblem& p) { return p.add_grad_input_bias ? &p.grad_input_bias : nullptr; }
// The forward operators' bias of a gradInput step whose result is the user's dense float tensor, for
// the step to add as it stores its sums there (DenseFloatOutput's step_adds_bias, BiasFloats), or null.
inline const View5* bias_added_in_place(const ConvProblem& p) {
  return p.add_grad_input_bias && is_dense_float(p.grad_input) ? &p.grad_input_bias : nullptr;
}
// Whether a gradInput step writes its float sums straight into the user's tensor: a dense float
// array with no bias to add.
inline bool result_in_place(const ConvProblem& p) { return is_dense_float(p.grad_input) && !p.add_grad_input_bias; }

// The forward operators' bias as floats, one per output channel, for a step that adds it to its
// sums as it stores them (fl32(sum) + bias): booked at phase 1 where there is a bias, filled from
// the user's view at the start of phase 2.
class BiasFloats {
 public:
  BiasFloats() = default;
  BiasFloats(const View5* bias, PlanBuilder& builder, const char* region_name) {
    if (bias == nullptr) return;
    view_ = *bias;
    channels_ = view_.shape[1];
    floats_ = builder.book_scratch(region_name, static_cast<uint64_t>(channels_), sizeof(float));
  }
  // Converts the bias into the booked floats (nothing where there is none).
  void fill(const Workspace& workspace) const {
    float* floats = workspace.at<float>(floats_);
    for (int64_t c = 0; c < (floats != nullptr ? channels_ : 0); ++c) floats[c] = channel_bias(view_, c);
  }
  // Channel c's bias and those after it, or null where there is none.
  const float* from(const Workspace& workspace, int64_t c) const {
    return floats_ >= 0 ? workspace.at<float>(floats_) + c : nullptr;
  }

 private:
  View5 view_;
  int64_t channels_ = 0;
  WorkspaceLedger::Handle floats_ = -1;
};

// A result the GEMM implementations write as a dense float array: the user's tensor itself when
// it is one (and no bias is added, or the step adds it), else a staging region copied (and rounded)
// into the user's view at the end. With a bias, every store adds channel c's bias to its float sums
// first: the result is fl32(sum) + bias, rounded once into the view's dtype.
class DenseFloatOutput {
 public:
  // `parts_from_buffers`: the step stores every part of a result that stores_parts() from buffers
  // of its own (store_rows), never through data(): no float region is booked for it then.
  // `step_adds_bias`: a step that adds the bias to its sums as it stores them, where it writes into
  // data() in place (a dense float view).
  DenseFloatOutput() = default;
  DenseFloatOutput(const View5& view, PlanBuilder& builder, const char* region_name, bool parts_from_buffers = false,
                   const View5* bias = nullptr, bool step_adds_bias = false)
      : view_(view), conversions_(builder.cpu().conversions), has_bias_(bias != nullptr) {
    if (has_bias_) bias_ = *bias;
    if (written_in_place(view, has_bias_, step_adds_bias)) {
      in_place_ = true;
    } else {
      by_parts_ = !may_overlap(view);
      if (!(by_parts_ && parts_from_buffers))
        staged_ = builder.book_scratch(region_name, static_cast<uint64_t>(view.numel()), sizeof(float));
    }
  }
  // Whether the output of these arguments stores its parts (stores_parts()), known before it is booked.
  static bool stores_parts_of(const View5& view, bool has_bias, bool step_adds_bias) {
    return !written_in_place(view, has_bias, step_adds_bias) && !may_overlap(view);
  }
  // The dense float result (null where parts come from the step's buffers).
  float* data(const Workspace& workspace) const {
    if (in_place_) return dense_float_data(view_);
    return staged_ >= 0 ? workspace.at<float>(staged_) : nullptr;
  }
  // Stores positions [first, first + count) of channels [c0, c1) of sample n of a staged result
  // into the user's view, once a task has completed them (while they are in its cache). Nothing to
  // do when written in place, or for a view that may overlap itself (finish stores it whole, in
  // the user's dim order).
  void store_part(const Workspace& workspace, int64_t n, int64_t c0, int64_t c1, int64_t first, int64_t count) const {
    if (!stores_parts()) return;
    const int64_t plane = view_.shape[2] * view_.shape[3] * view_.shape[4];
    float* values = workspace.at<float>(staged_) + (n * view_.shape[1] + c0) * plane + first;
    if (has_bias_) add_channel_bias(bias_, c0, c1 - c0, values, plane, count);
    store_rows_floats(values, plane, c1 - c0, view_, n, c0, first, count, conversions_);
  }
  // Whether store_part stores (a step may then store its values straight from where it computed
  // them, with store_rows, instead of into data()).
  bool stores_parts() const { return !in_place_ && by_parts_; }
  // Stores positions [first, first + count) of channels c .. c + channels - 1 of sample n, channel c + i's
  // values at values + i * value_stride, into the user's view (store_rows_floats).
  void store_rows(const float* values, int64_t value_stride, int64_t channels, int64_t n, int64_t c, int64_t first,
                  int64_t count) const {
    if (has_bias_) {
      store_rows_with_bias(values, value_stride, channels, view_, bias_, n, c, first, count, conversions_);
    } else {
      store_rows_floats(values, value_stride, channels, view_, n, c, first, count, conversions_);
    }
  }
  // Asks for the user's positions [first, first + count) of channels c .. c + channels - 1 of sample n
  // into L2 ahead of store_rows (a hint: nothing unless stores_parts() and the view's planes are
  // contiguous).
  void prefetch_rows(int64_t channels, int64_t n, int64_t c, int64_t first, int64_t count) const {
    if (stores_parts()) prefetch_plane_positions(view_, n, c, channels, first, count);
  }
  // Where a GEMM may store positions [first, ..) of channels c, c + 1, .. of sample n narrowed as it
  // computes them (sgemm_rows' NarrowedRows): a FLOAT16/BF16 view stored by parts whose planes are
  // contiguous (channels a row stride apart), with no bias to add; else none (out null: store_rows
  // the float results).
  NarrowedRows narrowed_rows(int64_t n, int64_t c, int64_t first) const {
    if (!stores_parts() || has_bias_ || view_.data == nullptr || !narrowable_rows(view_)) return {nullptr, 0, false};
    return {static_cast<uint16_t*>(view_.data) + view_.element(n, c, 0, 0, first), view_.stride[1],
            view_.dtype == ACL_BF16};
  }
  // Stores a staged result into the user's view: nothing to do when written in place, or when the
  // step stored every part of it (`parts_stored`) and it could.
  void finish(const Workspace& workspace, int threads, bool parts_stored = false) const {
    if (in_place_ || (parts_stored && by_parts_)) return;
    float* values = workspace.at<float>(staged_);
    if (has_bias_) add_bias_to_dense(bias_, values, view_, threads);
    store_dense(values, view_, threads, conversions_);
  }

 private:
  // The user's tensor itself: a dense float one, with no bias or the step adding it.
  static bool written_in_place(const View5& view, bool has_bias, bool step_adds_bias) {
    return is_dense_float(view) && (!has_bias || step_adds_bias);
  }
  View5 view_, bias_;
  const Conversions16* conversions_ = nullptr;  // the plan's kit's (CpuFeatures::conversions)
  bool has_bias_ = false, in_place_ = false, by_parts_ = false;
  WorkspaceLedger::Handle staged_ = -1;
};

}  // namespace aclnn_cpu
