// The deformable backward as the field computes it, around the columns (deformOut's layout: row
// c*K + k, one column per output position) and our float GEMM:
//   "gemm" (backward_data): per sample and chunk of positions, the columns' gradient
//     gcols[g*Cg*K + r][j] = sum_o W[g*OCg + o][r] * gradOutput[n, g*OCg + o, j]   (sgemm, M = Cg*K, N = a
//     block of positions, K = OCg: W_g transposed, gradOutput rows), then
//     gradInput: each channel's plane gathers gcols * (bilinear weight * mask) from its points in a fixed
//       order (k, position, neighbour), summed in double, no atomics: the same bits for any thread count;
//     gradOffset: per deformable group, kernel point and position, the sums over the group's channels of
//       gcols times each of the four neighbours' values, S_i = sum_c gcols[c] * v_i[c] (in double: each
//       product exact, summed in channel order), then dx = mask * ((1 - down)(S1 - S0) + down (S3 - S2)),
//       dy = mask * ((1 - right)(S2 - S0) + right (S3 - S1)) and the mask's gradient, the bilinear
//       weights times S0..S3 (the derivatives of the bilinear value are linear in the neighbours, so
//       the channels' sum is taken once per point, not once per channel).
//     Points outside -1 < h < inH, -1 < w < inW take no part (CANN's backward rule).
//   "gemm" (backward_weight): gradWeight[g*OCg + o][r] = sum over samples and positions of
//     gradOutput[n, g*OCg + o, j] * offsetOut's column r at j (sgemm, M = OCg, N = a block of rows r,
//     K = a block of positions, accumulated over the blocks in order).
//   "lanes" (bias): the convolution's gradBias reduction (kernels/common/pack.h: reduce_bias).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/common/element_type.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/deform/columns.h"
#include "kernels/deform/deform_entries.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kBlock = 256;  // positions per GEMM task (a multiple of every kit's NR)
// Positions per chunk, at most: the columns' gradient is formed and scattered a chunk at a time (a chunk's
// gradient and table within kChunkBytes, down to one block).
constexpr int64_t kChunk = 8 * kBlock;
constexpr int64_t kChunkBytes = int64_t{64} << 20;
constexpr int64_t kRowBlock = 144;   // gradWeight columns (r) per task
constexpr int kScatterChannels = 4;  // gradInput planes scattered side by side

// What gradOffset needs of a point besides its neighbours (which are the zeros, weight 0, outside the
// backward's rule): its fractions and mask, and whether it counts.
struct PointFractions {
  double down, right, mask;
  int64_t inside;
};

// Reads gradOutput rows [o0, o0 + rows) of sample n at positions [first, first + count) as floats, kBlock apart.
void read_rows(const View5& view, int64_t n, int64_t o0, int64_t rows, int64_t first, int64_t count, float* out,
               const Conversions16* conversions) {
  for (int64_t o = 0; o < rows; ++o)
    read_plane_floats(view, MathMode::kFull, n, o0 + o, first, count, out + o * kBlock, conversions);
}

class GemmBackwardData final : public OperatorStep {
 public:
  GemmBackwardData(const DeformProblem& p, StepBuilder& b)
      : p_(p), threads_(b.threads()), conversions_(b.cpu().conversions), kernels_(b.cpu().kit->deform) {
    const DeformGeometry& g = p.geometry;
    positions_ = g.out_size[0] * g.out_size[1];
    planes_shape_ = PaddedPlanes(g);
    depth_ = g.in_per_group() * g.kernel_points();
    const int64_t rows = g.in_channels * g.kernel_points();
    const int64_t bytes_per_position = std::max<int64_t>(
        1, rows * 4 + g.deformable_groups * g.kernel_points() * (5 * 4 + int64_t{sizeof(PointFractions)}));
    const int64_t budget_blocks = std::max<int64_t>(1, kChunkBytes / bytes_per_position / kBlock);
    chunk_ = std::min({kChunk, budget_blocks * kBlock, (positions_ + kBlock - 1) / kBlock * kBlock});
    blocking_ = plan_gemm_blocking(depth_, kBlock, g.out_per_group(), b.cpu());
    const auto copies = static_cast<uint64_t>(threads_);
    planes_ = b.book_scratch("deform.planes", size_product({g.in_channels, planes_shape_.slots}), sizeof(float));
    sums_ = b.book_scratch("deform.input_sums", size_product({g.in_channels, planes_shape_.slots}), sizeof(double));
    table_ = b.book_scratch("deform.table", NeighbourTable::words(g.deformable_groups * g.kernel_points(), chunk_), 4);
    fractions_ = b.book_scratch("deform.fractions", size_product({g.deformable_groups, g.kernel_points(), chunk_}),
                                sizeof(PointFractions));
    gcols_ = b.book_scratch("deform.column_gradient", size_product({rows, chunk_}), sizeof(float));
    dy_ = b.book_scratch("deform.grad_output", size_product({g.out_per_group(), kBlock}), sizeof(float), copies);
    scratch_ = b.book_scratch("deform.gemm", size_product({blocking_.scratch_floats(true)}), sizeof(float), copies);
    weights_ = PackedWeights(p, b, blocking_, true);
    // (S0..S3 of each position, then dx, dy and the mask's gradient)
    offset_sums_ = b.book_scratch("deform.offset_sums", size_product({7, kBlock}), sizeof(double), copies);
  }

  int run(const Workspace& w) const override {
    const DeformGeometry& g = p_.geometry;
    int status = weights_.pack(w, threads_, conversions_);
    float *planes = w.at<float>(planes_), *gcols = w.at<float>(gcols_);
    double* sums = w.at<double>(sums_);
    const NeighbourTable table(w.at<float>(table_), chunk_);
    auto* fractions = reinterpret_cast<PointFractions*>(w.at<double>(fractions_));
    const int64_t points = g.kernel_points(), chunk_blocks = chunk_ / kBlock;
    for (int64_t n = 0; status == 0 && n < g.batch; ++n) {
      status = read_sample_planes(p_, n, planes_shape_, planes, threads_, conversions_);
      std::fill(sums, sums + g.in_channels * planes_shape_.slots, 0.0);
      for (int64_t first = 0; status == 0 && first < positions_; first += chunk_) {
        const int64_t count = std::min(chunk_, positions_ - first);
        // (the table per deformable group, kernel point and block: row d*K + k, entry j)
        status =
            run_tasks(g.deformable_groups * points * chunk_blocks, threads_, "deformable backward", [&](int64_t t) {
              const int64_t dk = t / chunk_blocks, offset = t % chunk_blocks * kBlock;
              const int64_t columns = std::min(kBlock, count - offset);
              fill_table(n, dk / points, dk % points, first + offset, columns, table, offset,
                         fractions + dk * chunk_ + offset);
            });
        if (status == 0) {
          status = run_tasks(g.groups * chunk_blocks, threads_, "deformable backward", [&](int64_t t) {
            column_gradient(n, t / chunk_blocks, first, t % chunk_blocks * kBlock, count, w, gcols);
          });
        }
        if (status == 0) {
          // (kScatterChannels channels at a time where they divide a deformable group's, else one by one)
          const bool side_by_side = g.in_per_deformable_group() % kScatterChannels == 0;
          const int64_t width = side_by_side ? kScatterChannels : 1;
          status = run_tasks(g.in_channels / width, threads_, "deformable backward", [&](int64_t t) {
            double* planes_sums = sums + t * width * planes_shape_.slots;
            if (side_by_side) return scatter<kScatterChannels>(t * width, table, gcols, count, planes_sums);
            scatter<1>(t, table, gcols, count, planes_sums);
          });
        }
        if (status == 0) {
          status =
              run_tasks(g.deformable_groups * points * chunk_blocks, threads_, "deformable backward", [&](int64_t t) {
                const int64_t block = t % chunk_blocks, dk = t / chunk_blocks;
                offset_gradient(n, dk / points, dk % points, first, block * kBlock, count, table, fractions, planes,
                                gcols, w.at<double>(offset_sums_, thread_index()));
              });
        }
      }
      if (status == 0) {
        status = run_tasks(g.in_channels, threads_, "deformable backward", [&](int64_t c) {
          for (int64_t r = 0; r < planes_shape_.height; ++r) {
            store_doubles(sums + c * planes_shape_.slots + planes_shape_.slot(r, 0), planes_shape_.width, p_.grad_input,
                          n, c, r * planes_shape_.width);
          }
        });
      }
    }
    return status;
  }
  int64_t tasks() const override { return p_.geometry.groups * (chunk_ / kBlock); }
  std::string detail() const override { return isa_detail(blocking_); }

 private:
  // Row d*K + k of the table from entry `entry` on, and the points' fractions, for the chunk's positions
  // [first, first + count).
  void fill_table(int64_t n, int64_t d, int64_t k, int64_t first, int64_t count, const NeighbourTable& table,
                  int64_t entry, PointFractions* fractions) const {
    const DeformGeometry& g = p_.geometry;
    for (int64_t j = 0; j < count; ++j) {
      const SamplingPoint s(p_, n, d, k, (first + j) / g.out_size[1], (first + j) % g.out_size[1]);
      const bool inside = s.inside(g);
      table.set(d * g.kernel_points() + k, entry + j,
                inside ? Neighbours(s, g, planes_shape_) : Neighbours(planes_shape_));
      fractions[j] = inside ? PointFractions{s.down, s.right, s.mask, 1} : PointFractions{0.0, 0.0, 0.0, 0};
    }
  }
  // The columns' gradient of group `group` at the chunk's block [first + offset, + kBlock).
  void column_gradient(int64_t n, int64_t group, int64_t first, int64_t offset, int64_t count, const Workspace& w,
                       float* gcols) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t columns = std::min(kBlock, count - offset);
    if (columns <= 0 || depth_ == 0) return;
    float* out = gcols + group * depth_ * chunk_ + offset;
    const int64_t outputs = g.out_per_group();
    if (outputs == 0) {  // (no output channels: sums over nothing)
      for (int64_t r = 0; r < depth_; ++r) std::fill(out + r * chunk_, out + r * chunk_ + columns, 0.0f);
      return;
    }
    const int thread = thread_index();
    float* dy = w.at<float>(dy_, thread);
    read_rows(p_.grad_output, n, group * outputs, outputs, first + offset, columns, dy, conversions_);
    // gcols_g (Cg*K x columns) = W_g^T (Cg*K x OCg, packed) * gradOutput_g (OCg x columns)
    sgemm(blocking_, w.at<float>(scratch_, thread), depth_, columns, outputs, weights_.group(w, group),
          MatrixRef{dy, kBlock, false}, false, out, chunk_);
  }
  // Channels [c0, c0 + Channels)' padded planes of sums (their padding taking what falls outside the
  // image, with weight 0) from their rows of the chunk's columns' gradient: each plane in order k,
  // position, neighbour. The channels (of one deformable group: the same points) go side by side, so that
  // one plane's additions, which chain through memory where neighbouring points share a slot, wait while
  // the others' run.
  template <int Channels>
  void scatter(int64_t c0, const NeighbourTable& table, const float* gcols, int64_t count, double* sums) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t points = g.kernel_points(), pitch = planes_shape_.pitch, stride = table.stride();
    for (int64_t k = 0; k < points; ++k) {
      const int64_t row = c0 / g.in_per_deformable_group() * points + k;
      const int32_t* base = table.base(row);
      const float* weights = table.weights(row);
      const float* gradient[Channels];
      for (int q = 0; q < Channels; ++q) gradient[q] = gcols + ((c0 + q) * points + k) * chunk_;
      for (int64_t j = 0; j < count; ++j) {
        const double w0 = weights[j], w1 = weights[stride + j], w2 = weights[2 * stride + j],
                     w3 = weights[3 * stride + j];
        for (int q = 0; q < Channels; ++q) {
          const double value = gradient[q][j];
          double *upper = sums + q * planes_shape_.slots + base[j], *lower = upper + pitch;
          upper[0] += value * w0;
          upper[1] += value * w1;
          lower[0] += value * w2;
          lower[1] += value * w3;
        }
      }
    }
  }
  // gradOffset of deformable group d, kernel point k at the chunk's block [first + offset, + kBlock):
  // each position's neighbour sums S0..S3 over the group's channels in order (4 doubles a position), then
  // its dx, dy and mask gradients from them (0 for a point outside the backward's rule).
  void offset_gradient(int64_t n, int64_t d, int64_t k, int64_t first, int64_t offset, int64_t count,
                       const NeighbourTable& table, const PointFractions* fractions, const float* planes,
                       const float* gcols, double* acc) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t columns = std::min(kBlock, count - offset), points = g.kernel_points();
    if (columns <= 0) return;
    const int32_t* base = table.base(d * points + k) + offset;
    const PointFractions* entries = fractions + (d * points + k) * chunk_ + offset;
    double* sums = acc;  // S_i of position j at sums[4*j + i]
    std::fill(sums, sums + 4 * kBlock, 0.0);
    for (int64_t c = d * g.in_per_deformable_group(); c < (d + 1) * g.in_per_deformable_group(); ++c) {
      kernels_->neighbour_sums(planes + c * planes_shape_.slots, planes_shape_.pitch, base,
                               gcols + (c * points + k) * chunk_ + offset, columns, sums);
    }
    double *dx = acc + 4 * kBlock, *dy = dx + kBlock, *dm = dy + kBlock;
    for (int64_t j = 0; j < columns; ++j) {
      const PointFractions& e = entries[j];
      const double* s = sums + 4 * j;
      const double down = e.down, right = e.right, up = 1 - down, left = 1 - right;
      dx[j] = e.inside ? e.mask * (up * (s[1] - s[0]) + down * (s[3] - s[2])) : 0.0;
      dy[j] = e.inside ? e.mask * (left * (s[2] - s[0]) + right * (s[3] - s[1])) : 0.0;
      dm[j] = e.inside ? (up * left * s[0] + up * right * s[1]) + (down * left * s[2] + down * right * s[3]) : 0.0;
    }
    for (int block = 0; block < 3; ++block)
      store_doubles(dx + block * kBlock, columns, p_.grad_offset, n, g.offset_channel(block, d, k), first + offset);
  }
  // values[i] into positions first + i of plane (n, c) of `out`, through float (kBlock at a time).
  void store_doubles(const double* values, int64_t count, const View5& out, int64_t n, int64_t c, int64_t first) const {
    float run[kBlock];
    for (int64_t i0 = 0; i0 < count; i0 += kBlock) {
      const int64_t run_count = std::min(kBlock, count - i0);
      for (int64_t i = 0; i < run_count; ++i) run[i] = static_cast<float>(values[i0 + i]);
      store_plane_floats(run, out, n, c, first + i0, run_count, conversions_);
    }
  }

  DeformProblem p_;
  int threads_;
  const Conversions16* conversions_;
  GemmBlocking blocking_;
  const DeformKernels* kernels_;
  int64_t positions_ = 0, depth_ = 0, chunk_ = kBlock;
  PaddedPlanes planes_shape_;
  PackedWeights weights_;
  WorkspaceLedger::Handle planes_ = -1, sums_ = -1, table_ = -1, fractions_ = -1, gcols_ = -1, dy_ = -1, scratch_ = -1,
                          offset_sums_ = -1;
};

class GemmBackwardWeight final : public OperatorStep {
 public:
  GemmBackwardWeight(const DeformProblem& p, StepBuilder& b)
      : p_(p), threads_(b.threads()), conversions_(b.cpu().conversions) {
    const DeformGeometry& g = p.geometry;
    positions_ = g.out_size[0] * g.out_size[1];
    depth_ = g.in_per_group() * g.kernel_points();
    row_blocks_ = (depth_ + kRowBlock - 1) / kRowBlock;
    blocking_ = plan_gemm_blocking(g.out_per_group(), std::min(depth_, kRowBlock), kBlock, b.cpu());
    const auto copies = static_cast<uint64_t>(threads_);
    dy_ = b.book_scratch("deform.grad_output", size_product({g.out_per_group(), kBlock}), sizeof(float), copies);
    columns_ = b.book_scratch("deform.columns", size_product({kRowBlock, kBlock}), sizeof(float), copies);
    result_ = b.book_scratch("deform.weight_sums", size_product({g.out_per_group(), kRowBlock}), sizeof(float), copies);
    scratch_ = b.book_scratch("deform.gemm", size_product({blocking_.scratch_floats()}), sizeof(float), copies);
  }

  int run(const Workspace& w) const override {
    const DeformGeometry& g = p_.geometry;
    return run_tasks(g.groups * row_blocks_, threads_, "deformable backward", [&](int64_t t) {
      const int64_t group = t / row_blocks_, r0 = t % row_blocks_ * kRowBlock, rows = std::min(kRowBlock, depth_ - r0);
      const int64_t outputs = g.out_per_group();
      const int thread = thread_index();
      float *dy = w.at<float>(dy_, thread), *columns = w.at<float>(columns_, thread),
            *result = w.at<float>(result_, thread);
      std::fill(result, result + outputs * kRowBlock, 0.0f);
      for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t first = 0; first < positions_; first += kBlock) {
          const int64_t count = std::min(kBlock, positions_ - first);
          read_rows(p_.grad_output, n, group * outputs, outputs, first, count, dy, conversions_);
          gather_columns(n, group, r0, rows, first, count, columns);
          // result (OCg x rows) += gradOutput_g (OCg x count) * columns^T (count x rows)
          sgemm(blocking_, w.at<float>(scratch_, thread), outputs, rows, count, MatrixRef{dy, kBlock, false},
                MatrixRef{columns, kBlock, true}, true, result, kRowBlock);
        }
      }
      const int64_t points = g.kernel_points();
      for (int64_t o = 0; o < outputs; ++o) {
        for (int64_t r = r0; r < r0 + rows; ++r) {
          const int64_t k = r % points;
          store_element(p_.grad_weight.data, p_.grad_weight.dtype,
                        p_.grad_weight.element(group * outputs + o, r / points, 0, k / g.kernel[1], k % g.kernel[1]),
                        static_cast<double>(result[o * kRowBlock + (r - r0)]));
        }
      }
    });
  }
  int64_t tasks() const override { return p_.geometry.groups * row_blocks_; }
  std::string detail() const override { return isa_detail(blocking_); }

 private:
  // Columns r0 .. r0 + rows of group `group` (r = ci*K + k) at positions [first, first + count) from
  // offsetOut[n, group*Cg + ci, oh*KH + kh, ow*KW + kw], kBlock apart.
  void gather_columns(int64_t n, int64_t group, int64_t r0, int64_t rows, int64_t first, int64_t count,
                      float* columns) const {
    const DeformGeometry& g = p_.geometry;
    const View5& v = p_.columns;
    const int64_t points = g.kernel_points();
    for (int64_t r = r0; r < r0 + rows; ++r) {
      const int64_t c = group * g.in_per_group() + r / points, kh = r % points / g.kernel[1], kw = r % g.kernel[1];
      float* out = columns + (r - r0) * kBlock;
      with_element_type(v, [&](const auto* base) {
        const int64_t step = g.kernel[1] * v.stride[4];
        for (int64_t j0 = 0; j0 < count;) {  // a piece of one output row at a time
          const int64_t oh = (first + j0) / g.out_size[1], ow0 = (first + j0) % g.out_size[1];
          const int64_t run = std::min(count - j0, g.out_size[1] - ow0);
          const auto* source = base + v.element(n, c, 0, oh * g.kernel[0] + kh, ow0 * g.kernel[1] + kw);
          for (int64_t q = 0; q < run; ++q) out[j0 + q] = static_cast<float>(source[q * step]);
          j0 += run;
        }
      });
    }
  }
  DeformProblem p_;
  int threads_;
  const Conversions16* conversions_;
  GemmBlocking blocking_;
  int64_t positions_ = 0, depth_ = 0, row_blocks_ = 0;
  WorkspaceLedger::Handle dy_ = -1, columns_ = -1, result_ = -1, scratch_ = -1;
};

class LanesBias final : public OperatorStep {
 public:
  LanesBias(const DeformProblem& p, StepBuilder& b) : p_(p), threads_(b.threads()), conversions_(b.cpu().conversions) {}
  int run(const Workspace&) const override {
    reduce_bias(p_.grad_output, p_.grad_bias, threads_, conversions_);
    return 0;
  }
  int64_t tasks() const override { return p_.geometry.out_channels; }

 private:
  DeformProblem p_;
  int threads_;
  const Conversions16* conversions_;
};

Support supports_data(const DeformProblem& p, const CpuFeatures&) {
  if (may_overlap(p.grad_input) || may_overlap(p.grad_offset)) return refuse("an output overlaps itself");
  if (size_product({p.geometry.in_size[0] + 3, p.geometry.in_size[1] + 2}) >= INT32_MAX)
    return refuse("input planes past 2^31 - 1 slots");
  return kSupported;
}
Support supports_weight(const DeformProblem& p, const CpuFeatures&) {
  return may_overlap(p.grad_weight) ? refuse("an output overlaps itself") : kSupported;
}
Support supports_bias(const DeformProblem& p, const CpuFeatures&) {
  if (p.grad_output.numel() == 0) return refuse("a sum over nothing");
  return may_overlap(p.grad_bias) ? refuse("an output overlaps itself") : kSupported;
}

}  // namespace

extern const DeformImpl kDeformGemmBackwardData = {
    "gemm", "gemm", DeformPass::kBackwardData, supports_data,
    [](const DeformProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new GemmBackwardData(p, b)); }};
extern const DeformImpl kDeformGemmBackwardWeight = {
    "gemm", "gemm", DeformPass::kBackwardWeight, supports_weight,
    [](const DeformProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new GemmBackwardWeight(p, b)); }};
extern const DeformImpl kDeformLanesBias = {
    "lanes", "lanes", DeformPass::kBias, supports_bias,
    [](const DeformProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new LanesBias(p, b)); }};

}  // namespace aclnn_cpu
