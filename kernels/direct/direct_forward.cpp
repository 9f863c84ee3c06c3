// A forward convolution (a transposed layer's gradInput; the forward operators' output of a direct
// layer) computed directly by the row kernels of direct_input.cpp (row_kernels.h, InputRows), any
// stride up to 4: each output row of a block of 32 output channels is a sum over the kernel taps that
// reach the source, and over the input channels, of a weight vector (16 output channels) times a
// source entry:
//   Y[co, od, oh, ow] = sum over taps (kd, kh, kw) reaching X, ci of W[co, ci, kd, kh, kw] * X[ci, id, ih, iw],
//   (id, ih, iw) = (od*sD - pD + kd*dD, oh*sH - pH + kh*dH, ow*sW - pW + kw*dW).
// Each task (sample, group, band of output rows of one plane) stages the source rows its band reads
// once (for every block of 32 output channels), each split into its sW column phases (column x at phase (x + pW) % sW,
// index (x + pW) / sW, zeros where x lies outside X), so that a tap reads its positions' columns as one run: output
// position j and tap kw read phase (kw*dW) % sW at index j + (kw*dW) / sW. Taps whose source row or plane lies in the
// padding are left out, and a tap's positions whose columns do (tap_first, tap_end). Each output is the blocked sum
// (kernels/common/blocked_sum.h) of its (tap, input channel) products in that order inside one task: the same bits for
// any thread count, AVX-512, AVX2 and aarch64.
#include <algorithm>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/common/runs.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/direct/lane_weights.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {

namespace {

constexpr int64_t kBlockChannels = 2 * kRowLanes;     // output channels per task
constexpr int64_t kStagingBudget = int64_t{4} << 20;  // bytes of a task's staged source rows, at most
// Bytes of a group's W at most: each task reads all of it for each output row (blocks of 32 output
// channels one after another), from a core's L2 where it fits there (past it, gemm_forward_windows'
// blocks of output channels keep their rows of W in cache).
constexpr int64_t kGroupWeightBytes = int64_t{1} << 20;

// How a task's source rows are staged: rows [ih0, ih0 + rows) of the planes its kernel depths read
// (one slot per kernel depth kd, plane od*sD - pD + kd*dD), channel ci, at
//   staged[((kd * rows + ih - ih0) * Cin + ci) * width + r * phase + m] = X[ci, id, ih, sW*m + r - pW]
// (zero outside X): the row's sW phases of `phase` entries each.
struct SourceStaging {
  int64_t planes = 1, rows = 1, phase = 1, width = 1;

  SourceStaging(const ConvGeometry& g, int64_t band_rows) {
    planes = g.kernel[0];
    rows = std::min(g.src_size[1], (band_rows - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1);
    phase = g.dst_size[2] + (g.kernel[2] - 1) * g.dilation[2] / g.stride[2];
    width = g.stride[2] * phase;
  }
  // Floats of a task's staged rows, in double (for the budget check, before the sizes are known to be
  // reasonable).
  static double floats(const ConvGeometry& g, int64_t band_rows) {
    const double rows = std::min(double(g.src_size[1]), double(band_rows - 1) * double(g.stride[1]) +
                                                            double(g.kernel[1] - 1) * double(g.dilation[1]) + 1);
    const double width = double(g.stride[2]) * (double(g.dst_size[2]) + double(g.kernel[2]) * double(g.dilation[2]));
    return double(g.kernel[0]) * rows * double(g.src_channels_per_group) * width;
  }
};

class DirectForward final : public ConvStep {
 public:
  DirectForward(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry),
        src_(p.src),
        math_(p.math),
        threads_(b.threads()),
        kernels_(b.cpu().kit->rows),
        conversions_(b.cpu().conversions),
        output_(p.grad_input, b, "gradInput.f32", true, result_bias(p), bias_added_in_place(p) != nullptr),
        bias_(bias_added_in_place(p), b, "direct.bias"),
        staging_(g_, 1) {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group;
    taps_ = g_.kernel_volume();
    weights_ = LaneWeights(p.wei, math_, {g_.groups, cout, cin, taps_, true, false}, b);
    channel_tasks_ = weights_.tasks_per_group();
    // Bands of rows of one output plane, for kTargetTasks tasks (each its band's source rows staged once:
    // tasks of blocks of channels would stage them again on each thread that takes one).
    const int64_t depth = g_.dst_size[0], height = g_.dst_size[1];
    const int64_t per_plane = std::clamp<int64_t>(ceil_div(pieces_for_tasks(g_.batch * g_.groups), depth), 1, height);
    band_rows_ = ceil_div(height, per_plane);
    bands_ = depth * ceil_div(height, band_rows_);
    staging_ = SourceStaging(g_, band_rows_);
    staged_ = b.book_scratch("direct.staged_source", staging_.planes * staging_.rows * cin * staging_.width,
                             sizeof(float), threads_);
    // A source that is not dense floats with unit column stride: each row read into floats first.
    floats_in_place_ = src_.dtype == ACL_FLOAT && math_ != MathMode::kFp16Inputs && src_.stride[4] == 1;
    if (!floats_in_place_) row_ = b.book_scratch("direct.source_row", g_.src_size[2], sizeof(float), threads_);
    // (and as many rows again: the rows of a view not stored as dense floats)
    tile_ = b.book_scratch("direct.row_result", 2 * kBlockChannels * g_.dst_size[2], sizeof(float), threads_);
    // (per tap: the source's offset, the weights', the first and the end of the positions inside the
    // source's columns)
    tap_offsets_ = b.book_scratch("direct.tap_offsets", 4 * taps_, sizeof(int64_t), threads_);
    b.need_float_inputs(false, weights_.wants_float_weights(), false);  // the source is staged from the user's view
  }

  int64_t tasks() const override { return g_.batch * g_.groups * bands_; }
  std::string detail() const override { return std::string("isa=") + isa_name(kernels_.isa); }

  int run(const Workspace& w, const StepInputs& in) const override {
    int status = weights_.pack(w, in.f32.wei, threads_);
    if (status != ACLNN_SUCCESS) return status;
    float* output = output_.data(w);
    bias_.fill(w);
    status = run_tasks(tasks(), threads_, "direct forward", [&](int64_t t) {
      const int64_t band = t % bands_, n = t / bands_ % g_.batch, grp = t / (bands_ * g_.batch);
      run_task(w, output, n, grp, band);
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, true);
    return status;
  }

 private:
  // One task: rows [oh0, oh1) of output plane od, sample n, group grp; per row its taps listed once, then
  // each block of 32 output channels (each block's weights read from L2 for each row).
  void run_task(const Workspace& w, float* output, int64_t n, int64_t grp, int64_t band) const {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group;
    const int64_t height = g_.dst_size[1], width = g_.dst_size[2], per_plane = bands_ / g_.dst_size[0];
    const int64_t od = band / per_plane, oh0 = band % per_plane * band_rows_, oh1 = std::min(height, oh0 + band_rows_);
    const int64_t ih0 = std::max<int64_t>(0, oh0 * g_.stride[1] - g_.pad[1]);
    const int64_t ih1 =
        std::min(g_.src_size[1], (oh1 - 1) * g_.stride[1] - g_.pad[1] + (g_.kernel[1] - 1) * g_.dilation[1] + 1);
    const int thread = thread_index();
    float* staged = w.at<float>(staged_, thread);
    stage_rows(w, staged, n, grp, od, ih0, ih1);
    int64_t* source_tap = w.at<int64_t>(tap_offsets_, thread);
    int64_t* weight_tap = source_tap + taps_;
    int64_t* tap_first = source_tap + 2 * taps_;
    int64_t* tap_end = source_tap + 3 * taps_;
    float* tile = w.at<float>(tile_, thread);
    float* rows = tile + kBlockChannels * width;  // the rows of a view not stored as dense floats
    const int64_t plane = g_.dst_plane(), sw = g_.stride[2], pw = g_.pad[2];
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      // The taps whose source plane and row lie inside X and that reach some column of it, in (kd, kh,
      // kw) order.
      int64_t taps = 0;
      for (int64_t kd = 0; kd < g_.kernel[0]; ++kd) {
        const int64_t id = od * g_.stride[0] - g_.pad[0] + kd * g_.dilation[0];
        if (id < 0 || id >= g_.src_size[0]) continue;
        for (int64_t kh = 0; kh < g_.kernel[1]; ++kh) {
          const int64_t ih = oh * g_.stride[1] - g_.pad[1] + kh * g_.dilation[1];
          if (ih < 0 || ih >= g_.src_size[1]) continue;
          const int64_t row = (kd * staging_.rows + ih - ih0) * cin * staging_.width;
          for (int64_t kw = 0; kw < g_.kernel[2]; ++kw) {
            // position j reads column sW*j + kw*dW - pW: inside X for j in [lo, hi)
            const int64_t reach = kw * g_.dilation[2];
            const int64_t lo = pw > reach ? ceil_div(pw - reach, sw) : 0;
            const int64_t hi =
                g_.src_size[2] - 1 + pw - reach >= 0 ? std::min(width, (g_.src_size[2] - 1 + pw - reach) / sw + 1) : 0;
            if (lo >= hi) continue;
            source_tap[taps] = row + reach % sw * staging_.phase + reach / sw;
            tap_first[taps] = lo;
            tap_end[taps] = hi;
            weight_tap[taps++] = ((kd * g_.kernel[1] + kh) * g_.kernel[2] + kw) * cin * kRowLanes;
          }
        }
      }
      const int64_t first = (od * height + oh) * width;
      for (int64_t ct = 0; ct < channel_tasks_; ++ct) {
        const int64_t co0 = ct * kBlockChannels, channels = std::min(kBlockChannels, cout - co0);
        // tile (blocks x positions x 16) = the row's 32 output channels
        const InputRows job{staged,
                            source_tap,
                            weight_tap,
                            tap_first,
                            tap_end,
                            taps,
                            cin,
                            staging_.width,
                            weights_.blocks(w, grp, ct),
                            weights_.block_floats(),
                            ceil_div(channels, kRowLanes),
                            tile,
                            width};
        kernels_.input_rows(job);
        // Channel i's row: from the parts buffer, or Y's row in place; the channels' rows equally apart.
        if (output_.stores_parts()) {
          store_lane_tile(tile, width, channels, 1, rows, width);
          output_.store_rows(rows, width, channels, n, grp * cout + co0, first, width);
        } else {
          store_lane_tile(tile, width, channels, 1, output + (n * g_.groups * cout + grp * cout + co0) * plane + first,
                          plane, bias_.from(w, grp * cout + co0));
        }
      }
    }
  }

  // Stages source rows [ih0, ih1) of the planes output plane od reads, sample n, group grp (SourceStaging's
  // layout): each row's phases, the entries inside X copied (every sW-th column from the phase's first),
  // the rest zero.
  void stage_rows(const Workspace& w, float* out, int64_t n, int64_t grp, int64_t od, int64_t ih0, int64_t ih1) const {
    const int64_t cin = g_.src_channels_per_group, src_w = g_.src_size[2], sw = g_.stride[2], pw = g_.pad[2];
    float* converted = floats_in_place_ ? nullptr : w.at<float>(row_, thread_index());
    // Channel by channel (a channel's rows of a plane are one run of X, read in order), row by row, the
    // rows of the channel kPrefetchChannels ahead asked for meanwhile (a band's rows of one channel, a few
    // KiB, are a stream too short for the hardware prefetchers to get ahead of).
    constexpr int64_t kPrefetchChannels = 4;
    // Stride 2, float rows of unit stride: each row split into its even and odd columns in one pass (the two
    // phases' entries inside X; the rest of each phase, a few entries at its ends, zeroed here). Column x's phase
    // is (x + pW) % 2, its entry (x + pW) / 2: the even columns' first entry pW / 2 in phase pW % 2, the odd
    // ones' (pW + 1) / 2 in the other; the columns [0, columns) are staged.
    const bool split = floats_in_place_ && sw == 2 && conversions_ != nullptr;
    const int64_t columns = std::max<int64_t>(0, std::min(src_w, 2 * staging_.phase - pw));
    const int64_t even_phase = pw % 2, even_first = std::min(staging_.phase, pw / 2), even_count = (columns + 1) / 2;
    const int64_t odd_first = std::min(staging_.phase, (pw + 1) / 2), odd_count = columns / 2;
    for (int64_t ci = 0; ci < cin; ++ci) {
      for (int64_t kd = 0; kd < g_.kernel[0]; ++kd) {
        const int64_t id = od * g_.stride[0] - g_.pad[0] + kd * g_.dilation[0];
        if (id < 0 || id >= g_.src_size[0]) continue;  // (a plane in the padding: its taps are left out)
        if (floats_in_place_ && ci + kPrefetchChannels < cin && ih1 > ih0) {
          prefetch_rows<3>(
              static_cast<const float*>(src_.data) + src_.element(n, grp * cin + ci + kPrefetchChannels, id, ih0, 0),
              ih1 - ih0, src_w, src_.stride[3]);
        }
        if (split) {
          float* first = out + ((kd * staging_.rows) * cin + ci) * staging_.width;  // row ih0's
          float* even = first + even_phase * staging_.phase;
          float* odd = first + (1 - even_phase) * staging_.phase;
          for (int64_t ih = ih0; ih < ih1; ++ih) {
            const int64_t row = (ih - ih0) * cin * staging_.width;
            zero_run(even + row, even_first);
            zero_run(even + row + even_first + even_count, staging_.phase - even_first - even_count);
            zero_run(odd + row, odd_first);
            zero_run(odd + row + odd_first + odd_count, staging_.phase - odd_first - odd_count);
          }
          if (columns > 0 && ih1 > ih0) {
            conversions_->split_rows(static_cast<const float*>(src_.data) + src_.element(n, grp * cin + ci, id, ih0, 0),
                                     src_.stride[3], columns, ih1 - ih0, even + even_first, odd + odd_first,
                                     cin * staging_.width);
          }
          continue;
        }
        for (int64_t ih = ih0; ih < ih1; ++ih) {
          const int64_t c = grp * cin + ci;
          const float* from = nullptr;
          if (floats_in_place_) {
            from = static_cast<const float*>(src_.data) + src_.element(n, c, id, ih, 0);
          } else {
            read_row_floats(src_, math_, n, c, id, ih, 0, 1, src_w, converted, conversions_);
            from = converted;
          }
          float* row = out + ((kd * staging_.rows + ih - ih0) * cin + ci) * staging_.width;
          for (int64_t r = 0; r < sw; ++r) {
            // phase r's entry m holds column sW*m + r - pW: inside X for m in [m0, m1)
            float* at = row + r * staging_.phase;
            const int64_t m0 = std::min(staging_.phase, pw > r ? ceil_div(pw - r, sw) : 0);
            const int64_t m1 =
                std::max(m0, std::min(staging_.phase, src_w - 1 + pw - r >= 0 ? (src_w - 1 + pw - r) / sw + 1 : 0));
            zero_run(at, m0);
            zero_run(at + m1, staging_.phase - m1);
            if (m1 == m0) continue;
            const float* column = from + sw * m0 + r - pw;
            if (sw == 1) {
              copy_run(column, m1 - m0, at + m0);
            } else if (sw == 2) {
              copy_run_even(column, m1 - m0, at + m0);
            } else {
              for (int64_t m = m0; m < m1; ++m) at[m] = column[sw * (m - m0)];
            }
          }
        }
      }
    }
  }

  ConvGeometry g_;
  View5 src_;  // X, read straight from the user's view
  MathMode math_;
  int threads_;
  const RowKernels& kernels_;
  const Conversions16* conversions_;  // the plan's kit's
  DenseFloatOutput output_;
  BiasFloats bias_;  // the forward operators' bias, where the rows are stored in place
  SourceStaging staging_;
  LaneWeights weights_;
  bool floats_in_place_ = false;
  int64_t channel_tasks_ = 1, band_rows_ = 1, bands_ = 1, taps_ = 1;
  WorkspaceLedger::Handle staged_ = -1, row_ = -1, tile_ = -1, tap_offsets_ = -1;  // per thread
};

// Forward convolutions with at least 16 channels per group in and out, not 1x1, strides up to 4, rows and
// staged source within their budgets. (The GEMM entries ahead of it in its list take BF16 pair products and
// one row per plane where they compute them faster: kernels/gemm/ahead_of_direct.h.)
Support supports(const ConvProblem& p, const CpuFeatures&) {
  const ConvGeometry& g = p.geometry;
  // (Stride 1 with padding within the kernel: `direct` computes it as the gradInput of its flipped layer,
  // its tasks' blocks of channels reading a block of W each, faster on small planes: r50_s4 1.6x.)
  if (flippable(g)) return refuse("stride 1 with padding within the kernel (direct takes it)");
  const Support fits = direct_rows_fit(g);
  if (!fits) return fits;
  if (double(g.src_channels_per_group) * double(g.dst_channels_per_group) * double(g.kernel_volume()) * 4 >
      double(kGroupWeightBytes))
    return refuse("a group's weights past the cache budget");
  if (SourceStaging::floats(g, g.dst_size[1]) * 4 > double(kStagingBudget))
    return refuse("staged rows past the budget");
  return kSupported;
}

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<DirectForward>(p, builder);
}

}  // namespace

extern const ConvImpl kDirectForwardForward = {"direct_forward", "direct", ConvPass::kForward, supports, plan};

}  // namespace aclnn_cpu
