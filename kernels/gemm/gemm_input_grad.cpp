// gradInput by GEMMs: col2im after W^T dY for a direct convolution, im2col then W cols for a
// transposed one (whose input gradient is a forward convolution). Float accumulation, as on the
// NPU's cube unit.
#include <cstring>
#include <memory>
#include <string>

#include "kernels/gemm/im2col.h"
#include "kernels/gemm/sgemm.h"
#include "kernels/gemm/tasks.h"
#include "kernels/gemm/tiling.h"
#include "kernels/plan.h"

namespace aclnn_cpu {
namespace {

// Per (sample, group, block of input channels), over output-position tiles:
// cols = W^T dY, then col2im-add into the dense float result.
class GemmBackwardData final : public ConvStep {
 public:
  GemmBackwardData(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry), s_(p.geometry), threads_(b.threads()), output_(p.grad_input, b, "gradInput.f32") {
    // Input channels per task: blocks of a slice's channels until there are kTargetTasks tasks
    // (whole slices when there are that many).
    const int64_t slices = s_.n * s_.groups;
    block_ = std::max<int64_t>(1, s_.cin / ceil_div(kTargetTasks, std::max<int64_t>(1, slices)));
    blocks_ = ceil_div(s_.cin, block_);
    const int64_t max_rows = block_ * s_.kernel_volume;
    tile_ = s_.tile(max_rows);
    blocking_ = plan_gemm_blocking(max_rows, tile_, s_.cout);
    if (!columns_are_source(g_)) cols_ = b.book_scratch("gemm.cols", max_rows * tile_, sizeof(float), threads_);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    b.need_float_inputs(false, true, true);
  }

  int64_t tasks() const override { return s_.n * s_.groups * blocks_; }
  std::string detail() const override { return std::string("isa=") + isa_name(blocking_.isa); }

  int run(const Workspace& w, const StepInputs& in) const override {
    float* grad_input = output_.data(w);
    const int status = run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t n = t / (s_.groups * blocks_), grp = t / blocks_ % s_.groups, c0 = t % blocks_ * block_;
      const int64_t c1 = std::min(s_.cin, c0 + block_);
      float* dx = grad_input + (n * s_.groups + grp) * s_.cin * s_.src_plane;  // the group's slice
      const float* wei = in.f32.wei + grp * s_.cout * s_.rows();
      const float* dy = in.f32.dst + (n * s_.groups + grp) * s_.cout * s_.dst_plane;
      const bool in_place = cols_ < 0;  // col2im is the identity: the GEMM writes dx
      if (!in_place)
        std::memset(dx + c0 * s_.src_plane, 0, static_cast<size_t>((c1 - c0) * s_.src_plane) * sizeof(float));
      float* pack = w.at<float>(pack_, thread_index());
      for (int64_t o0 = 0; o0 < s_.dst_plane; o0 += tile_) {
        const int64_t o1 = std::min(s_.dst_plane, o0 + tile_);
        float* cols = in_place ? dx + c0 * s_.src_plane + o0 : w.at<float>(cols_, thread_index());
        // cols ((c1-c0)*K x tile) = W_g[:, c0*K : c1*K]^T ((c1-c0)*K x Cout_g) * dY[:, o0:o1] (Cout_g x tile)
        sgemm(blocking_, pack, (c1 - c0) * s_.kernel_volume, o1 - o0, s_.cout,
              {wei + c0 * s_.kernel_volume, s_.rows(), true}, {dy + o0, s_.dst_plane, false}, false, cols,
              in_place ? s_.src_plane : o1 - o0);
        if (!in_place) col2im_add(g_, cols, c0 * s_.kernel_volume, c1 * s_.kernel_volume, o0, o1, dx);
      }
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_);
    return status;
  }

 private:
  ConvGeometry g_;
  Shape s_;
  int threads_;
  DenseFloatOutput output_;
  int64_t block_ = 1, blocks_ = 1, tile_ = 1;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle cols_ = -1, pack_ = -1;  // per thread
};

// Per (sample, group, output tile): cols = im2col(src), Y = W cols. Tiles never overlap in Y.
class GemmForward final : public ConvStep {
 public:
  GemmForward(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry), s_(p.geometry), threads_(b.threads()), output_(p.grad_input, b, "gradInput.f32") {
    // Output tiles within the column budget, and small enough for kTargetTasks tasks.
    const int64_t slices = s_.n * s_.groups;
    tile_ = std::min(s_.tile(s_.rows()),
                     std::max<int64_t>(1, s_.dst_plane / ceil_div(kTargetTasks, std::max<int64_t>(1, slices))));
    tiles_ = ceil_div(s_.dst_plane, tile_);
    blocking_ = plan_gemm_blocking(s_.cout, tile_, s_.rows());
    if (!columns_are_source(g_)) cols_ = b.book_scratch("gemm.cols", s_.rows() * tile_, sizeof(float), threads_);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    b.need_float_inputs(true, true, false);
  }

  int64_t tasks() const override { return s_.n * s_.groups * tiles_; }
  std::string detail() const override { return std::string("isa=") + isa_name(blocking_.isa); }

  int run(const Workspace& w, const StepInputs& in) const override {
    float* grad_input = output_.data(w);
    const int status = run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t n = t / (s_.groups * tiles_), grp = t / tiles_ % s_.groups, o0 = t % tiles_ * tile_;
      const int64_t o1 = std::min(s_.dst_plane, o0 + tile_);
      const float* x = in.f32.src + (n * s_.groups + grp) * s_.cin * s_.src_plane;
      MatrixRef cols{x + o0, s_.src_plane, false};  // 1x1: the source is the column matrix
      if (cols_ >= 0) {
        float* scratch = w.at<float>(cols_, thread_index());
        im2col(g_, x, 0, s_.rows(), o0, o1, scratch);
        cols = {scratch, o1 - o0, false};
      }
      float* y = grad_input + (n * s_.groups + grp) * s_.cout * s_.dst_plane;
      // Y[:, o0:o1] (Cout_g x tile) = W_g (Cout_g x Cin_g*K) * cols (Cin_g*K x tile)
      sgemm(blocking_, w.at<float>(pack_, thread_index()), s_.cout, o1 - o0, s_.rows(),
            {in.f32.wei + grp * s_.cout * s_.rows(), s_.rows(), false}, cols, false, y + o0, s_.dst_plane);
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_);
    return status;
  }

 private:
  ConvGeometry g_;
  Shape s_;
  int threads_;
  DenseFloatOutput output_;
  int64_t tile_ = 1, tiles_ = 1;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle cols_ = -1, pack_ = -1;  // per thread
};

bool supports(const ConvProblem&) { return true; }  // any dtype, layout and geometry

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  if (p.input_grad == InputGrad::kForward) return std::make_unique<GemmForward>(p, builder);
  return std::make_unique<GemmBackwardData>(p, builder);
}

}  // namespace

extern const ConvImpl kGemmInputGrad = {"gemm", Gradient::kInput, supports, plan};

}  // namespace aclnn_cpu
