// Depthwise convolution (one input and one output channel per group) computed directly, plane by
// plane: no column matrix and no GEMM, whose products would be 1 x K x positions. Each tap of the
// kernel is a row operation over the output positions whose source lies inside:
//   gradInput, direct:     dX[i*s + shift] += w[k] * dY[i]  (a scaled row added, strided by s)
//   gradInput, transposed: Y[i] += w[k] * X[i*s + shift]   (its input gradient is a forward conv)
//   gradWeight:            dW[k] = sum over samples and rows of dY[i] * X[i*s + shift]
// Output rows outermost, so each plane's rows are reused from L1 by all taps.
// Portable C++ that compilers vectorise for the build's baseline (SSE2 on x86-64, NEON on aarch64),
// so every x86-64 machine gives the same bits. Each output element is summed inside one task in a
// fixed order (taps in order; dot products in 16 fixed lanes added pairwise), so results do not
// depend on the thread count either.
#include <algorithm>
#include <memory>
#include <string>

#include "kernels/common/im2col.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/kits/row_kernels.h"

namespace aclnn_cpu {
namespace {

// For each output row of one plane, then each tap k of the kernel in order: row(k, src_offset,
// dst_offset, count) for the part of the row whose source lies inside (entry i at dst_offset + i
// and src_offset + i*s). The column-matrix walker of im2col.h with one channel: its rows are the
// taps, its columns the output positions, one output row at a time (so the plane's rows are
// reused from L1 by all taps, and every tap still sees its rows in order).
template <typename Row>
void for_each_row_tap(const ConvGeometry& g, Row row) {
  const int64_t out_w = g.dst_size[2], rows = g.dst_plane() / std::max<int64_t>(1, out_w);
  for (int64_t r = 0; r < rows; ++r) {
    for_each_run(
        g, 0, g.kernel_volume(), r * out_w, (r + 1) * out_w, [](int64_t, int64_t, int64_t) {},
        [&row](int64_t k, int64_t o, int64_t from, int64_t, int64_t count) { row(k, from, o, count); });
  }
}

constexpr int kLanes = kRowLanes;  // sum_lanes adds them up

// lanes[i % 16] += a[i] * b[i * step] for i < count (the same order whatever the step).
void dot_into_lanes(const float* __restrict a, const float* __restrict b, int64_t step, int64_t count,
                    float* __restrict lanes) {
  int64_t i = 0;
  if (step == 1) {
    for (; i + kLanes <= count; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * b[i + l];
    }
  } else {
    for (; i + kLanes <= count; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * b[(i + l) * step];
    }
  }
  for (int l = 0; i < count; ++i, ++l) lanes[l] += a[i] * b[i * step];
}

class DepthwiseInput final : public ConvStep {
 public:
  DepthwiseInput(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry),
        threads_(b.threads()),
        forward_(p.input_grad == InputGrad::kForward),
        output_(p.grad_input, b, "gradInput.f32", false, result_bias(p)) {
    if (forward_) {
      b.need_float_inputs(true, true, false);
    } else {
      b.need_float_inputs(false, true, true);
    }
  }
  int64_t tasks() const override { return g_.batch * g_.groups; }
  std::string detail() const override { return forward_ ? "forward" : ""; }

  int run(const Workspace& w, const StepInputs& in) const override {
    float* out = output_.data(w);
    const int64_t src_plane = g_.src_plane(), dst_plane = g_.dst_plane(), taps = g_.kernel_volume();
    const int64_t sw = g_.stride[2];
    const int status = run_tasks(tasks(), threads_, "depthwise gradInput", [&](int64_t t) {  // t = (sample, channel)
      const float* wei = in.f32.wei + t % g_.groups * taps;
      if (forward_) {  // Y (dst plane) = sum over taps of w[k] * X rows
        const float* x = in.f32.src + t * src_plane;
        float* y = out + t * dst_plane;
        std::fill_n(y, dst_plane, 0.0f);
        for_each_row_tap(g_, [=](int64_t k, int64_t s, int64_t d, int64_t count) {
          const float scale = wei[k];
          float* __restrict to = y + d;
          const float* __restrict from = x + s;
          for (int64_t i = 0; i < count; ++i) to[i] += scale * from[i * sw];
        });
        return;
      }
      const float* dy = in.f32.dst + t * dst_plane;  // dX (src plane) = scatter of w[k] * dY rows
      float* dx = out + t * src_plane;
      std::fill_n(dx, src_plane, 0.0f);
      for_each_row_tap(g_, [=](int64_t k, int64_t s, int64_t d, int64_t count) {
        const float scale = wei[k];
        float* __restrict to = dx + s;
        const float* __restrict from = dy + d;
        if (sw == 1) {
          for (int64_t i = 0; i < count; ++i) to[i] += scale * from[i];
        } else {
          for (int64_t i = 0; i < count; ++i) to[i * sw] += scale * from[i];
        }
      });
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_);
    return status;
  }

 private:
  ConvGeometry g_;
  int threads_;
  bool forward_;
  DenseFloatOutput output_;
};

class DepthwiseWeight final : public ConvStep {
 public:
  DepthwiseWeight(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry), threads_(b.threads()), output_(p.grad_weight, b, "gradWeight.f32") {
    // (A kernel of more than 2^58 taps cannot be booked: the ledger reports it as too large.)
    const int64_t taps = g_.kernel_volume();
    lanes_ = b.book_scratch("depthwise.lanes",
                            product_within(taps, kLanes, int64_t{1} << 58) ? uint64_t(taps * kLanes) : UINT64_MAX,
                            sizeof(float), threads_);
    b.need_float_inputs(true, false, true);
  }
  int64_t tasks() const override { return g_.groups; }

  // Per channel: every tap's dot product over samples and output rows, in that order, the taps of
  // one output row one after the other (its dY row and the source rows stay in L1).
  int run(const Workspace& w, const StepInputs& in) const override {
    float* grad_weight = output_.data(w);
    const int64_t src_plane = g_.src_plane(), dst_plane = g_.dst_plane(), taps = g_.kernel_volume();
    const int status = run_tasks(tasks(), threads_, "depthwise gradWeight", [&](int64_t c) {
      float* lanes = w.at<float>(lanes_, thread_index());  // 16 lanes per tap
      std::fill_n(lanes, taps * kLanes, 0.0f);
      for (int64_t n = 0; n < g_.batch; ++n) {
        const float* x = in.f32.src + (n * g_.groups + c) * src_plane;
        const float* dy = in.f32.dst + (n * g_.groups + c) * dst_plane;
        for_each_row_tap(g_, [&](int64_t k, int64_t s, int64_t d, int64_t count) {
          dot_into_lanes(dy + d, x + s, g_.stride[2], count, lanes + k * kLanes);
        });
      }
      for (int64_t k = 0; k < taps; ++k) grad_weight[c * taps + k] = sum_lanes(lanes + k * kLanes);  // dW: (C, 1, K)
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_);
    return status;
  }

 private:
  ConvGeometry g_;
  int threads_;
  DenseFloatOutput output_;
  WorkspaceLedger::Handle lanes_ = -1;  // per thread
};

// One input and one output channel per group, any dtype, layout and geometry.
Support supports(const ConvProblem& p, const CpuFeatures&) {
  if (p.geometry.src_channels_per_group != 1 || p.geometry.dst_channels_per_group != 1)
    return refuse("not one channel per group");
  return kSupported;
}

std::unique_ptr<ConvStep> plan_input(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<DepthwiseInput>(p, builder);
}
std::unique_ptr<ConvStep> plan_weight(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<DepthwiseWeight>(p, builder);
}

}  // namespace

extern const ConvImpl kDepthwiseBackwardData = {"depthwise", "depthwise", ConvPass::kBackwardData, supports,
                                                plan_input};
extern const ConvImpl kDepthwiseForward = for_pass(kDepthwiseBackwardData, ConvPass::kForward);
extern const ConvImpl kDepthwiseBackwardWeight = {"depthwise", "depthwise", ConvPass::kBackwardWeight, supports,
                                                  plan_weight};

}  // namespace aclnn_cpu
