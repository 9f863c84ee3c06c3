// "gemm": the deformable forward as the field computes it, a bilinear-sampled, mask-weighted im2col
// (the columns, deformOut's values) feeding our float GEMM. Per sample, x's planes are first read as
// floats, padded with zeros (columns.h: PaddedPlanes); then each task takes a block of kBlock output
// positions and, in its thread's scratch:
//   1. the block's sampling table: for each deformable group d, kernel point k and position p, its four
//      neighbours' place and their weights (the bilinear weight times the mask, formed in double and
//      rounded once to float; 0 for a neighbour outside the image);
//   2. the block's columns: cols[c*K + k][j] = ((w0*x0 + w1*x1) + w2*x2) + w3*x3 in float, in that order
//      (the kit's sampling loop, kernels/kits/deform_kernels.h: the same bits on every CPU), stored into
//      deformOut where asked;
//   3. per group, out[g*OCg + o][j] = sum_r W[g*OCg + o][r] * cols[g*Cg*K + r][j]: sgemm, M = OCg,
//      N = the block's positions, K = Cg*K (row-major W, row-major columns);
//   4. the bias added in float, each result rounded once into out.
// The blocks are fixed by the problem and every element is one task's: the same bits for any thread
// count. The scratch is per thread and per block, so the workspace does not grow with the image.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/deform/columns.h"
#include "kernels/deform/deform_entries.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kBlock = 256;  // output positions per task (a multiple of every kit's NR)

class ColumnsForward final : public OperatorStep {
 public:
  ColumnsForward(const DeformProblem& p, StepBuilder& b)
      : p_(p), threads_(b.threads()), conversions_(b.cpu().conversions), kernels_(b.cpu().kit->deform) {
    const DeformGeometry& g = p.geometry;
    positions_ = g.out_size[0] * g.out_size[1];
    planes_shape_ = PaddedPlanes(g);
    blocking_ = plan_gemm_blocking(g.out_per_group(), std::min(positions_, kBlock),
                                   g.in_per_group() * g.kernel_points(), b.cpu());
    const auto copies = static_cast<uint64_t>(threads_);
    planes_ = b.book_scratch("deform.planes", size_product({g.in_channels, planes_shape_.slots}), sizeof(float));
    table_ = b.book_scratch("deform.table", NeighbourTable::words(g.deformable_groups * g.kernel_points(), kBlock), 4,
                            copies);
    columns_ = b.book_scratch("deform.columns", size_product({g.in_channels, g.kernel_points(), kBlock}), sizeof(float),
                              copies);
    result_ = b.book_scratch("deform.result", size_product({g.out_channels, kBlock}), sizeof(float), copies);
    weights_ = PackedWeights(p, b, blocking_, false);
    scratch_ = b.book_scratch("deform.gemm", size_product({blocking_.scratch_floats(true)}), sizeof(float), copies);
  }

  int run(const Workspace& w) const override {
    const DeformGeometry& g = p_.geometry;
    int status = weights_.pack(w, threads_, conversions_);
    float* planes = w.at<float>(planes_);
    for (int64_t n = 0; status == 0 && n < g.batch; ++n) {
      status = read_sample_planes(p_, n, planes_shape_, planes, threads_, conversions_);
      if (status != 0) break;
      status = run_tasks(blocks(), threads_, "deformable forward", [&](int64_t block) {
        const int64_t first = block * kBlock, count = std::min(kBlock, positions_ - first);
        const int thread = thread_index();
        const NeighbourTable table(w.at<float>(table_, thread), kBlock);
        float *columns = w.at<float>(columns_, thread), *result = w.at<float>(result_, thread);
        fill_table(n, first, count, table);
        sample_columns(planes, table, count, columns);
        if (p_.want_columns) store_columns(columns, n, first, count);
        multiply(w, columns, count, w.at<float>(scratch_, thread), result);
        if (p_.has_bias) {
          store_rows_with_bias(result, kBlock, g.out_channels, p_.output, p_.bias, n, 0, first, count, conversions_);
        } else {
          store_rows_floats(result, kBlock, g.out_channels, p_.output, n, 0, first, count, conversions_);
        }
      });
    }
    return status;
  }
  int64_t tasks() const override { return blocks(); }
  std::string detail() const override { return isa_detail(blocking_); }

 private:
  int64_t blocks() const { return (positions_ + kBlock - 1) / kBlock; }

  // The table of the block's `count` positions from `first`: row d*K + k, entry j for position first + j.
  void fill_table(int64_t n, int64_t first, int64_t count, const NeighbourTable& table) const {
    const DeformGeometry& g = p_.geometry;
    for (int64_t d = 0; d < g.deformable_groups; ++d) {
      for (int64_t k = 0; k < g.kernel_points(); ++k) {
        for (int64_t j = 0; j < count; ++j) {
          const int64_t oh = (first + j) / g.out_size[1], ow = (first + j) % g.out_size[1];
          table.set(d * g.kernel_points() + k, j, Neighbours(SamplingPoint(p_, n, d, k, oh, ow), g, planes_shape_));
        }
      }
    }
  }
  // Every channel's K rows of the block's columns (row c*K + k, kBlock apart) from its float plane and
  // its deformable group's table rows.
  void sample_columns(const float* planes, const NeighbourTable& table, int64_t count, float* columns) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t points = g.kernel_points();
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const float* plane = planes + c * planes_shape_.slots;
      for (int64_t k = 0; k < points; ++k) {
        const int64_t row = c / g.in_per_deformable_group() * points + k;
        kernels_->sample(plane, planes_shape_.pitch, table.base(row), table.weights(row), table.stride(), count,
                         columns + (c * points + k) * kBlock);
      }
    }
  }
  // The block's columns into deformOut[n, c, oh*KH + kh, ow*KW + kw]: per channel, kernel row and output
  // row the block covers, one run of (ow, kw) along a deformOut row.
  void store_columns(const float* columns, int64_t n, int64_t first, int64_t count) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t width = g.out_size[1], kw_n = g.kernel[1], points = g.kernel_points();
    constexpr int64_t kRun = 1024;
    float run[kRun];
    for (int64_t c = 0; c < g.in_channels; ++c) {
      for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
        for (int64_t j0 = 0; j0 < count;) {  // the block's positions, a piece of one output row at a time
          const int64_t oh = (first + j0) / width, ow0 = (first + j0) % width;
          const int64_t row_end = std::min(count, j0 + (width - ow0));
          for (int64_t j = j0; j < row_end;) {  // runs of at most kRun floats
            const int64_t positions = std::min(row_end - j, kRun / kw_n);
            for (int64_t q = 0; q < positions; ++q) {
              for (int64_t kw = 0; kw < kw_n; ++kw)
                run[q * kw_n + kw] = columns[(c * points + kh * kw_n + kw) * kBlock + j + q];
            }
            const int64_t ow = (first + j) % width;
            store_plane_floats(run, p_.columns, n, c, (oh * g.kernel[0] + kh) * width * kw_n + ow * kw_n,
                               positions * kw_n, conversions_);
            j += positions;
          }
          j0 = row_end;
        }
      }
    }
  }
  // result[o][j] (kBlock apart) for every output channel, group by group.
  void multiply(const Workspace& w, const float* columns, int64_t count, float* scratch, float* result) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t depth = g.in_per_group() * g.kernel_points(), rows = g.out_per_group();
    for (int64_t group = 0; group < g.groups; ++group) {
      float* out = result + group * rows * kBlock;
      if (depth == 0) {  // (no input channels: sums over nothing)
        for (int64_t o = 0; o < rows; ++o) std::fill(out + o * kBlock, out + o * kBlock + count, 0.0f);
        continue;
      }
      // out (OCg x count) = W_g (OCg x Cg*K, packed) * columns_g (Cg*K x count)
      sgemm(blocking_, scratch, rows, count, depth, weights_.group(w, group),
            MatrixRef{columns + group * depth * kBlock, kBlock, false}, false, out, kBlock);
    }
  }

  DeformProblem p_;
  int threads_;
  const Conversions16* conversions_;
  const DeformKernels* kernels_;
  GemmBlocking blocking_;
  int64_t positions_ = 0;
  PaddedPlanes planes_shape_;
  PackedWeights weights_;
  WorkspaceLedger::Handle planes_ = -1, table_ = -1, columns_ = -1, result_ = -1, scratch_ = -1;
};

Support supports(const DeformProblem& p, const CpuFeatures&) {
  const DeformGeometry& g = p.geometry;
  if (may_overlap(p.output) || (p.want_columns && may_overlap(p.columns))) return refuse("an output overlaps itself");
  if (size_product({g.in_size[0] + 3, g.in_size[1] + 2}) >= INT32_MAX)
    return refuse("input planes past 2^31 - 1 slots");
  if (g.kernel[1] > 1024) return refuse("a kernel row past 1024 points");
  return kSupported;
}

}  // namespace

extern const DeformImpl kDeformGemmForward = {
    "gemm", "gemm", DeformPass::kForward, supports,
    [](const DeformProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new ColumnsForward(p, b)); }};

}  // namespace aclnn_cpu
