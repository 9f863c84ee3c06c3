// GEMM kernel set: im2col / col2im around single-precision GEMMs, with float accumulation as on
// the NPU's cube unit. Work is cut into tasks whose shapes depend on the problem only; each
// output element is produced inside one task in a fixed order, so results are bit-identical for
// any thread count. Tasks run in parallel with OpenMP, each with its own scratch in the workspace.
#include <algorithm>
#include <cstring>

#include "kernels/common/pack.h"
#include "kernels/conv_problem.h"
#include "kernels/gemm/im2col.h"
#include "kernels/gemm/sgemm.h"
#include "kernels/gemm/tasks.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kColumnBudget = int64_t{1} << 20;  // floats of column matrix per task and tile
constexpr int64_t kWeightRowBlock = 64;              // column-matrix rows per weight-gradient task

// Sizes derived from the geometry; every tiling choice is a function of these alone.
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
  // Output positions per tile, so a tile of `tile_rows` rows stays within the budget.
  int64_t tile(int64_t tile_rows) const {
    return std::max<int64_t>(1, std::min(dst_plane, kColumnBudget / std::max<int64_t>(1, tile_rows)));
  }
  // Input channels per backward-data task: enough tasks to share out, whole groups when plenty.
  int64_t data_channel_block() const {
    const int64_t slices = n * groups;
    return slices >= 8 ? cin : std::max<int64_t>(1, (cin * slices + 7) / 8);
  }
  int64_t weight_row_block() const { return std::max<int64_t>(1, std::min(rows(), kWeightRowBlock)); }
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// 1x1 kernel, stride 1, no padding: the column matrix is the source itself (C x plane).
bool columns_are_source(const ConvGeometry& g) {
  for (int a = 0; a < 3; ++a) {
    if (g.kernel[a] != 1 || g.stride[a] != 1 || g.pad[a] != 0 || g.src_size[a] != g.dst_size[a]) return false;
  }
  return true;
}

// Where every operand lives: in the user's tensor when it is dense FLOAT (and, for inputs, needs
// no rounding), else in the workspace. Laid out the same way when sized (base == nullptr) and
// when used.
struct Layout {
  const float *src = nullptr, *wei = nullptr, *dst = nullptr;  // inputs, dense
  float *grad_input = nullptr, *grad_weight = nullptr;         // results, dense float
  bool stage_grad_input = false, stage_grad_weight = false;    // results go through the workspace
  float* scratch = nullptr;                                    // per thread
  int64_t scratch_per_thread = 0;
  int threads = 1;
  uint64_t bytes = 0;

  Layout(const ConvProblem& p, int thread_count, void* base) : threads(thread_count) {
    const Shape s(p.geometry);
    auto take = [&](int64_t floats) -> float* {
      float* at = base == nullptr ? nullptr : reinterpret_cast<float*>(static_cast<unsigned char*>(base) + bytes);
      bytes += (static_cast<uint64_t>(floats) * sizeof(float) + 63) / 64 * 64;
      return at;
    };
    // An input read in place, or packed (and rounded) into the workspace.
    auto input = [&](bool needed, const View5& view) -> const float* {
      if (!needed) return nullptr;
      if (p.math == MathMode::kFull && is_dense_float(view)) return dense_float_data(view);
      float* packed = take(view.numel());
      if (base != nullptr) pack_dense(view, p.math, packed);
      return packed;
    };
    src = input(p.reads_src(), p.src);
    wei = input(p.reads_wei(), p.wei);
    dst = input(p.reads_dst(), p.dst);
    auto output = [&](bool needed, const View5& view, bool* staged) -> float* {
      if (!needed) return nullptr;
      *staged = !is_dense_float(view);
      return *staged ? take(view.numel()) : dense_float_data(view);
    };
    grad_input = output(p.input_grad != InputGrad::kNone, p.grad_input, &stage_grad_input);
    grad_weight = output(p.want_weight_grad, p.grad_weight, &stage_grad_weight);
    if (p.input_grad == InputGrad::kBackwardData) {
      const int64_t rows = s.data_channel_block() * s.kernel_volume;
      scratch_per_thread = std::max(scratch_per_thread, rows * s.tile(rows));
    }
    if (p.input_grad == InputGrad::kForward)
      scratch_per_thread = std::max(scratch_per_thread, s.rows() * s.tile(s.rows()));
    if (p.want_weight_grad) {
      const int64_t rows = s.weight_row_block();
      scratch_per_thread = std::max(scratch_per_thread, rows * s.tile(rows) + s.cout * rows);
    }
    if (scratch_per_thread > 0) scratch = take(scratch_per_thread * threads);
  }
  float* thread_scratch() const { return scratch + thread_index() * scratch_per_thread; }
};

// gradInput of a direct convolution: per (sample, group, block of input channels), over
// output-position tiles: cols = W^T dY, then col2im-add into the dense float result.
void backward_data(const ConvGeometry& g, const Layout& w) {
  const Shape s(g);
  const int64_t block = s.data_channel_block(), blocks = ceil_div(s.cin, block);
  const int64_t max_rows = block * s.kernel_volume, tile = s.tile(max_rows);
  run_tasks(s.n * s.groups * blocks, w.threads, [&](int64_t t) {
    const int64_t n = t / (s.groups * blocks), grp = t / blocks % s.groups, c0 = t % blocks * block;
    const int64_t c1 = std::min(s.cin, c0 + block);
    float* dx = w.grad_input + (n * s.groups + grp) * s.cin * s.src_plane;  // the group's slice
    const float* wei = w.wei + grp * s.cout * s.rows();
    const float* dy = w.dst + (n * s.groups + grp) * s.cout * s.dst_plane;
    const bool in_place = columns_are_source(g);  // col2im is the identity: the GEMM writes dx
    if (!in_place) std::memset(dx + c0 * s.src_plane, 0, static_cast<size_t>((c1 - c0) * s.src_plane) * sizeof(float));
    for (int64_t o0 = 0; o0 < s.dst_plane; o0 += tile) {
      const int64_t o1 = std::min(s.dst_plane, o0 + tile);
      float* cols = in_place ? dx + c0 * s.src_plane + o0 : w.thread_scratch();
      // cols ((c1-c0)*K x tile) = W_g[:, c0*K : c1*K]^T ((c1-c0)*K x Cout_g) * dY[:, o0:o1] (Cout_g x tile)
      sgemm((c1 - c0) * s.kernel_volume, o1 - o0, s.cout, {wei + c0 * s.kernel_volume, s.rows(), true},
            {dy + o0, s.dst_plane, false}, false, cols, in_place ? s.src_plane : o1 - o0);
      if (!in_place) col2im_add(g, cols, c0 * s.kernel_volume, c1 * s.kernel_volume, o0, o1, dx);
    }
  });
}

// gradInput of a transposed convolution, i.e. a forward convolution: per (sample, group,
// output tile): cols = im2col(src), Y = W cols.
void forward(const ConvGeometry& g, const Layout& w) {
  const Shape s(g);
  const int64_t tile = s.tile(s.rows()), tiles = ceil_div(s.dst_plane, tile);
  run_tasks(s.n * s.groups * tiles, w.threads, [&](int64_t t) {
    const int64_t n = t / (s.groups * tiles), grp = t / tiles % s.groups, o0 = t % tiles * tile;
    const int64_t o1 = std::min(s.dst_plane, o0 + tile);
    const float* x = w.src + (n * s.groups + grp) * s.cin * s.src_plane;
    MatrixRef cols{x + o0, s.src_plane, false};  // 1x1: the source is the column matrix
    if (!columns_are_source(g)) {
      im2col(g, x, 0, s.rows(), o0, o1, w.thread_scratch());
      cols = {w.thread_scratch(), o1 - o0, false};
    }
    float* y = w.grad_input + (n * s.groups + grp) * s.cout * s.dst_plane;
    // Y[:, o0:o1] (Cout_g x tile) = W_g (Cout_g x Cin_g*K) * cols (Cin_g*K x tile)
    sgemm(s.cout, o1 - o0, s.rows(), {w.wei + grp * s.cout * s.rows(), s.rows(), false}, cols, false, y + o0,
          s.dst_plane);
  });
}

// gradWeight: per (group, block of column-matrix rows), summed over samples and output tiles in
// order: acc += dY cols^T.
void backward_weight(const ConvGeometry& g, const Layout& w) {
  const Shape s(g);
  const int64_t block = s.weight_row_block(), blocks = ceil_div(s.rows(), block), tile = s.tile(block);
  run_tasks(s.groups * blocks, w.threads, [&](int64_t t) {
    const int64_t grp = t / blocks, r0 = t % blocks * block, r1 = std::min(s.rows(), r0 + block);
    float* cols = w.thread_scratch();
    float* acc = cols + block * tile;  // Cout_g x (r1 - r0)
    std::memset(acc, 0, static_cast<size_t>(s.cout * (r1 - r0)) * sizeof(float));
    for (int64_t n = 0; n < s.n; ++n) {
      const float* x = w.src + (n * s.groups + grp) * s.cin * s.src_plane;
      const float* dy = w.dst + (n * s.groups + grp) * s.cout * s.dst_plane;
      for (int64_t o0 = 0; o0 < s.dst_plane; o0 += tile) {
        const int64_t o1 = std::min(s.dst_plane, o0 + tile);
        MatrixRef rows{x + r0 * s.src_plane + o0, s.src_plane, true};  // 1x1: rows are channels of x
        if (!columns_are_source(g)) {
          im2col(g, x, r0, r1, o0, o1, cols);
          rows = {cols, o1 - o0, true};
        }
        // acc (Cout_g x rows) += dY[:, o0:o1] (Cout_g x tile) * cols^T (tile x rows)
        sgemm(s.cout, r1 - r0, o1 - o0, {dy + o0, s.dst_plane, false}, rows, true, acc, r1 - r0);
      }
    }
    float* dw = w.grad_weight + grp * s.cout * s.rows();  // (Cout_g x Cin_g*K) row-major
    for (int64_t co = 0; co < s.cout; ++co) {
      std::memcpy(dw + co * s.rows() + r0, acc + co * (r1 - r0), static_cast<size_t>(r1 - r0) * sizeof(float));
    }
  });
}

class GemmKernels final : public ConvKernelSet {
 public:
  const char* name() const override { return "gemm"; }

  // Per-thread scratch is booked for p.max_threads threads, and tasks never use more.
  uint64_t workspace_bytes(const ConvProblem& p) const override { return Layout(p, p.max_threads, nullptr).bytes; }

  void run(const ConvProblem& p, void* workspace) const override {
    const Layout w(p, p.max_threads, workspace);  // packs the inputs that need it
    if (p.input_grad == InputGrad::kBackwardData) backward_data(p.geometry, w);
    if (p.input_grad == InputGrad::kForward) forward(p.geometry, w);
    if (w.stage_grad_input) store_dense(w.grad_input, p.grad_input);
    if (p.want_weight_grad) {
      backward_weight(p.geometry, w);
      if (w.stage_grad_weight) store_dense(w.grad_weight, p.grad_weight);
    }
    if (p.want_bias_grad) reduce_bias(p.bias_source, p.grad_bias);
  }
};

}  // namespace

const ConvKernelSet& gemm_kernels() {
  static const GemmKernels kernels;
  return kernels;
}

}  // namespace aclnn_cpu
