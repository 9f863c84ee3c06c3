// aclnnQuantConvolution as an integer GEMM per image, group and block of output positions:
//   acc[Cout_g x B] = W[Cout_g x K] . columns[K x B]      (K = Cg*KD*KH*KW, B <= kBlock positions)
// int8 widened to int16 pairs along K (kernels/kits/quant_kernels.h), summed by the kit's tile in
// int32 modulo 2^32, then the operator's float steps (kernels/core/quant_problem.h) per output.
// Phase 2 first packs the weights (rows padded to the tile's 4 with zeros, K to even) and reads the
// scale and bias once per channel; then each task (n, g, block) unrolls its block's columns into its
// thread's scratch (x's pad value outside the image) and runs the tiles over them.
#include <algorithm>
#include <memory>

#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/kits/kit.h"
#include "kernels/quant/quant_entries.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kBlock = 128;  // output positions a task unrolls (a multiple of kQuantTileCols)

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

class GemmS8 final : public OperatorStep {
 public:
  GemmS8(const QuantProblem& p, StepBuilder& b) : p_(p), threads_(b.threads()), kernels_(b.cpu().kit->quant) {
    const ConvGeometry& g = p.geometry;
    depth_ = g.src_channels_per_group * g.kernel_volume();
    pairs_ = (depth_ + 1) / 2;
    rows_ = round_up(g.dst_channels_per_group, kQuantTileRows);
    positions_ = g.dst_plane();
    block_ = std::min(kBlock, round_up(positions_, kQuantTileCols));
    blocks_ = (positions_ + block_ - 1) / block_;
    weights_ = b.book_scratch("quant_weights", static_cast<uint64_t>(g.groups * rows_ * pairs_ * 2), 2);
    channels_ = b.book_scratch("quant_channels", static_cast<uint64_t>(g.groups * g.dst_channels_per_group),
                               sizeof(ChannelDequant));
    columns_ = b.book_scratch("quant_columns", static_cast<uint64_t>(pairs_ * block_ * 2), 2,
                              static_cast<uint64_t>(threads_));
  }

  int run(const Workspace& workspace) const override {
    const ConvGeometry& g = p_.geometry;
    int16_t* weights = workspace.at<int16_t>(weights_);
    ChannelDequant* channels = workspace.at<ChannelDequant>(channels_);
    const int64_t out_channels = g.groups * g.dst_channels_per_group;
    int status = run_tasks(out_channels, threads_, "aclnnQuantConvolution", [&](int64_t o) {
      pack_weight_row(o, weights);
      channels[o] = channel_dequant(p_, o);
    });
    if (status != 0) return status;
    return run_tasks(g.batch * g.groups * blocks_, threads_, "aclnnQuantConvolution", [&](int64_t t) {
      const int64_t block = t % blocks_, group = t / blocks_ % g.groups, n = t / blocks_ / g.groups;
      run_block(n, group, block, weights, channels, workspace.at<int16_t>(columns_, thread_index()));
    });
  }
  int64_t tasks() const override { return p_.geometry.batch * p_.geometry.groups * blocks_; }
  std::string detail() const override { return "block=" + std::to_string(block_); }

 private:
  // Output channel o's weights as its group's row o % Cout_g: pairs (w[k], w[k+1]), k in (ci, kd, kh, kw)
  // order, zero past K; the padding rows past Cout_g stay zero (written by the group's last channel).
  void pack_weight_row(int64_t o, int16_t* weights) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t group = o / g.dst_channels_per_group, row = o % g.dst_channels_per_group;
    int16_t* out = weights + 2 * pairs_ * (group * rows_ + row);
    const int8_t* w = static_cast<const int8_t*>(p_.weight.data);
    int64_t k = 0;
    for (int64_t ci = 0; ci < g.src_channels_per_group; ++ci) {
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw) out[k++] = w[p_.weight.element(o, ci, kd, kh, kw)];
        }
      }
    }
    if (depth_ % 2 != 0) out[depth_] = 0;
    if (row + 1 == g.dst_channels_per_group) {
      std::fill(out + 2 * pairs_, weights + 2 * pairs_ * (group + 1) * rows_, int16_t{0});
    }
  }

  // The block's columns (pairs of K, then positions), then its tiles.
  void run_block(int64_t n, int64_t group, int64_t block, const int16_t* weights, const ChannelDequant* channels,
                 int16_t* columns) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t first = block * block_, count = std::min(block_, positions_ - first);
    // Each position's first input coordinate per axis (o*stride - pad) and its output element offset.
    int64_t start[3][kBlock], out_offset[kBlock];
    for (int64_t j = 0; j < count; ++j) {
      const int64_t p = first + j, o[3] = {p / (g.dst_size[1] * g.dst_size[2]), p / g.dst_size[2] % g.dst_size[1],
                                           p % g.dst_size[2]};
      for (int a = 0; a < 3; ++a) start[a][j] = o[a] * g.stride[a] - g.pad[a];
      out_offset[j] = o[0] * p_.output.stride[2] + o[1] * p_.output.stride[3] + o[2] * p_.output.stride[4];
    }
    unroll_columns(n, group, count, start, columns);
    int32_t acc[kQuantTileRows * kQuantTileCols];
    for (int64_t r0 = 0; r0 < g.dst_channels_per_group; r0 += kQuantTileRows) {
      const int64_t rows = std::min<int64_t>(kQuantTileRows, g.dst_channels_per_group - r0);
      const int16_t* tile_weights = weights + 2 * pairs_ * (group * rows_ + r0);
      for (int64_t j0 = 0; j0 < count; j0 += kQuantTileCols) {
        // acc[4 x 16] = W[rows r0.. x K] . columns[K x positions j0..]
        kernels_->tile(tile_weights, pairs_, columns + 2 * j0, block_, acc);
        const int64_t cols = std::min<int64_t>(kQuantTileCols, count - j0);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t o = group * g.dst_channels_per_group + r0 + r;
          const int64_t base = p_.output.offset + n * p_.output.stride[0] + o * p_.output.stride[1];
          for (int64_t j = 0; j < cols; ++j) {
            store_rounded(p_.output, base + out_offset[j0 + j], dequantize(acc[r * kQuantTileCols + j], channels[o]));
          }
        }
      }
    }
  }

  // columns[2 * (q * block_ + j) + k % 2] = x at position j's window element k (q = k / 2); zero for the
  // odd K's last slot and for positions past `count`.
  void unroll_columns(int64_t n, int64_t group, int64_t count, const int64_t (&start)[3][kBlock],
                      int16_t* columns) const {
    const ConvGeometry& g = p_.geometry;
    const int8_t* x = static_cast<const int8_t*>(p_.input.data);
    int64_t k = 0;
    for (int64_t ci = 0; ci < g.src_channels_per_group; ++ci) {
      const int64_t plane = p_.input.offset + n * p_.input.stride[0] +
                            (group * g.src_channels_per_group + ci) * p_.input.stride[1];
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++k) {
            int16_t* slot = columns + 2 * (k / 2) * block_ + k % 2;
            const int64_t shift[3] = {kd * g.dilation[0], kh * g.dilation[1], kw * g.dilation[2]};
            for (int64_t j = 0; j < count; ++j) {
              const int64_t d = start[0][j] + shift[0], h = start[1][j] + shift[1], w = start[2][j] + shift[2];
              const bool inside = d >= 0 && d < g.src_size[0] && h >= 0 && h < g.src_size[1] && w >= 0 &&
                                  w < g.src_size[2];
              slot[2 * j] = inside ? x[plane + d * p_.input.stride[2] + h * p_.input.stride[3] +
                                       w * p_.input.stride[4]]
                                   : p_.pad_value;
            }
            for (int64_t j = count; j < block_; ++j) slot[2 * j] = 0;
          }
        }
      }
    }
    if (depth_ % 2 != 0) {
      int16_t* slot = columns + 2 * (depth_ / 2) * block_ + 1;
      for (int64_t j = 0; j < block_; ++j) slot[2 * j] = 0;
    }
  }

  QuantProblem p_;
  int threads_;
  const QuantKernels* kernels_;
  int64_t depth_ = 0, pairs_ = 0, rows_ = 0, positions_ = 0, block_ = 0, blocks_ = 0;
  WorkspaceLedger::Handle weights_ = -1, channels_ = -1, columns_ = -1;
};

Support supports_gemm_s8(const QuantProblem& p, const CpuFeatures&) {
  if (may_overlap(p.output)) return refuse("output overlaps itself");
  return kSupported;
}

}  // namespace

extern const QuantImpl kQuantGemmS8 = {
    "gemm_s8", "gemm", supports_gemm_s8,
    [](const QuantProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new GemmS8(p, b)); }};

}  // namespace aclnn_cpu
