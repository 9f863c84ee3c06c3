// winograd: a forward convolution with a 3x3 kernel of stride 1 in H and W (aclnnConvolution's dense 3x3
// layers, and a transposed layer's gradInput) by Winograd's minimal filtering F(2x2, 3x3): each 2x2 block
// of outputs ("tile") of a channel is
//   Y = A^T [ sum over q of (G w_q G^T) .* (B^T x_q B) ] A        (.* entrywise, 4x4), q = (kd, ci)
// where x_q is the tile's 4x4 input patch in input plane od * sD - pD + kd * dD (zeros outside the
// input) and w_q the 3x3 kernel of (co, ci, kd): 16 products per channel pair and tile where the direct
// sum takes 36.
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// The sum over q is 16 GEMMs, one per entry e of the 4x4 transforms:
//   M_e (Cout x tiles) = U_e (Cout x kD * Cin, packed once per execution) * V_e (kD * Cin x tiles),
// U_e = (G w G^T)_e, V_e = (B^T x B)_e, each entry of M the GEMM's blocked sum over q
// (kernels/common/blocked_sum.h). Each task (a run of rows of tiles, and a block of output channels)
// transforms its tiles' patches into V, runs the 16 products and transforms M back into the output
// rows, adding the forward operators' bias to the finished values. The transforms (kits/winograd_transforms.h) are
// additions and halvings in a fixed order, one statement each (nothing to fuse into a multiply-add), so
// every instruction set gives the same bits, for any thread count.
//
// Accuracy: the transforms add a few roundings to each output (each V entry is a sum of up to 4 inputs,
// each U entry of up to 9 weights times 1/4, the output transform adds 9 of M's entries) on top of the
// GEMM's blocked sums (docs/kernels.md). An Inf or NaN anywhere in a patch reaches every output of its
// tile through the transforms (Inf - Inf), so a task that reads one says so
// (PlanBuilder::source_tested) and the non-finite repair recomputes the result as the reference does.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/finite.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/kits/kit.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

constexpr int kEntries = 16;          // entries of a 4x4 transform: the 16 products
constexpr int64_t kMinChannels = 64;  // channels in and out below which the transforms cost what they save
// The most of U (16 kD Cin Cout floats, transformed and read again by every task) per tile of the problem:
// past it (a 7x7 plane of 512 channels: 32 K) transforming and streaming U costs more than the products
// save, and `direct` is faster.
constexpr double kUFloatsPerTile = 4096;
constexpr int64_t kMinTiles = 48, kMaxTiles = 128;  // tiles a task takes (columns of its products)
constexpr int64_t kFewestTiles = 16;                // below kMinTiles where the scratch allows no more
constexpr int64_t kTaskBytes = int64_t{3} << 19;    // a task's V and M, at most (with U's rows, about L2)
constexpr int kMaxRows = 16;                        // the most rows a micro-kernel's sliver holds (MR)
constexpr int64_t kAhead = 4;                       // channels ahead whose input rows are prefetched
constexpr int64_t kPageFloats = 1024;               // 4 KiB
constexpr int64_t kSkew = 16;                       // floats between each entry's region and the next's past their size

// The forward convolutions it computes: a 3x3 kernel in H and W, stride and dilation 1 there (any kernel
// depth, stride, dilation and padding in D: the depth taps are more rows of the products), one group,
// FLOAT input and weights used as they are, at least kMinChannels channels each way.
// A direct layer's gradInput of stride 1 with padding within the kernel is the forward convolution of dY
// by W with its channel roles swapped and its taps flipped (conv_problem.h: flippable): that one.
bool flipped(const ConvProblem& p) { return p.input_grad == InputGrad::kBackwardData; }

Support supports(const ConvProblem& p, const CpuFeatures& cpu) {
  if (flipped(p) && !flippable(p.geometry)) return refuse("not stride 1 with padding within the kernel");
  const ConvGeometry g = flipped(p) ? flipped_geometry(p.geometry) : p.geometry;
  const View5& source = flipped(p) ? p.dst : p.src;
  if (g.groups != 1) return refuse("grouped convolution");
  if (g.kernel[1] != 3 || g.kernel[2] != 3) return refuse("kernel not 3x3 in H and W");
  for (int a = 1; a < 3; ++a) {
    if (g.stride[a] != 1 || g.dilation[a] != 1) return refuse("stride or dilation past 1 in H or W");
  }
  if (g.pad[1] > 2 || g.pad[2] > 2) return refuse("padding past the kernel in H or W");
  if (left_sliver_rows(plan_gemm_blocking(kMinChannels, kMaxTiles, kMinChannels, cpu)) > kMaxRows)
    return refuse("micro-kernel slivers past 16 rows");  // (the weight transform's buffer)
  if (source.dtype != ACL_FLOAT || p.wei.dtype != ACL_FLOAT || p.math != MathMode::kFull)
    return refuse("source or weight not FLOAT used as it is");
  if (g.src_channels_per_group < kMinChannels || g.dst_channels_per_group < kMinChannels)
    return refuse("fewer than 64 channels in or out");
  // (double: the product of the channel counts may pass 64 bits; the tiles are at least 1)
  const double tiles =
      double(g.batch) * double(g.dst_size[0]) * double(ceil_div(g.dst_size[1], 2)) * double(ceil_div(g.dst_size[2], 2));
  const double u_floats =
      kEntries * double(g.kernel[0]) * double(g.src_channels_per_group) * double(g.dst_channels_per_group);
  if (u_floats > kUFloatsPerTile * tiles) return refuse("transformed weights past 4096 floats per tile");
  // Every size the plan computes far inside 64 bits: U, and a task's V, M and output rows (a task's columns
  // are at most kMaxTiles, or one row of tiles, rounded up to whole micro-kernel tiles).
  const double columns = std::max<double>(kMaxTiles, double(ceil_div(g.dst_size[2], 2))) + 64;
  const double task_floats =
      kEntries * (double(g.kernel[0]) * double(g.src_channels_per_group) + double(g.dst_channels_per_group)) * columns +
      2 * double(kMaxTiles) * double(g.dst_channels_per_group) * double(g.dst_size[2]);
  if (u_floats > 0x1p40 || task_floats > 0x1p40)
    return refuse("transformed weights or a task's scratch past 2^40 floats");
  return kSupported;
}

class WinogradForward final : public ConvStep {
 public:
  WinogradForward(const ConvProblem& p, PlanBuilder& b)
      : flipped_(flipped(p)),
        g_(flipped_ ? flipped_geometry(p.geometry) : p.geometry),
        src_(flipped_ ? p.dst : p.src),
        wei_(p.wei),
        threads_(b.threads()),
        output_(p.grad_input, b, "gradInput.f32", true, result_bias(p), bias_added_in_place(p) != nullptr),
        bias_(bias_added_in_place(p), b, "winograd.bias") {
    cin_ = g_.src_channels_per_group, cout_ = g_.dst_channels_per_group, depth_ = g_.kernel[0] * cin_;
    tiles_h_ = ceil_div(g_.dst_size[1], 2), tiles_w_ = ceil_div(g_.dst_size[2], 2);
    // A task's tiles: a run of rows of tiles ("units": tile row ty of output plane od of sample n is unit
    // (n * D + od) * tiles_h + ty; D planes of the output), as
    // many as make between kMinTiles and kMaxTiles columns of the products (fewer where V and M would pass
    // the task's share of scratch) at the micro-kernel's least time per column (a row of more is a task
    // alone). The share: kTaskBytes, or up to half of U where that is larger (what the
    // plan's workspace budget allows a thread).
    const int64_t units = g_.batch * g_.dst_size[0] * tiles_h_, floats = kEntries * int64_t{sizeof(float)};
    const int64_t task_bytes = std::max(kTaskBytes, std::min(floats * depth_ * cout_ / 2, 4 * kTaskBytes));
    const int64_t most = std::clamp<int64_t>(task_bytes / (floats * (depth_ + cout_)), kFewestTiles, kMaxTiles);
    const int64_t least = std::min({kMinTiles, most, units * tiles_w_});
    const int64_t tile_columns = right_sliver_columns(plan_gemm_blocking(cout_, kMaxTiles, depth_, b.cpu()));
    units_per_task_ = 1;
    double best = 2;  // (per tile)
    for (int64_t k = 1; k <= units && k * tiles_w_ <= most; ++k) {
      // (below `least`, only as the most rows that fit)
      const bool fits_next = k < units && (k + 1) * tiles_w_ <= most;
      if (k * tiles_w_ < least && fits_next) continue;
      // (the micro-kernel's time per column: a last tile of at most half its columns runs at about 3/4 of a
      // whole one's time)
      const int64_t tiles = k * tiles_w_, rest = tiles % tile_columns;
      const double cost = (double(tiles / tile_columns) + (rest == 0                  ? 0.0
                                                           : rest <= tile_columns / 2 ? 0.75
                                                                                      : 1.0)) /
                          double(tiles);
      if (cost <= best) best = cost, units_per_task_ = k;  // (the most tiles among equals)
    }
    tile_blocks_ = ceil_div(units, units_per_task_);
    rows_per_task_ = std::min(units_per_task_, tiles_h_);  // (the most of one plane's a task holds)
    const int64_t max_tiles = units_per_task_ * tiles_w_;
    blocking_ = plan_gemm_blocking(cout_, max_tiles, depth_, b.cpu());
    transforms_ = &isa_kit(blocking_.isa).winograd;
    const int64_t mr = left_sliver_rows(blocking_), nr = right_sliver_columns(blocking_);
    // Blocks of output channels (whole slivers) where the tiles alone offer too few tasks.
    const int64_t slivers = ceil_div(cout_, mr);
    // (as many as make 4 tasks per thread, of at least 2 slivers each)
    const int64_t wanted = ceil_div(4 * threads_, tile_blocks_);
    block_channels_ = (wanted <= 1 ? slivers : std::max<int64_t>(std::min<int64_t>(2, slivers), slivers / wanted)) * mr;
    channel_blocks_ = ceil_div(cout_, block_channels_);
    columns_ = round_up(max_tiles, nr);
    // (each entry's U, V and M a line past a multiple of 4 KiB from the last: the 16 streams a transform
    // reads or writes at once then fall into different cache sets)
    const auto skewed = [](int64_t count) { return round_up(count, kPageFloats) + kSkew; };
    u_stride_ = skewed(packed_left_floats(blocking_, cout_, depth_));
    v_stride_ = skewed(depth_ * columns_);
    m_stride_ = skewed(block_channels_ * columns_);
    transformed_ = b.book_scratch("winograd.U", kEntries * u_stride_, sizeof(float));
    offsets_ = b.book_scratch("winograd.row_offsets", depth_, sizeof(int64_t));
    // (a byte per task: 1 where every value it read was finite, for the non-finite repair)
    source_finite_ = b.book_shared("winograd.source_finite", tile_blocks_ * channel_blocks_, 1);
    weights_finite_ = b.book_shared("winograd.weights_finite", slivers, 1);
    b.source_tested = {source_finite_, tile_blocks_ * channel_blocks_};
    b.weights_tested = {weights_finite_, slivers, true};
    // per thread: V (16 x kD * Cin x columns), M (16 x block_channels x columns), the patch rows of one
    // channel (column transforms of 2 * rows + 2 input rows) and one padded input row, and the output rows
    // of a plane's band per channel (where stored by parts) with the output transform's scratch.
    v_ = b.book_scratch("winograd.V", kEntries * v_stride_, sizeof(float), threads_);
    m_ = b.book_scratch("winograd.M", kEntries * m_stride_, sizeof(float), threads_);
    patch_ = b.book_scratch("winograd.patch_rows", (2 * rows_per_task_ + 2) * 4 * tiles_w_ + 2 * tiles_w_ + 2,
                            sizeof(float), threads_);
    rows_ = b.book_scratch("winograd.output_rows",
                           block_channels_ * 2 * rows_per_task_ * g_.dst_size[2] + 12 * rows_per_task_ * tiles_w_,
                           sizeof(float), threads_);
  }

  int64_t tasks() const override { return tile_blocks_ * channel_blocks_; }
  std::string detail() const override { return isa_detail(blocking_); }

  int run(const Workspace& w, const StepInputs&) const override {
    bias_.fill(w);
    int64_t* offsets = w.at<int64_t>(offsets_);
    for (int64_t q = 0; q < depth_; ++q) offsets[q] = q * columns_;
    const int64_t mr = left_sliver_rows(blocking_);
    unsigned char* weights_finite = w.at<unsigned char>(weights_finite_);
    int status = run_tasks(ceil_div(cout_, mr), threads_, "winograd weights", [&](int64_t s) {
      weights_finite[s] = transform_weights(w, s * mr, std::min(cout_, s * mr + mr));
    });
    if (status != ACLNN_SUCCESS) return status;
    float* out = output_.data(w);
    unsigned char* source_finite = w.at<unsigned char>(source_finite_);
    status = run_tasks(tasks(), threads_, "winograd forward", [&](int64_t t) {
      source_finite[t] = run_task(w, out, t / channel_blocks_, t % channel_blocks_);
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, true);
    return status;
  }

 private:
  // U_e's rows [c0, c1) (one sliver of MR) into the packed slivers: U = G w G^T for every kernel depth kd
  // and ci, at depth q = kd * Cin + ci of the products. Returns whether the sliver's U is finite (false also
  // where a finite weight overflowed in the transform: the repair then recomputes every channel).
  bool transform_weights(const Workspace& w, int64_t c0, int64_t c1) const {
    const int64_t mr = left_sliver_rows(blocking_);
    float* sliver =
        w.at<float>(transformed_) + c0 * depth_;  // (entry (co, q) of U_e at + e * u_stride + q * mr + co - c0)
    const float* data = static_cast<const float*>(wei_.data);
    // (flipped: kernel (co, ci, kd) of the flipped convolution is W's (ci, co, kD - 1 - kd), its taps reversed)
    const int64_t sh = flipped_ ? -wei_.stride[3] : wei_.stride[3], sw = flipped_ ? -wei_.stride[4] : wei_.stride[4];
    for (int64_t q = 0; q < depth_; ++q) {
      float u[kEntries][kMaxRows] = {};
      for (int64_t co = c0; co < c1; ++co) {
        const int64_t ci = q % cin_, kd = q / cin_;
        const float* k =
            data + (flipped_ ? wei_.element(ci, co, g_.kernel[0] - 1 - kd, 2, 2) : wei_.element(co, ci, kd, 0, 0));
        float gk[4][3];  // G k
        for (int j = 0; j < 3; ++j) {
          const float k0 = k[j * sw], k1 = k[sh + j * sw], k2 = k[2 * sh + j * sw];
          const float s = k0 + k2;
          const float plus = s + k1, minus = s - k1;
          gk[0][j] = k0;
          gk[1][j] = plus * 0.5f;
          gk[2][j] = minus * 0.5f;
          gk[3][j] = k2;
        }
        for (int i = 0; i < 4; ++i) {  // (G k) G^T, row i
          const float s = gk[i][0] + gk[i][2];
          const float plus = s + gk[i][1], minus = s - gk[i][1];
          u[i * 4 + 0][co - c0] = gk[i][0];
          u[i * 4 + 1][co - c0] = plus * 0.5f;
          u[i * 4 + 2][co - c0] = minus * 0.5f;
          u[i * 4 + 3][co - c0] = gk[i][2];
        }
      }
      for (int e = 0; e < kEntries; ++e) std::memcpy(sliver + e * u_stride_ + q * mr, u[e], mr * sizeof(float));
    }
    bool ok = true;
    for (int e = 0; e < kEntries; ++e) ok = ok && all_finite(sliver + e * u_stride_, depth_ * mr);
    return ok;
  }

  // One task: tiles of block `tb`, output channels of block `cb`. Returns whether every input read was finite.
  bool run_task(const Workspace& w, float* out, int64_t tb, int64_t cb) const {
    const int64_t planes = g_.dst_size[0];
    const int64_t u0 = tb * units_per_task_, u1 = std::min(g_.batch * planes * tiles_h_, u0 + units_per_task_);
    const int64_t tiles = (u1 - u0) * tiles_w_;
    // Each output plane's tile rows [ty0, ty1) among the task's (plane od of sample n; its first tile at
    // column (slab * tiles_h + ty0 - u0) * tiles_w, slab = n * D + od).
    const auto for_each_plane = [&](auto body) {
      for (int64_t slab = u0 / tiles_h_; slab * tiles_h_ < u1; ++slab) {
        const int64_t ty0 = std::max(u0, slab * tiles_h_) - slab * tiles_h_,
                      ty1 = std::min(u1, (slab + 1) * tiles_h_) - slab * tiles_h_;
        body(slab / planes, slab % planes, ty0, ty1, (slab * tiles_h_ + ty0 - u0) * tiles_w_);
      }
    };
    const int64_t c0 = cb * block_channels_, c1 = std::min(cout_, c0 + block_channels_);
    const int thread = thread_index();
    float* v = w.at<float>(v_, thread);
    float* m = w.at<float>(m_, thread);
    bool ok = true;
    // V's row q = kd * Cin + ci: the patches of input plane id = od * sD - pD + kd * dD (zeros outside the input).
    for_each_plane([&](int64_t n, int64_t od, int64_t ty0, int64_t ty1, int64_t column) {
      for (int64_t kd = 0; kd < g_.kernel[0]; ++kd) {
        const int64_t id = od * g_.stride[0] - g_.pad[0] + kd * g_.dilation[0];
        // (the input rows the band reads, of unit stride: those of the channel kAhead on asked for while one
        // is transformed, the hardware prefetchers not following a few short rows a plane apart)
        const int64_t ih0 = std::max<int64_t>(0, 2 * ty0 - g_.pad[1]),
                      ih1 = std::min(g_.src_size[1], 2 * ty1 + 2 - g_.pad[1]);
        const bool ahead = src_.stride[4] == 1 && ih1 > ih0;
        for (int64_t ci = 0; ci < cin_; ++ci) {
          float* row = v + (kd * cin_ + ci) * columns_ + column;
          if (id >= 0 && id < g_.src_size[0]) {
            if (ahead && ci + kAhead < cin_)
              prefetch_rows<3>(static_cast<const float*>(src_.data) + src_.element(n, ci + kAhead, id, ih0, 0),
                               ih1 - ih0, g_.src_size[2], src_.stride[3]);
            ok = transform_patches(w, n, id, ci, ty0, ty1, row) && ok;
          } else {
            for (int64_t e = 0; e < kEntries; ++e)
              std::fill(row + e * v_stride_, row + e * v_stride_ + (ty1 - ty0) * tiles_w_, 0.0f);
          }
        }
      }
    });
    // (the columns past the tiles, which the micro-kernel reads: zeros)
    for (int64_t e = 0; e < kEntries; ++e) {
      for (int64_t q = 0; q < depth_; ++q)
        std::fill(v + e * v_stride_ + q * columns_ + tiles, v + e * v_stride_ + (q + 1) * columns_, 0.0f);
    }
    const float* u = w.at<float>(transformed_);
    const int64_t* offsets = w.at<int64_t>(offsets_);
    for (int e = 0; e < kEntries; ++e) {
      // M_e[c0:c1] (block x tiles) = U_e[c0:c1] (block x kD * Cin) * V_e (kD * Cin x tiles)
      const PackedLeft ue{u + e * u_stride_ + c0 * depth_, depth_, 0};
      sgemm_rows(blocking_, c1 - c0, tiles, depth_, ue, v + e * v_stride_, offsets, m + e * m_stride_, columns_);
    }
    for_each_plane([&](int64_t n, int64_t od, int64_t ty0, int64_t ty1, int64_t column) {
      store_outputs(w, out, m + column, n, od, ty0, ty1, c0, c1);
    });
    return ok;
  }

  // V's columns of tile rows [ty0, ty1) of channel ci, input plane id, sample n (entry e's at v + e *
  // v_stride): B^T x B of each tile's patch. Returns whether every input read was finite.
  bool transform_patches(const Workspace& w, int64_t n, int64_t id, int64_t ci, int64_t ty0, int64_t ty1,
                         float* v) const {
    const int64_t tw = tiles_w_, height = g_.src_size[1], in_w = g_.src_size[2], pw = g_.pad[2];
    float* cols = w.at<float>(patch_, thread_index());      // per input row: 4 arrays of tw column transforms
    float* row = cols + (2 * rows_per_task_ + 2) * 4 * tw;  // (2 tw + 2 positions)
    const float* data = static_cast<const float*>(src_.data);
    const int64_t sx = src_.stride[4], width = 2 * tw + 2;
    const int64_t x0 = std::min(width, pw), x1 = std::max(x0, std::min(width, in_w + pw));  // the input's positions
    bool ok = true;
    const int64_t rows_each = ty1 - ty0 + 1, rows = 2 * rows_each;
    for (int64_t r = 0; r < rows; ++r) {
      // The padded input row (position x is input column x - pad, zero outside the input), then its column
      // transforms.
      const int64_t ih = 2 * ty0 + r - g_.pad[1];
      if (ih < 0 || ih >= height) {
        std::fill(row, row + width, 0.0f);
      } else {
        const float* in = data + src_.element(n, ci, id, ih, 0);  // (input column 0: position pw)
        std::fill(row, row + x0, 0.0f);
        if (sx == 1) {
          std::memcpy(row + x0, in + (x0 - pw), static_cast<size_t>(x1 - x0) * sizeof(float));
        } else {
          for (int64_t x = x0; x < x1; ++x) row[x] = in[(x - pw) * sx];
        }
        std::fill(row + x1, row + width, 0.0f);
        // (unit stride: tested in the input, whose loads the copy's stores would stall in the row)
        ok = all_finite(sx == 1 ? in + (x0 - pw) : row + x0, x1 - x0) && ok;
      }
      // (input rows of even index first, then odd: rows q apart in each, tw positions each)
      transforms_->row_columns(row, tw, cols + ((r % 2) * 4 * rows_each + r / 2) * tw, rows_each * tw);
    }
    transforms_->tile_entries(cols, (ty1 - ty0) * tw, tw, rows_each * tw, v, v_stride_);
    return ok;
  }

  // Output rows [2 ty0, 2 ty1) of plane od of channels [c0, c1), sample n (those inside the output): A^T M A
  // of each tile (entry e of tile u of the band at m + e * m_stride + (co - c0) * columns + u), plus the bias.
  void store_outputs(const Workspace& w, float* out, const float* m, int64_t n, int64_t od, int64_t ty0, int64_t ty1,
                     int64_t c0, int64_t c1) const {
    const int64_t out_h = g_.dst_size[1], out_w = g_.dst_size[2], plane = g_.dst_size[0] * out_h * out_w, tw = tiles_w_,
                  first = (od * out_h + 2 * ty0) * out_w;
    const int64_t count = (ty1 - ty0) * tw, lines = std::min(out_h, 2 * ty1) - 2 * ty0, pairs = out_w / 2;
    const bool parts = output_.stores_parts();
    float* buffer = w.at<float>(rows_, thread_index());  // (parts: the band's rows of each channel)
    float* a = buffer + (parts ? block_channels_ * lines * out_w : 0);
    float* y = a + 8 * count;
    const float* bias = bias_.from(w, c0);
    for (int64_t co = c0; co < c1; ++co) {
      transforms_->tile_outputs(m + (co - c0) * columns_, m_stride_, count,
                                bias != nullptr ? bias + (co - c0) : nullptr, a, y);
      float* rows = parts ? buffer + (co - c0) * lines * out_w : out + (n * cout_ + co) * plane + first;
      for (int64_t line = 0; line < lines; ++line) {  // output row 2 ty0 + line: row line % 2 of tile row line / 2
        const float* left = y + 2 * (line % 2) * count + line / 2 * tw;
        float* row = rows + line * out_w;
        transforms_->store_pairs(left, left + count, pairs, row);
        if (pairs < tw) row[2 * pairs] = left[pairs];  // (an odd width: the last tile's left column)
      }
    }
    if (parts) output_.store_rows(buffer, lines * out_w, c1 - c0, n, c0, first, lines * out_w);
  }

  bool flipped_;     // a direct layer's gradInput (flipped())
  ConvGeometry g_;   // the forward convolution computed (flipped: the direct layer's flipped geometry)
  View5 src_, wei_;  // its source (flipped: dY) and W as the user gave it
  int threads_;
  DenseFloatOutput output_;
  BiasFloats bias_;  // the forward operators' bias, where the rows are stored in place
  GemmBlocking blocking_;
  const WinogradTransforms* transforms_ = nullptr;  // (the products' instruction set's)
  int64_t cin_ = 0, cout_ = 0, tiles_h_ = 0, tiles_w_ = 0;
  int64_t depth_ = 0;  // the products' depth: kernel depth x Cin
  int64_t units_per_task_ = 1, rows_per_task_ = 1, tile_blocks_ = 1, channel_blocks_ = 1, block_channels_ = 1;
  int64_t columns_ = 0, u_stride_ = 0, v_stride_ = 0, m_stride_ = 0;  // floats
  WorkspaceLedger::Handle transformed_ = -1, offsets_ = -1, source_finite_ = -1, weights_finite_ = -1;
  WorkspaceLedger::Handle v_ = -1, m_ = -1, patch_ = -1, rows_ = -1;  // per thread
};

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<WinogradForward>(p, builder);
}

}  // namespace

extern const ConvImpl kWinogradBackwardData = {"winograd", "winograd", ConvPass::kBackwardData, supports, plan};
extern const ConvImpl kWinogradForward = for_pass(kWinogradBackwardData, ConvPass::kForward);

}  // namespace aclnn_cpu
