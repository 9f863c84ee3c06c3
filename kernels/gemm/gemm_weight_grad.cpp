// gradWeight by GEMMs: dW += dY cols^T over samples and output tiles, in a fixed order. Float
// accumulation, as on the NPU's cube unit.
#include <cstring>
#include <memory>

#include "kernels/gemm/im2col.h"
#include "kernels/gemm/sgemm.h"
#include "kernels/gemm/tasks.h"
#include "kernels/gemm/tiling.h"
#include "kernels/plan.h"

namespace aclnn_cpu {
namespace {

// Per (group, block of column-matrix rows), summed over samples and output tiles in order.
class GemmBackwardWeight final : public ConvStep {
 public:
  GemmBackwardWeight(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry), s_(p.geometry), threads_(b.threads()), output_(p.grad_weight, b, "gradWeight.f32") {
    block_ = std::max<int64_t>(1, std::min(s_.rows(), kWeightRowBlock));
    blocks_ = ceil_div(s_.rows(), block_);
    tile_ = s_.tile(block_);
    blocking_ = plan_gemm_blocking(s_.cout, block_, tile_);
    if (!columns_are_source(g_)) cols_ = b.book_scratch("gemm.cols", block_ * tile_, sizeof(float), threads_);
    acc_ = b.book_scratch("gemm.acc", s_.cout * block_, sizeof(float), threads_);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    b.need_float_inputs(true, false, true);
  }

  int64_t tasks() const override { return s_.groups * blocks_; }

  int run(const Workspace& w, const StepInputs& in) const override {
    float* grad_weight = output_.data(w);
    const int status = run_tasks(tasks(), threads_, "gemm gradWeight", [&](int64_t t) {
      const int64_t grp = t / blocks_, r0 = t % blocks_ * block_, r1 = std::min(s_.rows(), r0 + block_);
      const int thread = thread_index();
      float* acc = w.at<float>(acc_, thread);  // Cout_g x (r1 - r0)
      float* pack = w.at<float>(pack_, thread);
      std::memset(acc, 0, static_cast<size_t>(s_.cout * (r1 - r0)) * sizeof(float));
      for (int64_t n = 0; n < s_.n; ++n) {
        const float* x = in.f32.src + (n * s_.groups + grp) * s_.cin * s_.src_plane;
        const float* dy = in.f32.dst + (n * s_.groups + grp) * s_.cout * s_.dst_plane;
        for (int64_t o0 = 0; o0 < s_.dst_plane; o0 += tile_) {
          const int64_t o1 = std::min(s_.dst_plane, o0 + tile_);
          MatrixRef rows{x + r0 * s_.src_plane + o0, s_.src_plane, true};  // 1x1: rows are channels of x
          if (cols_ >= 0) {
            float* cols = w.at<float>(cols_, thread);
            im2col(g_, x, r0, r1, o0, o1, cols);
            rows = {cols, o1 - o0, true};
          }
          // acc (Cout_g x rows) += dY[:, o0:o1] (Cout_g x tile) * cols^T (tile x rows)
          sgemm(blocking_, pack, s_.cout, r1 - r0, o1 - o0, {dy + o0, s_.dst_plane, false}, rows, true, acc, r1 - r0);
        }
      }
      float* dw = grad_weight + grp * s_.cout * s_.rows();  // (Cout_g x Cin_g*K) row-major
      for (int64_t co = 0; co < s_.cout; ++co) {
        std::memcpy(dw + co * s_.rows() + r0, acc + co * (r1 - r0), static_cast<size_t>(r1 - r0) * sizeof(float));
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
  WorkspaceLedger::Handle cols_ = -1, acc_ = -1, pack_ = -1;  // per thread
};

bool supports(const ConvProblem&) { return true; }  // any dtype, layout and geometry

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<GemmBackwardWeight>(p, builder);
}

}  // namespace

extern const ConvImpl kGemmWeightGrad = {"gemm", Gradient::kWeight, supports, plan};

}  // namespace aclnn_cpu
