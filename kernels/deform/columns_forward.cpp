// "gemm": the deformable forward as the field computes it, a bilinear-sampled, mask-weighted im2col
// (the columns, deformOut's values) feeding our float GEMM, one sample at a time:
//   1. x's planes of the sample as floats, each followed by a zero (the slot every neighbour outside
//      the image reads);
//   2. the sampling table of the sample: for each deformable group d, kernel point k and output position
//      p, its four neighbours' slots and their weights (the bilinear weight times the mask, formed in
//      double and rounded once to float);
//   3. the columns: cols[c*K + k][p] = ((w0*x0 + w1*x1) + w2*x2) + w3*x3 in float, in that order (this
//      file is compiled without contraction, so every CPU gives the same bits), then stored into
//      deformOut where asked;
//   4. per group and block of columns, out[g*OCg + o][p] = sum_r W[g*OCg + o][r] * cols[g*Cg*K + r][p]:
//      sgemm, M = OCg, N = the block's positions, K = Cg*K (row-major W, row-major columns);
//   5. bias added in float, each result rounded once into out.
// Each step's tasks are fixed by the problem, and every element is one task's: the same bits for any
// thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "common/dtype.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/deform/deform_entries.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

// A sampling point's four neighbours: their slots in the sample's float planes (plane-relative; the
// zero slot H*W for one outside the image) and weights (bilinear weight times the mask).
struct Neighbours {
  int32_t slot[4];
  float weight[4];
};
static_assert(sizeof(Neighbours) == 32, "a table entry is 8 floats");

constexpr int64_t kColumnBlock = 512;

// The product of sizes, or UINT64_MAX where it does not fit (the ledger then reports the workspace too large).
uint64_t product(std::initializer_list<int64_t> sizes) {
  uint64_t total = 1;
  for (int64_t size : sizes) {
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(std::max<int64_t>(size, 0)), &total)) return UINT64_MAX;
  }
  return total;
}  // positions per GEMM task (a multiple of every kit's NR)

class ColumnsForward final : public DeformStep {
 public:
  ColumnsForward(const DeformProblem& p, DeformPlanBuilder& b)
      : p_(p), threads_(b.threads()), conversions_(b.cpu().conversions) {
    const DeformGeometry& g = p.geometry;
    positions_ = g.out_size[0] * g.out_size[1];
    slots_ = g.in_size[0] * g.in_size[1] + 1;
    const int64_t depth = g.in_per_group() * g.kernel_points();
    blocking_ = plan_gemm_blocking(g.out_per_group(), std::min(positions_, kColumnBlock), depth, b.cpu());
    planes_ = b.book_scratch("deform.planes", product({g.in_channels, slots_}), sizeof(float));
    table_ = b.book_scratch("deform.table", product({g.deformable_groups, g.kernel_points(), positions_, 8}),
                            sizeof(float));
    columns_ = b.book_scratch("deform.columns", product({g.in_channels, g.kernel_points(), positions_}), sizeof(float));
    result_ = b.book_scratch("deform.result", product({g.out_channels, positions_}), sizeof(float));
    if (!float_in_place(p.weight, MathMode::kFull))
      weights_ = b.book_scratch("deform.weights", product({p.weight.numel()}), sizeof(float));
    scratch_ = b.book_scratch("deform.gemm", product({blocking_.scratch_floats()}), sizeof(float),
                              static_cast<uint64_t>(threads_));
  }

  int run(const Workspace& w) const override {
    const DeformGeometry& g = p_.geometry;
    const float* weights = dense_float_data(p_.weight);
    if (weights_ >= 0) {
      pack_dense(p_.weight, MathMode::kFull, w.at<float>(weights_), threads_, conversions_);
      weights = w.at<float>(weights_);
    }
    float *planes = w.at<float>(planes_), *columns = w.at<float>(columns_), *result = w.at<float>(result_);
    auto* table = reinterpret_cast<Neighbours*>(w.at<float>(table_));
    const int64_t points = g.kernel_points(), depth = g.in_per_group() * points;
    const int64_t blocks = (positions_ + kColumnBlock - 1) / kColumnBlock;
    for (int64_t n = 0; n < g.batch; ++n) {
      int status = run_tasks(g.in_channels, threads_, "deformable forward", [&](int64_t c) {
        float* plane = planes + c * slots_;
        pack_plane(p_.input, MathMode::kFull, n, c, plane, conversions_);
        plane[slots_ - 1] = 0.0f;
      });
      if (status == 0) {
        status = run_tasks(g.deformable_groups * points, threads_, "deformable forward",
                           [&](int64_t t) { fill_table(n, t / points, t % points, table + t * positions_); });
      }
      if (status == 0) {
        status = run_tasks(g.in_channels, threads_, "deformable forward", [&](int64_t c) {
          const Neighbours* rows = table + c / g.in_per_deformable_group() * points * positions_;
          sample_channel(planes + c * slots_, rows, columns + c * points * positions_);
          if (p_.want_columns) store_columns(columns + c * points * positions_, n, c);
        });
      }
      if (status == 0) {
        status = run_tasks(g.groups * blocks, threads_, "deformable forward", [&](int64_t t) {
          if (depth == 0) {  // (no input channels: sums over nothing)
            std::fill(result, result + g.out_channels * positions_, 0.0f);
            return;
          }
          const int64_t group = t / blocks, first = t % blocks * kColumnBlock;
          const int64_t count = std::min(kColumnBlock, positions_ - first);
          // out rows of the group (OCg x count) = W_g (OCg x Cg*K) * columns_g (Cg*K x count)
          sgemm(blocking_, w.at<float>(scratch_, thread_index()), g.out_per_group(), count, depth,
                MatrixRef{weights + group * g.out_per_group() * depth, depth, false},
                MatrixRef{columns + group * depth * positions_ + first, positions_, false}, false,
                result + group * g.out_per_group() * positions_ + first, positions_);
        });
      }
      if (status == 0) {
        status = run_tasks(g.out_channels, threads_, "deformable forward", [&](int64_t o) {
          if (p_.has_bias) {
            store_rows_with_bias(result + o * positions_, positions_, 1, p_.output, p_.bias, n, o, 0, positions_,
                                 conversions_);
          } else {
            store_rows_floats(result + o * positions_, positions_, 1, p_.output, n, o, 0, positions_, conversions_);
          }
        });
      }
      if (status != 0) return status;
    }
    return 0;
  }
  int64_t tasks() const override {
    const int64_t blocks = (positions_ + kColumnBlock - 1) / kColumnBlock;
    return p_.geometry.groups * blocks;
  }
  std::string detail() const override { return isa_detail(blocking_); }

 private:
  // The sampling table of deformable group d, kernel point k, for sample n: one entry per position.
  void fill_table(int64_t n, int64_t d, int64_t k, Neighbours* entries) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t kh = k / g.kernel[1], kw = k % g.kernel[1], height = g.in_size[0], width = g.in_size[1];
    const View5& offset = p_.offset;
    for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
      for (int64_t ow = 0; ow < g.out_size[1]; ++ow) {
        const auto value = [&](int block) {
          return load_element(offset.data, offset.dtype, offset.element(n, g.offset_channel(block, d, k), 0, oh, ow));
        };
        const double h = static_cast<double>(oh * g.stride[0] - g.pad[0] + kh * g.dilation[0]) + value(1);
        const double x = static_cast<double>(ow * g.stride[1] - g.pad[1] + kw * g.dilation[1]) + value(0);
        const double mask = value(2), top = std::floor(h), left = std::floor(x);
        const double down = h - top, right = x - left;
        Neighbours& e = entries[oh * g.out_size[1] + ow];
        for (int i = 0; i < 4; ++i) {
          const double row = top + i / 2, column = left + i % 2;
          const bool inside = row >= 0 && row < static_cast<double>(height) && column >= 0 &&
                              column < static_cast<double>(width);
          const double weight = (i / 2 ? down : 1 - down) * (i % 2 ? right : 1 - right);
          e.slot[i] = inside ? static_cast<int32_t>(static_cast<int64_t>(row) * width + static_cast<int64_t>(column))
                             : static_cast<int32_t>(height * width);
          e.weight[i] = inside ? static_cast<float>(mask * weight) : 0.0f;
        }
      }
    }
  }
  // Channel c's K rows of columns from its float plane and its deformable group's table rows.
  void sample_channel(const float* plane, const Neighbours* rows, float* out) const {
    const int64_t count = p_.geometry.kernel_points() * positions_;
    for (int64_t i = 0; i < count; ++i) {
      const Neighbours& e = rows[i];
      const float pair = e.weight[0] * plane[e.slot[0]] + e.weight[1] * plane[e.slot[1]];
      out[i] = (pair + e.weight[2] * plane[e.slot[2]]) + e.weight[3] * plane[e.slot[3]];
    }
  }
  // Channel c's columns into deformOut[n, c, oh*KH + kh, ow*KW + kw], a row of deformOut at a time.
  void store_columns(const float* rows, int64_t n, int64_t c) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t row_length = g.out_size[1] * g.kernel[1];
    constexpr int64_t kRow = 2048;
    float row[kRow];
    for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
      for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
        for (int64_t first = 0; first < row_length; first += kRow) {
          const int64_t count = std::min(kRow, row_length - first);
          for (int64_t j = 0; j < count; ++j) {
            const int64_t ow = (first + j) / g.kernel[1], kw = (first + j) % g.kernel[1];
            row[j] = rows[(kh * g.kernel[1] + kw) * positions_ + oh * g.out_size[1] + ow];
          }
          store_plane_floats(row, p_.columns, n, c, (oh * g.kernel[0] + kh) * row_length + first, count, conversions_);
        }
      }
    }
  }

  DeformProblem p_;
  int threads_;
  const Conversions16* conversions_;
  GemmBlocking blocking_;
  int64_t positions_ = 0, slots_ = 0;
  WorkspaceLedger::Handle planes_ = -1, table_ = -1, columns_ = -1, result_ = -1, weights_ = -1, scratch_ = -1;
};

Support supports(const DeformProblem& p, const CpuFeatures&) {
  const DeformGeometry& g = p.geometry;
  if (may_overlap(p.output) || (p.want_columns && may_overlap(p.columns))) return refuse("an output overlaps itself");
  if (g.in_size[0] * g.in_size[1] >= INT32_MAX) return refuse("input planes past 2^31 - 1 slots");
  return kSupported;
}

}  // namespace

extern const DeformImpl kDeformGemmForward = {"gemm", "gemm", DeformPass::kForward, supports,
                                              [](const DeformProblem& p, DeformPlanBuilder& b) {
                                                return std::unique_ptr<DeformStep>(new ColumnsForward(p, b));
                                              }};

}  // namespace aclnn_cpu
