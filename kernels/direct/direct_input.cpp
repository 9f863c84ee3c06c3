// gradInput of a dense direct convolution, computed directly (no column matrix, no col2im): each
// input-gradient row (id, ih) of a block of 32 input channels is a sum over the kernel taps that
// reach a dY entry, and over the output channels, of a weight vector (16 input channels) times a dY
// entry:
//   dX[ci, id, ih, iw] = sum over taps (kd, kh, kw) reaching dY, co of W[co, ci, kd, kh, kw] * dY[co, od, oh, ow],
//   (od, oh, ow) = ((id + pD - kd*dD) / sD, (ih + pH - kh*dH) / sH, (iw + pW - kw*dW) / sW),
// where each division is exact and its result inside dY. A row is computed in its sW column phases
// (positions iw = q + sW*j), each with the taps whose columns divide for it. The taps whose dY row
// lies in the padding are skipped, not multiplied by zeros: on a 7x7 plane with a 3x3 kernel a GEMM
// over (channel, tap) rows computes 21 tap rows of every 19 that count, and with stride 2 col2im
// adds every product into place. Each task (sample, group, 32 input channels, band of rows of one
// input plane) stages the dY rows its band reads into zero-padded rows (any dtype and strides,
// straight from the user's view), and the row kernels (row_kernels.h, InputRows) hold a chunk of up
// to 14 positions x 32 channels in registers. Each output element is the blocked sum
// (kernels/common/blocked_sum.h) of its products in (tap, co) order inside one task, so results do
// not depend on the thread count, and AVX-512 and AVX2 agree bit for bit. A transposed layer of
// stride 1 (the forward operators' direct convolution) is computed as the gradInput of the direct
// layer it is the adjoint of, W's channel roles swapped and its taps flipped (swapped()).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/common/runs.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/common/transpose_4x4.h"
#include "kernels/core/plan.h"
#include "kernels/direct/lane_weights.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {

namespace {

constexpr int64_t kBlockChannels = 2 * kRowLanes;     // input channels per task
constexpr int64_t kStagingBudget = int64_t{4} << 20;  // bytes of a task's staged dY rows, at most

// Input position i and tap k read dY index (i + p - k*d) / s along an axis where that divides
// exactly. The dY indices [first_reach, last_reach) the taps of input indices [i0, i1) reach:
int64_t first_reach(const ConvGeometry& g, int axis, int64_t i0) {
  const int64_t lowest = i0 + g.pad[axis] - (g.kernel[axis] - 1) * g.dilation[axis];
  return lowest <= 0 ? 0 : std::min(g.dst_size[axis], ceil_div(lowest, g.stride[axis]));
}
int64_t last_reach(const ConvGeometry& g, int axis, int64_t i1) {
  return std::min(g.dst_size[axis], (i1 - 1 + g.pad[axis]) / g.stride[axis] + 1);
}

// How a task's dY rows are staged: every row of dY a band of input rows reads, (od, oh) in
// [od0, od0 + planes) x [oh0, oh0 + rows), channel co at
//   staged[((od - od0) * rows + (oh - oh0)) * Cout + co) * width + x] = dY[co, od, oh, x - left]
// (zero where x - left lies outside dY's row). An input row is computed in its sW column phases:
// position iw = q + sW*j of phase q and a tap kw with q + pW - kw*dW = sW*b read x = j + b + left,
// `left` columns before dY's first making every such x at least 0.
struct RowStaging {
  int64_t left = 0, width = 0, planes = 1, rows = 1;

  RowStaging(const ConvGeometry& g, int64_t band_rows) {
    const int64_t* k = g.kernel;
    const int64_t* d = g.dilation;
    const int64_t* s = g.stride;
    const int64_t reach_left = (k[2] - 1) * d[2] - g.pad[2];  // how far the last tap reaches left of column 0
    left = reach_left <= 0 ? 0 : ceil_div(reach_left, s[2]);
    width = ceil_div(g.src_size[2], s[2]) + (s[2] - 1 + g.pad[2]) / s[2] + left;
    planes = std::min(g.dst_size[0], (k[0] - 1) * d[0] / s[0] + 1);
    rows = std::min(g.dst_size[1], (band_rows - 1 + (k[1] - 1) * d[1]) / s[1] + 1);
  }
  // Floats of a task's staged rows, in double (for the budget check, before the sizes are known to be
  // reasonable; rounded up).
  static double floats(const ConvGeometry& g, int64_t band_rows) {
    auto span = [&](int a) { return double(g.kernel[a] - 1) * double(g.dilation[a]); };
    const double s2 = double(g.stride[2]);
    const double left = std::max(0.0, (span(2) - double(g.pad[2])) / s2 + 1);
    const double width = double(g.src_size[2]) / s2 + 1 + (s2 + double(g.pad[2])) / s2 + left;
    const double planes = std::min(double(g.dst_size[0]), span(0) / double(g.stride[0]) + 1);
    const double rows = std::min(double(g.dst_size[1]), (double(band_rows) + span(1)) / double(g.stride[1]) + 1);
    return planes * rows * double(g.dst_channels_per_group) * width;
  }
};

// A transposed layer's gradInput (a forward convolution: the forward operators' output of a direct
// convolution) with stride 1 is the gradInput of a direct layer, the role swap of conv_problem.h
// read backwards: its flipped geometry, the source as dY, and W with its channel roles swapped and
// its taps flipped, W'[ci][co][k] = W[co][ci][K-1-k] (done as the weights are packed).
bool swapped(const ConvProblem& p) { return p.input_grad == InputGrad::kForward; }

class DirectInput final : public ConvStep {
 public:
  DirectInput(const ConvProblem& p, PlanBuilder& b)
      : swapped_(swapped(p)),
        g_(swapped_ ? flipped_geometry(p.geometry) : p.geometry),
        dst_(swapped_ ? p.src : p.dst),
        wei_(p.wei),
        math_(p.math),
        threads_(b.threads()),
        kernels_(b.cpu().kit->rows),
        conversions_(b.cpu().conversions),
        output_(p.grad_input, b, "gradInput.f32", true, result_bias(p), bias_added_in_place(p) != nullptr),
        bias_(bias_added_in_place(p), b, "direct.bias"),
        staging_(g_, 1),
        prefetch_rows_(b.cpu().amd) {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group;
    taps_ = g_.kernel_volume();
    // (swapped: W's first axis holds the lanes' channels, its taps flipped)
    weights_ = LaneWeights(wei_, math_, {g_.groups, cin, cout, taps_, swapped_, swapped_}, b);
    channel_tasks_ = weights_.tasks_per_group();
    // Bands of rows of one input plane, for kTargetTasks tasks.
    const int64_t depth = g_.src_size[0], height = g_.src_size[1];
    const int64_t per_plane =
        std::clamp<int64_t>(ceil_div(pieces_for_tasks(g_.batch * g_.groups * channel_tasks_), depth), 1, height);
    band_rows_ = ceil_div(height, per_plane);
    bands_ = depth * ceil_div(height, band_rows_);
    staging_ = RowStaging(g_, band_rows_);
    staged_ = b.book_scratch("direct.staged_gradOutput", staging_.planes * staging_.rows * cout * staging_.width,
                             sizeof(float), threads_);
    // Two rows at a time where the kernels take rows of this width in pairs (InputRows::rows).
    step_rows_ = g_.stride[2] == 1 && kernels_.paired_row_width == g_.src_size[2] ? 2 : 1;
    // (step_rows_ rows' worth, and as many again: the rows of a view not stored as dense floats)
    tile_ =
        b.book_scratch("direct.row_result", 2 * step_rows_ * kBlockChannels * g_.src_size[2], sizeof(float), threads_);
    // (per tap: dY's offset, the weights', the first and the end of the positions inside dY's columns, for each
    // of step_rows_ rows; and one more: which (sample, group, band) the thread's staged rows hold)
    tap_offsets_ = b.book_scratch("direct.tap_offsets", 4 * step_rows_ * taps_ + 1, sizeof(int64_t), threads_);
    b.need_float_inputs(false, weights_.wants_float_weights(), false);  // dY is staged from the user's view
  }

  int64_t tasks() const override { return g_.batch * g_.groups * channel_tasks_ * bands_; }
  std::string detail() const override {
    return std::string("isa=") + isa_name(kernels_.isa) + (swapped_ ? ":swapped" : "");
  }

  int run(const Workspace& w, const StepInputs& in) const override {
    int status = weights_.pack(w, in.f32.wei, threads_);
    if (status != ACLNN_SUCCESS) return status;
    float* grad_input = output_.data(w);
    bias_.fill(w);
    for (int i = 0; i < threads_; ++i) *staged_key(w, i) = -1;  // nothing staged yet
    status = run_tasks(
        tasks(), threads_, "direct gradInput",
        [&](int64_t t) {
          // Channel blocks innermost, a band's blocks one run of tasks where that leaves at least 4 runs per
          // thread: the thread stages the band's dY rows once for all of them (not each thread that takes
          // one of its blocks; the blocks of weights stream from the shared cache as they are read, in order).
          const int64_t ct = t % channel_tasks_, band = t / channel_tasks_ % bands_;
          const int64_t n = t / (channel_tasks_ * bands_) % g_.batch, grp = t / (channel_tasks_ * bands_ * g_.batch);
          run_task(w, weights_.blocks(w, grp, ct), grad_input, n, grp, ct, band);
        },
        tasks() / channel_tasks_ >= 4 * threads_ ? channel_tasks_ : 1);
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, true);
    return status;
  }

 private:
  // One task: input channels [ci0, ci0 + 32) of rows [ih0, ih1) of input plane id, sample n.
  void run_task(const Workspace& w, const float* weights, float* grad_input, int64_t n, int64_t grp, int64_t ct,
                int64_t band) const {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group;
    const int64_t height = g_.src_size[1], width = g_.src_size[2], per_plane = bands_ / g_.src_size[0];
    const int64_t id = band / per_plane, ih0 = band % per_plane * band_rows_, ih1 = std::min(height, ih0 + band_rows_);
    const int64_t od0 = first_reach(g_, 0, id), oh0 = first_reach(g_, 1, ih0);
    const int thread = thread_index();
    float* staged = w.at<float>(staged_, thread);
    int64_t* key = staged_key(w, thread);
    if (*key != (grp * g_.batch + n) * bands_ + band) {  // (else the thread's last task staged them)
      stage_rows(staged, n, grp, od0, last_reach(g_, 0, id + 1), oh0, last_reach(g_, 1, ih1));
      *key = (grp * g_.batch + n) * bands_ + band;
    }
    int64_t* dy_tap = w.at<int64_t>(tap_offsets_, thread);
    int64_t* weight_tap = dy_tap + taps_;
    int64_t* tap_first = dy_tap + 2 * taps_;
    int64_t* tap_end = dy_tap + 3 * taps_;
    int64_t* next_taps = dy_tap + 4 * taps_;  // (the next row's four arrays, where step_rows_ is 2)
    float* tile = w.at<float>(tile_, thread);
    float* rows = tile + step_rows_ * kBlockChannels * width;  // the rows of a view not stored as dense floats
    const int64_t ci0 = ct * kBlockChannels, channels = std::min(kBlockChannels, cin - ci0);
    // (a forward operator's bias, added as the rows are stored in place)
    const float* bias = bias_.from(w, grp * cin + ci0);
    const int64_t plane = g_.src_size[0] * height * width, sw = g_.stride[2];
    // Stride 2: both column phases computed into the tile (phase 1's after phase 0's positions), then
    // stored together, interleaved (not each phase stored with step 2, one entry at a time).
    const bool pairs = sw == 2 && width >= 2;
    const int64_t even_positions = ceil_div(width, int64_t{2});
    // Two rows at once where the kernels take rows of this width in pairs (InputRows::rows) and both rows
    // have the same taps (a row and the next inside dY's reach): their positions one after the other in the
    // tile, and in dX.
    const bool two_rows = step_rows_ == 2;
    int64_t rows_here = 1;
    for (int64_t ih = ih0; ih < ih1; ih += rows_here) {
      rows_here = 1;
      const int64_t first = (id * height + ih) * width;
      // Channel i's row: from the parts buffer, or dX's row in place; the channels' rows equally apart.
      float* row0 =
          output_.stores_parts() ? rows : grad_input + (n * g_.groups * cin + grp * cin + ci0) * plane + first;
      const int64_t row_stride = output_.stores_parts() ? step_rows_ * width : plane;
      if (prefetch_rows_ && (ih + step_rows_ < ih1 || ci0 + kBlockChannels < cin)) {
        // The rows this thread writes next, into L2: the band's next rows (step_rows_ of them, past those computed
        // now where they are as many), or the next task's first (the band's first row of the next channels); in
        // dX, or in the user's view where store_rows writes.
        const bool next_row = ih + step_rows_ < ih1;
        const int64_t c = grp * cin + ci0 + (next_row ? 0 : kBlockChannels),
                      at = first + (next_row ? step_rows_ : ih0 - ih) * width;
        const int64_t count = next_row ? channels : std::min(kBlockChannels, cin - ci0 - kBlockChannels);
        const int64_t positions = std::min(step_rows_ * width, plane - at % plane);
        if (output_.stores_parts()) {
          output_.prefetch_rows(count, n, c, at, positions);
        } else {
          prefetch_rows<2>(grad_input + (n * g_.groups * cin + c) * plane + at, count, positions, plane);
        }
      }
      for (int64_t q = 0; q < std::min(sw, width); ++q) {  // column phase q: positions q + sW*j
        const int64_t taps = list_taps(id, ih, q, od0, oh0, dy_tap, weight_tap, tap_first, tap_end);
        int64_t row_step = 0;  // (two rows: the next row's dY entries after this one's)
        if (two_rows && ih + 1 < ih1 && taps > 0 &&
            list_taps(id, ih + 1, q, od0, oh0, next_taps, next_taps + taps_, next_taps + 2 * taps_,
                      next_taps + 3 * taps_) == taps) {
          row_step = next_taps[0] - dy_tap[0];
          rows_here = 2;
          for (int64_t t = 0; t < taps && rows_here == 2; ++t) {
            if (next_taps[t] - dy_tap[t] != row_step || next_taps[taps_ + t] != weight_tap[t]) rows_here = 1;
          }
        }
        // tile (blocks x positions x 16) = the phase's positions of the row's (two rows': rows_here) 32 channels
        const int64_t positions = ceil_div(width - q, sw);
        float* phase_tile = pairs && q == 1 ? tile + kBlockChannels * even_positions : tile;
        const InputRows job{staged,
                            dy_tap,
                            weight_tap,
                            tap_first,
                            tap_end,
                            taps,
                            cout,
                            staging_.width,
                            weights,
                            weights_.block_floats(),
                            ceil_div(channels, kRowLanes),
                            phase_tile,
                            positions,
                            rows_here,
                            row_step};
        kernels_.input_rows(job);
        if (!pairs) store_lane_tile(tile, rows_here * positions, channels, sw, row0 + q, row_stride, bias);
      }
      if (pairs)
        store_tile_pairs(tile, even_positions, tile + kBlockChannels * even_positions, width / 2, channels, row0,
                         row_stride, bias);
      if (output_.stores_parts())
        output_.store_rows(rows, step_rows_ * width, channels, n, grp * cin + ci0, first, rows_here * width);
    }
  }

  // Both phases of a stride-2 row: tile0 (blocks x positions0 x 16 lanes) at the even positions, tile1
  // (positions1 = positions0 or one fewer) at the odd ones, into the channels' rows (rows[i * row_stride
  // + w]), plus bias[i] where there is a bias: 4 channels x 4 pairs of positions through two 4 x 4
  // transposes, the rest one at a time.
  static void store_tile_pairs(const float* tile0, int64_t positions0, const float* tile1, int64_t positions1,
                               int64_t channels, float* rows, int64_t row_stride, const float* bias) {
    const int64_t whole = positions1 / 4 * 4;
    for (int64_t i = 0; i < channels; ++i) {
      const float* even = tile0 + i / kRowLanes * positions0 * kRowLanes + i % kRowLanes;
      const float* odd = tile1 + i / kRowLanes * positions1 * kRowLanes + i % kRowLanes;
      float* row = rows + i * row_stride;
      const int64_t group = i % 4 == 0 && i + 4 <= channels ? 4 : 1;  // channels i .. i + group - 1
      if (group == 4) {
        for (int64_t j = 0; j < whole; j += 4)
          transpose_4x4_pairs(even + j * kRowLanes, odd + j * kRowLanes, kRowLanes, row + 2 * j, row_stride,
                              bias != nullptr ? bias + i : nullptr);
      }
      for (int64_t c = 0; c < group; ++c) {
        const float add = bias != nullptr ? bias[i + c] : 0.0f;
        for (int64_t j = group == 4 ? whole : 0; j < positions0; ++j) {
          row[c * row_stride + 2 * j] = bias != nullptr ? even[c + j * kRowLanes] + add : even[c + j * kRowLanes];
          if (j < positions1)
            row[c * row_stride + 2 * j + 1] = bias != nullptr ? odd[c + j * kRowLanes] + add : odd[c + j * kRowLanes];
        }
      }
      i += group - 1;
    }
  }

  int64_t* staged_key(const Workspace& w, int thread) const {
    return w.at<int64_t>(tap_offsets_, thread) + 4 * step_rows_ * taps_;
  }

  // The taps of column phase q of input row ih (plane id) whose dY row lies inside dY and whose column is
  // one of dY's for the phase, in (kd, kh, kw) order: per tap its staged dY row's offset (the staging's
  // first plane od0 and row oh0), its weights' offset and the positions [first, end) inside dY's columns.
  // Returns how many.
  int64_t list_taps(int64_t id, int64_t ih, int64_t q, int64_t od0, int64_t oh0, int64_t* dy_tap, int64_t* weight_tap,
                    int64_t* tap_first, int64_t* tap_end) const {
    const int64_t cout = g_.dst_channels_per_group, sd = g_.stride[0], sh = g_.stride[1], sw = g_.stride[2];
    int64_t taps = 0;
    for (int64_t kd = 0; kd < g_.kernel[0]; ++kd) {
      const int64_t zd = id + g_.pad[0] - kd * g_.dilation[0];
      if (zd < 0 || zd % sd != 0 || zd / sd >= g_.dst_size[0]) continue;
      for (int64_t kh = 0; kh < g_.kernel[1]; ++kh) {
        const int64_t zh = ih + g_.pad[1] - kh * g_.dilation[1];
        if (zh < 0 || zh % sh != 0 || zh / sh >= g_.dst_size[1]) continue;
        const int64_t row = ((zd / sd - od0) * staging_.rows + (zh / sh - oh0)) * cout * staging_.width;
        for (int64_t kw = 0; kw < g_.kernel[2]; ++kw) {
          const int64_t zw = q + g_.pad[2] - kw * g_.dilation[2];
          if (zw % sw != 0) continue;
          dy_tap[taps] = row + zw / sw + staging_.left;
          // position j reads dY's column j + zw / sw
          tap_first[taps] = std::max<int64_t>(0, -(zw / sw));
          tap_end[taps] = g_.dst_size[2] - zw / sw;
          weight_tap[taps++] = ((kd * g_.kernel[1] + kh) * g_.kernel[2] + kw) * cout * kRowLanes;
        }
      }
    }
    return taps;
  }

  // Stages dY rows [od0, od1) x [oh0, oh1) of sample n, group grp (RowStaging's layout).
  void stage_rows(float* out, int64_t n, int64_t grp, int64_t od0, int64_t od1, int64_t oh0, int64_t oh1) const {
    const int64_t cout = g_.dst_channels_per_group, dst_w = g_.dst_size[2], sw = staging_.width;
    const int64_t x0 = staging_.left, x1 = std::min(sw, staging_.left + dst_w);  // the staged entries inside dY
    const bool floats = dst_.dtype == ACL_FLOAT && math_ != MathMode::kFp16Inputs && dst_.stride[4] == 1;
    // FLOAT16/BF16 rows of unit stride, used as they are: a channel's rows of a plane widened in one call.
    const bool halves = (dst_.dtype == ACL_FLOAT16 || dst_.dtype == ACL_BF16) && math_ == MathMode::kFull &&
                        dst_.stride[4] == 1 && conversions_ != nullptr;
    // Float rows likewise, copied by the kit's copy that prefetches ahead in them (so that the staging
    // does not wait on dY's first read from memory).
    const bool float_rows = floats && conversions_ != nullptr;
    // Channel by channel (a channel's rows are one run of dY, read in order), row by row.
    for (int64_t co = 0; co < cout; ++co) {
      for (int64_t od = od0; od < od1; ++od) {
        float* rows = out + ((od - od0) * staging_.rows * cout + co) * sw;  // row oh0's; rows cout * sw apart
        for (int64_t oh = oh0; oh < oh1; ++oh) {
          float* row = rows + (oh - oh0) * cout * sw;
          zero_run(row, x0);
          zero_run(row + x1, sw - x1);
          if (floats && !float_rows)
            copy_run(static_cast<const float*>(dst_.data) + dst_.element(n, grp * cout + co, od, oh, 0), x1 - x0,
                     row + x0);
          if (!floats && !halves)
            read_row_floats(dst_, math_, n, grp * cout + co, od, oh, 0, 1, x1 - x0, row + x0, conversions_);
        }
        if (halves && oh1 > oh0) {  // the plane's rows in one call
          const auto* from = static_cast<const uint16_t*>(dst_.data) + dst_.element(n, grp * cout + co, od, oh0, 0);
          conversions_->widen_rows(from, dst_.dtype == ACL_BF16, dst_.stride[3], 1, x1 - x0, oh1 - oh0, rows + x0,
                                   cout * sw);
        }
        if (float_rows && oh1 > oh0) {
          const auto* from = static_cast<const float*>(dst_.data) + dst_.element(n, grp * cout + co, od, oh0, 0);
          conversions_->copy_rows(from, dst_.stride[3], x1 - x0, oh1 - oh0, rows + x0, cout * sw);
        }
      }
    }
  }

  bool swapped_;    // a transposed layer's gradInput (swapped())
  ConvGeometry g_;  // the direct layer whose gradInput is computed (swapped: the flipped geometry)
  View5 dst_;       // its dY, read straight from the user's view (swapped: the source)
  View5 wei_;       // W: read from the user's view where LaneWeights converts it
  MathMode math_;
  int threads_;
  const RowKernels& kernels_;
  const Conversions16* conversions_;  // the plan's kit's
  DenseFloatOutput output_;
  BiasFloats bias_;  // the forward operators' bias, where the rows are stored in place
  RowStaging staging_;
  LaneWeights weights_;
  int64_t channel_tasks_ = 1, band_rows_ = 1, bands_ = 1, taps_ = 1;
  int64_t step_rows_ = 1;  // rows computed at a time where their taps are the same: 1, or 2 (InputRows::rows)
  WorkspaceLedger::Handle staged_ = -1, tile_ = -1, tap_offsets_ = -1;  // per thread
  // Whether each row's output lines are prefetched (into L2) while the row before it is computed, so
  // that its stores do not wait for them to come from memory: on AMD's cores; a burst of prefetches
  // stalls Intel's cores (small_group.cpp).
  bool prefetch_rows_;
};

// Dense layers (at least 16 channels per group in and out; transposed ones of stride 1), not 1x1 (whose GEMMs read
// their source in place, or for a stride past 1 compute only the positions it reaches), with rows and staged dY within
// their budgets.
Support supports(const ConvProblem& p, const CpuFeatures&) {
  if (swapped(p) && !flippable(p.geometry)) return refuse("not stride 1 with padding within the kernel");
  const ConvGeometry g = swapped(p) ? flipped_geometry(p.geometry) : p.geometry;
  // (The GEMM entries ahead of it in its lists take BF16 pair products and one row per plane where they
  // compute them faster: kernels/gemm/ahead_of_direct.h.)
  const Support fits = direct_rows_fit(g);
  if (!fits) return fits;
  if (RowStaging::floats(g, g.src_size[1]) * 4 > double(kStagingBudget)) return refuse("staged rows past the budget");
  return kSupported;
}

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<DirectInput>(p, builder);
}

}  // namespace

extern const ConvImpl kDirectBackwardData = {"direct", "direct", ConvPass::kBackwardData, supports, plan};
extern const ConvImpl kDirectForward = for_pass(kDirectBackwardData, ConvPass::kForward);

}  // namespace aclnn_cpu
