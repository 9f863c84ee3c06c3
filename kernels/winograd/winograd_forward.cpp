// winograd: a forward convolution with a 3x3 kernel of stride 1 (aclnnConvolution's dense 3x3 layers,
// and a transposed layer's gradInput of stride 1) by Winograd's minimal filtering F(2x2, 3x3): each
// 2x2 block of outputs ("tile") of a channel is
//   Y = A^T [ sum over ci of (G w G^T) .* (B^T x B) ] A        (.* entrywise, 4x4)
// where x is the tile's 4x4 input patch (zeros outside the input) and w the 3x3 kernel of (co, ci):
// 16 products per channel pair and tile where the direct sum takes 36.
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// The sum over ci is 16 GEMMs, one per entry e of the 4x4 transforms:
//   M_e (Cout x tiles) = U_e (Cout x Cin, packed once per execution) * V_e (Cin x tiles),
// U_e = (G w G^T)_e, V_e = (B^T x B)_e, each entry the GEMM's blocked sum over ci
// (kernels/common/blocked_sum.h). Each task (a block of tiles: whole samples of a small plane, or
// a band of tile rows of one; and a block of output channels) transforms its tiles' patches into V,
// runs the 16 products and transforms M back into the output rows, adding the forward operators'
// bias to the finished values. The transforms are additions and halvings in a fixed order, one
// statement each (nothing to fuse into a multiply-add), so every instruction set gives the same bits,
// for any thread count.
//
// Accuracy: the transforms add a few roundings to each output (each V entry is a sum of at most 4
// inputs, each U entry of at most 9 weights times 1/4, the output transform adds 9 of M's entries),
// on top of the GEMM's blocked sums; the error stays well below a single chain's over Cin x 9
// products (docs/numerics.md). An Inf or NaN anywhere in a patch reaches every output of its tile
// through the transforms (Inf - Inf), so a task that reads one says so (PlanBuilder::source_tested)
// and the non-finite repair recomputes the result as the reference does.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/sgemm.h"

namespace aclnn_cpu {
namespace {

constexpr int kEntries = 16;          // entries of a 4x4 transform: the 16 products
constexpr int64_t kMinChannels = 64;  // channels in and out below which the transforms cost what they save
constexpr int64_t kTileTarget = 64;   // tiles a task aims for (columns of its products)
constexpr int kMaxRows = 16;          // the most rows a micro-kernel's sliver holds (MR)

bool finite(float v) { return v - v == 0.0f; }  // (Inf - Inf and NaN - NaN are NaN)

// The 2-D forward convolutions it computes: 3x3 kernel, stride and dilation 1, one group, FLOAT
// input and weights used as they are, at least kMinChannels channels each way.
Support supports(const ConvProblem& p, const CpuFeatures&) {
  const ConvGeometry& g = p.geometry;
  if (p.input_grad != InputGrad::kForward) return refuse("not a forward convolution");
  if (g.groups != 1) return refuse("grouped convolution");
  if (g.kernel[0] != 1 || g.kernel[1] != 3 || g.kernel[2] != 3) return refuse("kernel not 3x3");
  for (int a = 0; a < 3; ++a) {
    if (g.stride[a] != 1 || g.dilation[a] != 1) return refuse("stride or dilation past 1");
  }
  if (g.src_size[0] != 1 || g.pad[0] != 0 || g.pad[1] > 2 || g.pad[2] > 2) return refuse("not a 2-D layer padded within its kernel");
  if (p.src.dtype != ACL_FLOAT || p.wei.dtype != ACL_FLOAT || p.math != MathMode::kFull)
    return refuse("input or weight not FLOAT used as it is");
  if (g.src_channels_per_group < kMinChannels || g.dst_channels_per_group < kMinChannels)
    return refuse("fewer than 64 channels in or out");
  return kSupported;
}

class WinogradForward final : public ConvStep {
 public:
  WinogradForward(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry),
        src_(p.src),
        wei_(p.wei),
        threads_(b.threads()),
        output_(p.grad_input, b, "gradInput.f32", true, result_bias(p), bias_added_in_place(p) != nullptr),
        bias_(bias_added_in_place(p), b, "winograd.bias") {
    cin_ = g_.src_channels_per_group, cout_ = g_.dst_channels_per_group;
    tiles_h_ = ceil_div(g_.dst_size[1], 2), tiles_w_ = ceil_div(g_.dst_size[2], 2);
    const int64_t plane_tiles = tiles_h_ * tiles_w_;
    // A task's tiles: whole samples where a plane has fewer than kTileTarget, else a band of tile rows.
    if (plane_tiles < kTileTarget) {
      samples_per_task_ = std::min(g_.batch, ceil_div(kTileTarget, plane_tiles));
      rows_per_task_ = tiles_h_;
    } else {
      rows_per_task_ = std::min(tiles_h_, ceil_div(kTileTarget, tiles_w_));
    }
    tile_blocks_ = ceil_div(g_.batch, samples_per_task_) * ceil_div(tiles_h_, rows_per_task_);
    const int64_t max_tiles = samples_per_task_ * rows_per_task_ * tiles_w_;
    blocking_ = plan_gemm_blocking(cout_, max_tiles, cin_);
    const int64_t mr = left_sliver_rows(blocking_), nr = right_sliver_columns(blocking_);
    // Blocks of output channels (whole slivers) where the tiles alone offer too few tasks.
    const int64_t slivers = ceil_div(cout_, mr);
    channel_blocks_ = std::clamp<int64_t>(ceil_div(4 * threads_, tile_blocks_), 1, std::max<int64_t>(1, slivers / 4));
    block_channels_ = ceil_div(slivers, channel_blocks_) * mr;
    channel_blocks_ = ceil_div(cout_, block_channels_);
    columns_ = round_up(max_tiles, nr);
    sliver_floats_ = packed_left_floats(blocking_, cout_, cin_);
    transformed_ = b.book_scratch("winograd.U", kEntries * sliver_floats_, sizeof(float));
    offsets_ = b.book_scratch("winograd.row_offsets", cin_, sizeof(int64_t));
    // (a byte per task: 1 where every value it read was finite, for the non-finite repair)
    source_finite_ = b.book_shared("winograd.source_finite", tile_blocks_ * channel_blocks_, 1);
    weights_finite_ = b.book_shared("winograd.weights_finite", slivers, 1);
    b.source_tested = {source_finite_, tile_blocks_ * channel_blocks_};
    b.weights_tested = {weights_finite_, slivers};
    // per thread: V (16 x Cin x columns), M (16 x block_channels x columns), the patch rows of one channel
    // (column transforms of 2 * rows + 2 input rows), one padded input row, and two output rows per channel.
    v_ = b.book_scratch("winograd.V", kEntries * cin_ * columns_, sizeof(float), threads_);
    m_ = b.book_scratch("winograd.M", kEntries * block_channels_ * columns_, sizeof(float), threads_);
    patch_ = b.book_scratch("winograd.patch_rows", (2 * rows_per_task_ + 2 + 1) * 4 * tiles_w_ + 2, sizeof(float),
                            threads_);
    rows_ = b.book_scratch("winograd.output_rows", block_channels_ * 2 * g_.dst_size[2] + 12 * tiles_w_, sizeof(float),
                           threads_);
  }

  int64_t tasks() const override { return tile_blocks_ * channel_blocks_; }
  std::string detail() const override { return isa_detail(blocking_); }

  int run(const Workspace& w, const StepInputs&) const override {
    bias_.fill(w);
    int64_t* offsets = w.at<int64_t>(offsets_);
    for (int64_t ci = 0; ci < cin_; ++ci) offsets[ci] = ci * columns_;
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
  // U_e's rows [c0, c1) (one sliver of MR) into the packed slivers: U = G w G^T for every ci. Returns
  // whether every weight read was finite.
  bool transform_weights(const Workspace& w, int64_t c0, int64_t c1) const {
    const int64_t mr = left_sliver_rows(blocking_);
    float* sliver = w.at<float>(transformed_) + c0 * cin_;  // (entry (co, ci) of U_e at + e * sliver_floats + ci * mr + co - c0)
    const float* data = static_cast<const float*>(wei_.data);
    const int64_t sh = wei_.stride[3], sw = wei_.stride[4];
    bool ok = true;
    for (int64_t ci = 0; ci < cin_; ++ci) {
      float u[kEntries][kMaxRows] = {};
      for (int64_t co = c0; co < c1; ++co) {
        const float* k = data + wei_.element(co, ci, 0, 0, 0);
        float gk[4][3];  // G k
        for (int j = 0; j < 3; ++j) {
          const float k0 = k[j * sw], k1 = k[sh + j * sw], k2 = k[2 * sh + j * sw];
          ok = ok && finite(k0) && finite(k1) && finite(k2);
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
      for (int e = 0; e < kEntries; ++e) std::memcpy(sliver + e * sliver_floats_ + ci * mr, u[e], mr * sizeof(float));
    }
    return ok;
  }

  // One task: tiles of block `tb`, output channels of block `cb`. Returns whether every input read was finite.
  bool run_task(const Workspace& w, float* out, int64_t tb, int64_t cb) const {
    const int64_t bands = ceil_div(tiles_h_, rows_per_task_);
    const int64_t n0 = tb / bands * samples_per_task_, n1 = std::min(g_.batch, n0 + samples_per_task_);
    const int64_t ty0 = tb % bands * rows_per_task_, ty1 = std::min(tiles_h_, ty0 + rows_per_task_);
    const int64_t band_tiles = (ty1 - ty0) * tiles_w_, tiles = (n1 - n0) * band_tiles;
    const int64_t c0 = cb * block_channels_, c1 = std::min(cout_, c0 + block_channels_);
    const int thread = thread_index();
    float* v = w.at<float>(v_, thread);
    float* m = w.at<float>(m_, thread);
    bool ok = true;
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t ci = 0; ci < cin_; ++ci)
        ok = transform_patches(w, n, ci, ty0, ty1, v + ci * columns_ + (n - n0) * band_tiles) && ok;
    }
    // (the columns past the tiles, which the micro-kernel reads: zeros)
    for (int64_t e = 0; e < kEntries; ++e) {
      for (int64_t ci = 0; ci < cin_; ++ci)
        std::fill(v + (e * cin_ + ci) * columns_ + tiles, v + (e * cin_ + ci) * columns_ + columns_, 0.0f);
    }
    const float* u = w.at<float>(transformed_);
    const int64_t* offsets = w.at<int64_t>(offsets_);
    const int64_t m_rows = round_up(block_channels_, left_sliver_rows(blocking_));
    for (int e = 0; e < kEntries; ++e) {
      // M_e[c0:c1] (block x tiles) = U_e[c0:c1] (block x Cin) * V_e (Cin x tiles)
      const PackedLeft ue{u + e * sliver_floats_ + c0 * cin_, cin_, 0};
      sgemm_rows(blocking_, c1 - c0, tiles, cin_, ue, v + e * cin_ * columns_, offsets, m + e * m_rows * columns_,
                 columns_);
    }
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t ty = ty0; ty < ty1; ++ty)
        store_outputs(w, out, m + (n - n0) * band_tiles + (ty - ty0) * tiles_w_, m_rows, n, ty, c0, c1);
    }
    return ok;
  }

  // V's columns of tile rows [ty0, ty1) of channel ci, sample n (entry e's at v + e * Cin * columns):
  // B^T x B of each tile's patch. Returns whether every input read was finite.
  bool transform_patches(const Workspace& w, int64_t n, int64_t ci, int64_t ty0, int64_t ty1, float* v) const {
    const int64_t tw = tiles_w_, height = g_.src_size[1], in_w = g_.src_size[2], pw = g_.pad[2];
    float* cols = w.at<float>(patch_, thread_index());  // per input row: 4 arrays of tw column transforms
    float* even = cols + (2 * rows_per_task_ + 2) * 4 * tw;
    float* odd = even + tw + 1;
    const float* data = static_cast<const float*>(src_.data);
    const int64_t sx = src_.stride[4];
    bool ok = true;
    const int64_t rows = 2 * (ty1 - ty0) + 2;
    for (int64_t r = 0; r < rows; ++r) {
      // The padded input row in its even and odd positions: position x of the patches' columns is input
      // column x - pad (zero outside the input).
      const int64_t ih = 2 * ty0 + r - g_.pad[1];
      if (ih < 0 || ih >= height) {
        std::fill(even, even + 2 * (tw + 1), 0.0f);
      } else {
        const float* in = data + src_.element(n, ci, 0, ih, 0);
        for (int64_t x = 0; x <= tw; ++x) {
          const int64_t a = 2 * x - pw, b = a + 1;
          even[x] = a >= 0 && a < in_w ? in[a * sx] : 0.0f;
          odd[x] = b >= 0 && b < in_w ? in[b * sx] : 0.0f;
        }
        for (int64_t x = 0; x <= tw; ++x) ok = ok && finite(even[x]) && finite(odd[x]);
      }
      // x B (each tile's patch row d0..d3 = even[t], odd[t], even[t + 1], odd[t + 1])
      float* c = cols + r * 4 * tw;
      for (int64_t t = 0; t < tw; ++t) c[t] = even[t] - even[t + 1];
      for (int64_t t = 0; t < tw; ++t) c[tw + t] = odd[t] + even[t + 1];
      for (int64_t t = 0; t < tw; ++t) c[2 * tw + t] = even[t + 1] - odd[t];
      for (int64_t t = 0; t < tw; ++t) c[3 * tw + t] = odd[t] - odd[t + 1];
    }
    const int64_t plane = cin_ * columns_;  // (entry e's V at v + e * plane)
    for (int64_t ty = ty0; ty < ty1; ++ty) {
      float* at = v + (ty - ty0) * tw;
      for (int64_t j = 0; j < 4; ++j) {  // B^T (x B), column transform j
        const float* r0 = cols + 2 * (ty - ty0) * 4 * tw + j * tw;
        const float* r1 = r0 + 4 * tw;
        const float* r2 = r1 + 4 * tw;
        const float* r3 = r2 + 4 * tw;
        float* v0 = at + j * plane;
        float* v1 = at + (4 + j) * plane;
        float* v2 = at + (8 + j) * plane;
        float* v3 = at + (12 + j) * plane;
        for (int64_t t = 0; t < tw; ++t) v0[t] = r0[t] - r2[t];
        for (int64_t t = 0; t < tw; ++t) v1[t] = r1[t] + r2[t];
        for (int64_t t = 0; t < tw; ++t) v2[t] = r2[t] - r1[t];
        for (int64_t t = 0; t < tw; ++t) v3[t] = r1[t] - r3[t];
      }
    }
    return ok;
  }

  // Output rows 2 ty and 2 ty + 1 of channels [c0, c1), sample n: A^T M A of each tile of the row (its
  // M entries at m + e * m_rows * columns + (co - c0) * columns + tx), plus the bias.
  void store_outputs(const Workspace& w, float* out, const float* m, int64_t m_rows, int64_t n, int64_t ty,
                     int64_t c0, int64_t c1) const {
    const int64_t out_h = g_.dst_size[1], out_w = g_.dst_size[2], plane = out_h * out_w, tw = tiles_w_;
    const int64_t lines = std::min<int64_t>(2, out_h - 2 * ty), entry = m_rows * columns_;
    const bool parts = output_.stores_parts();
    float* buffer = w.at<float>(rows_, thread_index());
    float* a = buffer + block_channels_ * 2 * out_w;  // A^T M: 8 arrays of tw (rows 0 and 1, columns 0..3)
    float* y = a + 8 * tw;                            // (A^T M) A: 4 arrays of tw
    const float* bias = bias_.from(w, c0);
    for (int64_t co = c0; co < c1; ++co) {
      float* y0 = parts ? buffer + (co - c0) * 2 * out_w : out + (n * cout_ + co) * plane + 2 * ty * out_w;
      float* y1 = y0 + out_w;
      const float* mc = m + (co - c0) * columns_;
      for (int j = 0; j < 4; ++j) {
        const float* m0 = mc + j * entry;
        const float* m1 = m0 + 4 * entry;
        const float* m2 = m1 + 4 * entry;
        const float* m3 = m2 + 4 * entry;
        float* a0 = a + j * tw;
        float* a1 = a + (4 + j) * tw;
        for (int64_t t = 0; t < tw; ++t) {
          const float s = m0[t] + m1[t];
          a0[t] = s + m2[t];
        }
        for (int64_t t = 0; t < tw; ++t) {
          const float d = m1[t] - m2[t];
          a1[t] = d - m3[t];
        }
      }
      for (int i = 0; i < 2; ++i) {
        const float* r = a + i * 4 * tw;
        float* left = y + 2 * i * tw;
        float* right = left + tw;
        for (int64_t t = 0; t < tw; ++t) {
          const float s = r[t] + r[tw + t];
          left[t] = s + r[2 * tw + t];
        }
        for (int64_t t = 0; t < tw; ++t) {
          const float d = r[tw + t] - r[2 * tw + t];
          right[t] = d - r[3 * tw + t];
        }
        if (bias != nullptr) {
          const float add = bias[co - c0];
          for (int64_t t = 0; t < 2 * tw; ++t) left[t] = left[t] + add;
        }
      }
      const int64_t pairs = out_w / 2;  // (an odd width's last tile stores its left column only)
      for (int64_t t = 0; t < pairs; ++t) y0[2 * t] = y[t], y0[2 * t + 1] = y[tw + t];
      if (pairs < tw) y0[2 * pairs] = y[pairs];
      if (lines > 1) {
        for (int64_t t = 0; t < pairs; ++t) y1[2 * t] = y[2 * tw + t], y1[2 * t + 1] = y[3 * tw + t];
        if (pairs < tw) y1[2 * pairs] = y[2 * tw + pairs];
      }
    }
    if (parts) {
      for (int64_t line = 0; line < lines; ++line)
        output_.store_rows(buffer + line * out_w, 2 * out_w, c1 - c0, n, c0, (2 * ty + line) * out_w, out_w);
    }
  }

  ConvGeometry g_;
  View5 src_, wei_;
  int threads_;
  DenseFloatOutput output_;
  BiasFloats bias_;  // the forward operators' bias, where the rows are stored in place
  GemmBlocking blocking_;
  int64_t cin_ = 0, cout_ = 0, tiles_h_ = 0, tiles_w_ = 0;
  int64_t samples_per_task_ = 1, rows_per_task_ = 1, tile_blocks_ = 1, channel_blocks_ = 1, block_channels_ = 1;
  int64_t columns_ = 0, sliver_floats_ = 0;
  WorkspaceLedger::Handle transformed_ = -1, offsets_ = -1, source_finite_ = -1, weights_finite_ = -1;
  WorkspaceLedger::Handle v_ = -1, m_ = -1, patch_ = -1, rows_ = -1;  // per thread
};

std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<WinogradForward>(p, builder);
}

}  // namespace

extern const ConvImpl kWinogradInputGrad = {"winograd", "winograd", Gradient::kInput, supports, plan};

}  // namespace aclnn_cpu
