// Channels-last 1-D convolutions (ConvTbc's T x B x C tensors, and any NWC view): with unit channel
// stride, each sample's source and gradOutput are (positions x channels) matrices as they lie in
// memory, and each kernel tap is one GEMM on a row-shifted view of them. Float tensors are read and
// written in place: no dense copies, no column matrix. Stride 1, one group, any padding and dilation:
//   gradInput:  dX[s, :] = sum over taps k (in order) of dY[s + p - k*d, :] * W_k   (rows inside dY only)
//   gradWeight: W_k's gradient = sum over samples (in order) of dY^T * X[t - p + k*d, :]
// with W_k = W[:, :, k] (Cout x Cin). Every entry is one chain of fused multiply-adds in a fixed
// order inside one task, so results do not depend on the thread count.
#include <algorithm>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/gemm/sgemm.h"
#include "kernels/gemm/tasks.h"
#include "kernels/gemm/tiling.h"
#include "kernels/plan.h"

namespace aclnn_cpu {
namespace {

// Tasks are cut for the thread count (kTasksPerThread per thread), not for a fixed count as elsewhere:
// every entry's chain of multiply-adds runs over the same taps, samples and positions in the same
// order however its rows and positions are blocked, so the blocking changes no bit, and fewer,
// larger products pack each operand fewer times.
constexpr int64_t kTasksPerThread = 3;
constexpr int64_t kMinWeightRows = 16;                // rows of a weight-gradient block, at least
constexpr int64_t kPackedBudget = int64_t{32} << 20;  // bytes of right operands packed once, at most

// A (sample, position, channel) view with unit channel stride, as float data.
struct Rows {
  float* data;
  int64_t sample, position;  // strides
  explicit Rows(const View5& v) : data(dense_float_data(v)), sample(v.stride[0]), position(v.stride[4]) {}
  float* at(int64_t n, int64_t pos) const { return data + n * sample + pos * position; }
};

bool rows_view(const View5& v, bool output) {
  return v.dtype == ACL_FLOAT && (v.shape[1] == 1 || v.stride[1] == 1) && v.stride[0] >= 0 && v.stride[4] >= 0 &&
         !(output && may_overlap(v));
}

// One tap's (Cout x Cin) slice of a (Cout, Cin, 1, 1, K) view as a matrix operand, when one of its
// two strides is 1.
bool matrix_view(const View5& v) {
  return v.dtype == ACL_FLOAT && (v.shape[0] == 1 || v.shape[1] == 1 || v.stride[0] == 1 || v.stride[1] == 1) &&
         v.stride[0] >= 0 && v.stride[1] >= 0 && v.stride[4] >= 0;
}
bool unit_out(const View5& v) { return v.shape[0] == 1 || v.stride[0] == 1; }  // Cout is the unit-stride dim
MatrixRef tap_matrix(const View5& v, const float* data, int64_t k) {           // (Cout x Cin)
  const float* tap = data + k * v.stride[4];
  return unit_out(v) ? MatrixRef{tap, v.stride[1], true} : MatrixRef{tap, v.stride[0], false};
}

// 1-D along W, one group, stride 1, full-precision math.
bool geometry_fits(const ConvProblem& p) {
  const ConvGeometry& g = p.geometry;
  for (int a = 0; a < 2; ++a) {
    if (g.src_size[a] != 1 || g.dst_size[a] != 1 || g.kernel[a] != 1) return false;
  }
  return g.groups == 1 && g.stride[2] == 1 && p.math == MathMode::kFull;
}

// Per (sample, tile of positions): the tile's dX rows zeroed, then each tap's product added. Each
// tap's W_k is packed once per execution (every task multiplies by it).
class ChannelsLastInput final : public ConvStep {
 public:
  ChannelsLastInput(const ConvProblem& p, PlanBuilder& b) : p_(p), threads_(b.threads()) {
    const ConvGeometry& g = p.geometry;
    tile_ = std::max<int64_t>(
        1, ceil_div(g.src_size[2], ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, g.batch))));
    tiles_ = ceil_div(g.src_size[2], tile_);
    blocking_ = plan_gemm_blocking(tile_, g.src_channels_per_group, g.dst_channels_per_group);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    tap_floats_ = packed_right_floats(blocking_, g.src_channels_per_group, g.dst_channels_per_group);
    const int64_t taps = g.kernel[2], huge = int64_t{1} << 58;
    packed_ = b.book_scratch("channels_last.packed_weights",
                             product_within(taps, tap_floats_, huge) ? uint64_t(taps * tap_floats_) : UINT64_MAX,
                             sizeof(float));
  }
  int64_t tasks() const override { return p_.geometry.batch * tiles_; }
  std::string detail() const override { return isa_detail(blocking_); }

  int run(const Workspace& w, const StepInputs&) const override {
    const ConvGeometry& g = p_.geometry;
    const Rows dy(p_.dst), dx(p_.grad_input);
    const float* wei = dense_float_data(p_.wei);
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group;
    float* packed = w.at<float>(packed_);
    const int status = run_tasks(g.kernel[2], threads_, "channels-last gradInput", [&](int64_t k) {
      pack_right(blocking_, cout, cin, tap_matrix(p_.wei, wei, k), packed + k * tap_floats_);  // W_k (Cout x Cin)
    });
    if (status != ACLNN_SUCCESS) return status;
    return run_tasks(tasks(), threads_, "channels-last gradInput", [&](int64_t t) {
      const int64_t n = t / tiles_, s0 = t % tiles_ * tile_, s1 = std::min(g.src_size[2], s0 + tile_);
      for (int64_t s = s0; s < s1; ++s) std::fill_n(dx.at(n, s), cin, 0.0f);
      float* pack = w.at<float>(pack_, thread_index());
      for (int64_t k = 0; k < g.kernel[2]; ++k) {
        const int64_t shift = g.pad[2] - k * g.dilation[2];  // dY row of dX row s: s + shift
        const int64_t first = std::max(s0, -shift), last = std::min(s1, g.dst_size[2] - shift);
        if (first >= last) continue;
        // dX[first:last, :] (rows x Cin) += dY[first+shift : last+shift, :] (rows x Cout) * W_k (Cout x Cin)
        sgemm(blocking_, pack, last - first, cin, cout, MatrixRef{dy.at(n, first + shift), dy.position, false},
              PackedRight{packed + k * tap_floats_, cout}, true, dx.at(n, first), dx.position);
      }
    });
  }

 private:
  ConvProblem p_;
  int threads_;
  int64_t tile_ = 1, tiles_ = 1, tap_floats_ = 0;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;    // per thread
  WorkspaceLedger::Handle packed_ = -1;  // each tap's W_k as a PackedRight
};

// Per (tap, block of result rows): the block's products over every sample, in sample order. The
// result is W_k's gradient (Cout x Cin) or its transpose (Cin x Cout), whichever grad_weight's
// strides store row-major. The right operand (dY, or X) of each sample is packed once per execution
// when it fits kPackedBudget (every tap and block multiplies by a depth range of it).
class ChannelsLastWeight final : public ConvStep {
 public:
  ChannelsLastWeight(const ConvProblem& p, PlanBuilder& b) : p_(p), threads_(b.threads()) {
    const ConvGeometry& g = p.geometry;
    transposed_ = unit_out(p.grad_weight);
    rows_ = transposed_ ? g.src_channels_per_group : g.dst_channels_per_group;
    cols_ = transposed_ ? g.dst_channels_per_group : g.src_channels_per_group;
    const int64_t wanted = ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, g.kernel[2]));
    block_ = std::max<int64_t>(1, std::min(rows_, std::max(kMinWeightRows, ceil_div(rows_, wanted))));
    blocks_ = ceil_div(rows_, block_);
    blocking_ = plan_gemm_blocking(block_, cols_, g.dst_size[2]);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    depth_ = transposed_ ? g.dst_size[2] : g.src_size[2];  // positions of the packed operand
    sample_floats_ = packed_right_floats(blocking_, cols_, depth_);
    if (product_within(g.batch, sample_floats_, kPackedBudget / 4)) {
      packed_ = b.book_scratch("channels_last.packed_operand", g.batch * sample_floats_, sizeof(float));
    }
  }
  int64_t tasks() const override { return p_.geometry.kernel[2] * blocks_; }
  std::string detail() const override { return isa_detail(blocking_) + (transposed_ ? ":transposed" : ""); }

  int run(const Workspace& w, const StepInputs&) const override {
    const ConvGeometry& g = p_.geometry;
    const Rows x(p_.src), dy(p_.dst);
    const View5& out = p_.grad_weight;
    float* grad_weight = dense_float_data(out);
    const int64_t ldc = transposed_ ? out.stride[1] : out.stride[0];
    float* packed = packed_ >= 0 ? w.at<float>(packed_) : nullptr;
    if (packed != nullptr) {  // each sample's dY (T' x Cout) or X (T x Cin)
      const int status = run_tasks(g.batch, threads_, "channels-last gradWeight", [&](int64_t n) {
        const Rows& m = transposed_ ? dy : x;
        pack_right(blocking_, depth_, cols_, MatrixRef{m.at(n, 0), m.position, false}, packed + n * sample_floats_);
      });
      if (status != ACLNN_SUCCESS) return status;
    }
    return run_tasks(tasks(), threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t k = t / blocks_, r0 = t % blocks_ * block_, r1 = std::min(rows_, r0 + block_);
      float* c = grad_weight + k * out.stride[4] + r0 * ldc;
      float* pack = w.at<float>(pack_, thread_index());
      const int64_t shift = k * g.dilation[2] - g.pad[2];  // source row of dY row t: t + shift
      const int64_t first = std::max<int64_t>(0, -shift), last = std::min(g.dst_size[2], g.src_size[2] - shift);
      bool written = false;
      for (int64_t n = 0; n < g.batch && first < last; ++n, written = true) {
        // transposed: C (rows x Cout) += X[first+shift : last+shift, r0:r1]^T (rows x T') * dY[first:last, :] (T' x
        // Cout) else:       C (rows x Cin)  += dY[first:last, r0:r1]^T (rows x T') * X[first+shift : last+shift, :] (T'
        // x Cin)
        const MatrixRef xs{x.at(n, first + shift), x.position, transposed_};
        const MatrixRef ds{dy.at(n, first), dy.position, !transposed_};
        const MatrixRef a = transposed_ ? xs : ds, bm = transposed_ ? ds : xs;
        const MatrixRef rows{a.data + r0, a.ld, true};
        if (packed != nullptr) {
          const PackedRight right{packed + n * sample_floats_, depth_, transposed_ ? first : first + shift};
          sgemm(blocking_, pack, r1 - r0, cols_, last - first, rows, right, written, c, ldc);
        } else {
          sgemm(blocking_, pack, r1 - r0, cols_, last - first, rows, bm, written, c, ldc);
        }
      }
      if (!written) {  // no sample, or the tap never meets the source
        for (int64_t r = 0; r < r1 - r0; ++r) std::fill_n(c + r * ldc, cols_, 0.0f);
      }
    });
  }

 private:
  ConvProblem p_;
  int threads_;
  bool transposed_ = false;
  int64_t rows_ = 0, cols_ = 0, block_ = 1, blocks_ = 1, depth_ = 0, sample_floats_ = 0;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;    // per thread
  WorkspaceLedger::Handle packed_ = -1;  // each sample's right operand as a PackedRight, or none
};

// (Empty tensors, whose data may be null, are left to `gemm`.)
bool supports_input(const ConvProblem& p) {
  return p.dst.numel() > 0 && p.wei.numel() > 0 && p.grad_input.numel() > 0 &&
         p.input_grad == InputGrad::kBackwardData && geometry_fits(p) && rows_view(p.dst, false) &&
         rows_view(p.grad_input, true) && matrix_view(p.wei);
}
bool supports_weight(const ConvProblem& p) {
  const View5& out = p.grad_weight;
  const bool stored = out.shape[0] == 1 || out.shape[1] == 1 || out.stride[0] == 1 || out.stride[1] == 1;
  return p.src.numel() > 0 && p.dst.numel() > 0 && out.numel() > 0 && geometry_fits(p) && rows_view(p.src, false) &&
         rows_view(p.dst, false) && out.dtype == ACL_FLOAT && stored && !may_overlap(out);
}

std::unique_ptr<ConvStep> plan_input(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<ChannelsLastInput>(p, builder);
}
std::unique_ptr<ConvStep> plan_weight(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<ChannelsLastWeight>(p, builder);
}

}  // namespace

extern const ConvImpl kChannelsLastInputGrad = {"channels_last", Gradient::kInput, supports_input, plan_input};
extern const ConvImpl kChannelsLastWeightGrad = {"channels_last", Gradient::kWeight, supports_weight, plan_weight};

}  // namespace aclnn_cpu
