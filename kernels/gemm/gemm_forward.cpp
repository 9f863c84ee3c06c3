// gemm_flipped_* and gemm_forward_*: gradInput as a forward convolution, Y = W cols, with im2col
// written into the GEMM's packed panels or the source read in place from padded windows: a
// transposed convolution's (src = dY), or a direct one's with stride 1 and enough positions (the
// kernel flipped). Float accumulation, as on the NPU's cube unit.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/im2col.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/ahead_of_direct.h"
#include "kernels/gemm/gemm_forward_decision.h"
#include "kernels/gemm/padded_window.h"
#include "kernels/matmul/bf16_pairs.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

// Whether gradInput of a direct convolution is better computed as its flipped forward convolution
// (conv_problem.h): when it has one, and enough output positions for kTargetTasks tasks of at least
// kFlipMinTile positions (tasks split positions only: splitting channels would redo the im2col), or
// of kFlipMinBand when the flipped convolution reads padded windows (no im2col to redo).
constexpr int64_t kFlipMinTile = 128, kFlipMinBand = 64;
bool flip_pays(const ConvGeometry& g) {
  if (!flippable(g)) return false;
  const int64_t slices = g.batch * g.groups;
  // (saturated: a plane whose positions times the slices pass 64 bits has enough of them)
  if (saturating_product(g.src_plane(), slices) >= kFlipMinTile * kTargetTasks) return true;
  const ConvGeometry flipped = flipped_geometry(g);
  return padded_windows_apply(flipped) && !columns_are_source(flipped) &&
         ceil_div(g.src_plane(), pieces_for_tasks(slices)) >= kFlipMinBand;
}

// Per (sample, group, output tile): Y = W cols, with W packed once per execution and cols =
// im2col(src) either written straight into the GEMM's packed panels (never stored whole) or, where
// padded_windows_apply, read in place from the tile's padded source window (padded_window.h: the
// tile is then a band of output rows; a strided source is split into its stride phases). Tiles never overlap in Y.
// Computes a transposed convolution's gradInput (src = dY) or, `flipped`, a stride-1 direct convolution's (src = dY,
// the kernel flipped while it is packed).
class GemmForward final : public ConvStep {
 public:
  // Books the step: from padded windows as `windows` decided (decide_windows), else from tiles as
  // `tiles` decided (decide_tiles).
  GemmForward(const ConvProblem& p, PlanBuilder& b, bool flipped, const WindowsDecision* windows,
              const TilesDecision* tiles)
      : g_(flipped ? flipped_geometry(p.geometry) : p.geometry),
        s_(g_),
        threads_(b.threads()),
        flipped_(flipped),
        source_(flipped ? p.dst : p.src),
        math_(p.math),
        conversions_(b.cpu().conversions),
        staged_(tiles != nullptr && tiles->staged),
        rows16_(tiles != nullptr && tiles->rows16),
        // (a forward operator's dense float output: written in place, each band or tile adding its bias)
        bias_in_place_(bias_added_in_place(p) != nullptr),
        // (as floats, one per output channel: the micro-kernel adds them)
        bias_floats_(bias_added_in_place(p), b, "gemm.bias"),
        // (bands and tiles store from their own results, or compute them in a dense float Y)
        output_(p.grad_input, b, "gradInput.f32", true, result_bias(p), bias_in_place_) {
    if (windows != nullptr) {
      plan_padded_windows(b, *windows);
      return;
    }
    tile_ = tiles->tile;
    tiles_ = ceil_div(s_.dst_plane, tile_);
    blocking_ = tiles->blocking;
    if (tiles->amx != AmxTiles::kNone) {
      plan_pointwise_pairs(b, tiles->amx);
      return;
    }
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(true), sizeof(float), threads_);
    if (columns_are_source(g_)) offsets_ = b.book_scratch("gemm.row_offsets", s_.rows(), sizeof(int64_t));
    if (rows16_) rows16_offsets_ = b.book_scratch("gemm.row_offsets16", s_.rows(), sizeof(int64_t));
    // A result not stored as dense floats: each tile computed into a per-thread buffer and rounded
    // into the user's view from there (never through a whole float copy in memory). (rows16_: whole
    // slivers of the micro-kernel's rows.)
    const int64_t result_rows = rows16_ ? round_up(s_.cout, left_sliver_rows(blocking_)) : s_.cout;
    if (output_.stores_parts())
      tile_result_ = b.book_scratch("gemm.tile_result", result_rows * tile_, sizeof(float), threads_);
    group_floats_ = packed_left_floats(blocking_, s_.cout, s_.rows());
    weights_ = b.book_scratch("gemm.packed_weights", s_.groups * group_floats_, sizeof(float));
    if (staged_) {  // each task stages the window of its slice that its tile reads
      window_floats_ = max_source_window(g_, tile_);
      window_ = b.book_scratch("gemm.source_window", s_.cin * window_floats_, sizeof(float), threads_);
    }
    b.need_float_inputs(!flipped_ && !staged_, true, flipped_ && !staged_);
  }

  int64_t tasks() const override { return s_.n * s_.groups * (implicit_ ? bands_.bands() * row_blocks_ : tiles_); }
  std::string detail() const override {
    return isa_detail(blocking_) + (flipped_ ? ":flipped" : "") + (implicit_ ? ":windows" : "") +
           (row_blocks_ > 1 ? ":row_blocks=" + std::to_string(row_blocks_) : "") +
           (depth_major_ ? ":depth_major" : "") + amx_detail(amx_) + (rows16_ ? ":rows16" : "");
  }

  int run(const Workspace& w, const StepInputs& in) const override {
    float* grad_input = output_.data(w);
    const float* source = flipped_ ? in.f32.dst : in.f32.src;
    float* weights = w.at<float>(weights_);
    int status = paired() ? pack_weight_pairs(in.f32.wei, w.at<uint32_t>(weights_)) : pack_weights(in.f32.wei, weights);
    if (status != ACLNN_SUCCESS) return status;
    bias_floats_.fill(w);
    status = implicit_ ? run_bands(w, weights, grad_input) : run_tiles(w, weights, source, grad_input);
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, true);
    return status;
  }

 private:
  // The padded-window plan, as decide_windows decided it.
  void plan_padded_windows(PlanBuilder& b, const WindowsDecision& d) {
    amx_ = d.amx, blocking_ = d.blocking, bands_ = d.bands, row_blocks_ = d.row_blocks;
    const bool amx = paired();
    // Channels (in pairs: rows of pairs) of the window, and the depth of the products.
    const int64_t channels = paired() ? ceil_div(s_.cin, 2) : s_.cin;
    depth_ = channels * s_.kernel_volume;
    const int64_t mr = amx ? kAmxBlock : left_sliver_rows(blocking_),
                  nr = amx ? kAmxBlock : right_sliver_columns(blocking_);
    const int64_t result_rows = round_up(s_.cout, mr);
    const int64_t channel_floats = bands_.channel_floats();
    implicit_ = true;
    block_rows_ = round_up(ceil_div(s_.cout, row_blocks_), mr);
    row_blocks_ = ceil_div(s_.cout, block_rows_);  // (AMX's blocks of 32 rows may leave fewer)
    depth_major_ = d.depth_major;
    window_slack_ = nr;
    window_floats_ = channels * channel_floats + nr;  // + the zeros the last column tile reads past it
    result_columns_ = round_up(bands_.columns(), nr);
    window_ = b.book_scratch("gemm.padded_window", window_floats_, sizeof(float), threads_);
    if (amx) amx_stage_ = b.book_scratch("gemm.amx_stage", amx_stage_words(depth_), sizeof(uint32_t), threads_);
    result_ = b.book_scratch("gemm.band_result", std::min(result_rows, block_rows_) * result_columns_, sizeof(float),
                             threads_);
    offsets_ = b.book_scratch("gemm.row_offsets", depth_, sizeof(int64_t));
    group_floats_ = amx ? amx_left_words(s_.cout, depth_) : packed_left_floats(blocking_, s_.cout, s_.rows());
    weights_ = b.book_scratch(
        "gemm.packed_weights",
        product_within(s_.groups, group_floats_, int64_t{1} << 58) ? uint64_t(s_.groups * group_floats_) : UINT64_MAX,
        sizeof(float));
    b.need_float_inputs(false, true, false);
  }

  // Per (sample, group, band, block of output channels [c0, c1)): the band's window staged from the source
  // view, then result (c1 - c0 x columns) = W_g[c0:c1] (x Cin_g*K) * cols (Cin_g*K x columns), cols read in
  // place from the window, and the band's valid columns copied into Y (or, a band of one row whose positions
  // are whole tiles, computed there: `straight`).
  int run_bands(const Workspace& w, const float* weights, float* grad_input) const {
    int64_t* offsets = w.at<int64_t>(offsets_);
    for (int64_t q = 0; q < depth_; ++q) bands_.row_offsets(depth_row(q), depth_row(q) + 1, 0, offsets + q);
    const int64_t width = bands_.window_width();
    return run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t task) {
      // (a block's tasks one after another: its rows of W stay in cache over the samples and bands)
      const int64_t per_block = s_.n * s_.groups * bands_.bands();
      const int64_t t = task % per_block, c0 = task / per_block * block_rows_;
      const int64_t c1 = std::min(s_.cout, c0 + block_rows_), rows = c1 - c0;
      const int64_t n = t / (s_.groups * bands_.bands()), grp = t / bands_.bands() % s_.groups;
      const OutputBand band = bands_.band(t % bands_.bands());
      float* result = w.at<float>(result_, thread_index());
      const int nr = right_sliver_columns(blocking_);
      // Y's rows of the band's channels (in place, or a whole staged result), or none: the parts stored
      // from `result`.
      float* y = output_.stores_parts() ? nullptr : grad_input + ((n * s_.groups + grp) * s_.cout + c0) * s_.dst_plane;
      const int64_t line = g_.dst_size[2], lines_per_plane = g_.dst_size[1], count = band.w1 - band.w0;
      const auto first = [&](int64_t oh) { return (band.od * lines_per_plane + oh) * line + band.w0; };
      // A band of one row whose columns are its positions, in whole micro-kernel tiles (half ones as the
      // last) and slivers of rows, of one depth block: computed straight into Y's rows, each tile stored
      // once (deeper, `result`'s compact tiles take the sums of the later blocks).
      const bool straight = y != nullptr && !paired() && band.h1 - band.h0 == 1 && bands_.columns() == count &&
                            count % column_granularity(blocking_) == 0 && rows % left_sliver_rows(blocking_) == 0 &&
                            depth_ <= blocking_.kc;
      bool in_y = false;  // (computed there)
      if (paired()) {
        auto* window = w.at<uint32_t>(window_, thread_index());
        stage_padded_window_pairs(source_, g_, bands_, n, grp * s_.cin, s_.cin, band, window_slack_, window);
        // result (Cout_g x columns) = W_g (Cout_g x Cin_g*K, in pairs of channels) * cols (Cin_g*K x columns)
        // (W's rows c0 .. c1: whole blocks of 32 rows from the block's first)
        const uint32_t* wg = reinterpret_cast<const uint32_t*>(weights) + grp * group_floats_;
        amx_pair_rows(amx_, rows, bands_.columns(), depth_, wg + amx_left_words(c0, depth_), window, offsets,
                      w.at<uint32_t>(amx_stage_, thread_index()), result, result_columns_);
      } else {
        float* window = w.at<float>(window_, thread_index());
        // Only the depths whose kernel-depth taps read source planes (a band of a border plane skips
        // the taps in the padding, and their window slabs); none: the result is zeros.
        const KernelDepths inside = depth_major_ ? kernel_depths_inside(g_, band.od) : KernelDepths{0, g_.kernel[0]};
        stage_padded_window(source_, math_, g_, bands_, n, grp * s_.cin, s_.cin, band, inside, nr, window,
                            conversions_);
        const int64_t slab = depth_ / g_.kernel[0];  // depths per kernel depth (in depth-major order)
        const int64_t q0 = inside.begin * slab, q1 = inside.end * slab;
        const PackedLeft wg{weights + grp * group_floats_ + c0 * s_.rows(), s_.rows(), q0};  // (slivers from row c0)
        // (no depth inside: the band's zeros go through `result`, whole tiles of them)
        if (straight && q1 > q0) {
          // Y[c0:c1, the band's row] (rows x count) = W_g[c0:c1] (x Cin_g*K) * cols (Cin_g*K x count) (+ bias)
          float* row = y + first(band.h0);
          if (bias_in_place_) {
            const float* bias = bias_floats_.from(w, grp * s_.cout + c0);
            sgemm_rows_with_bias(blocking_, rows, count, q1 - q0, wg, window, offsets + q0, row, s_.dst_plane, bias);
          } else {
            sgemm_rows(blocking_, rows, count, q1 - q0, wg, window, offsets + q0, row, s_.dst_plane);
          }
          in_y = true;
        } else {
          sgemm_rows(blocking_, rows, bands_.columns(), q1 - q0, wg, window, offsets + q0, result, result_columns_);
        }
      }
      // The band's rows into Y (unless computed there), or, for a result not stored as dense floats or
      // with a bias, through the output's stores (which add the bias) into the user's view.
      if (in_y) return;
      if (output_.stores_parts() || bias_in_place_) {
        // all channels' row oh per call (channel c's at + c * result_columns_)
        for (int64_t oh = band.h0; oh < band.h1; ++oh)
          output_.store_rows(result + (oh - band.h0) * width, result_columns_, rows, n, grp * s_.cout + c0, first(oh),
                             count);
      } else {  // a channel's rows one after another: its plane written in order
        for (int64_t c = 0; c < rows; ++c)
          for (int64_t oh = band.h0; oh < band.h1; ++oh)
            std::memcpy(y + c * s_.dst_plane + first(oh), result + c * result_columns_ + (oh - band.h0) * width,
                        static_cast<size_t>(count) * sizeof(float));
      }
    });
  }

  // A 1x1 kernel's BF16 source and weights (used as they are) in pair products in the AMX tiles' order
  // on `amx` (decide_tiles): each tile's source staged as rows of channel pairs ([pair][position] words,
  // ld_ apart, zeros past the tile up to whole blocks of 32 columns), W packed in tiles, the result
  // computed into a per-thread tile buffer.
  void plan_pointwise_pairs(PlanBuilder& b, AmxTiles amx) {
    depth_ = ceil_div(s_.cin, 2);
    ld_ = round_up(tile_, kAmxBlock);
    const int64_t result_rows = round_up(s_.cout, kAmxBlock);
    amx_ = amx;
    window_ = b.book_scratch("gemm.source_pairs", depth_ * ld_, sizeof(uint32_t), threads_);
    planes_ = b.book_scratch("gemm.source_planes", 2 * tile_, sizeof(float), threads_);
    result_ = b.book_scratch("gemm.tile_result", result_rows * ld_, sizeof(float), threads_);
    offsets_ = b.book_scratch("gemm.row_offsets", depth_, sizeof(int64_t));
    amx_stage_ = b.book_scratch("gemm.amx_stage", amx_stage_words(depth_), sizeof(uint32_t), threads_);
    group_floats_ = amx_left_words(s_.cout, depth_);
    weights_ = b.book_scratch("gemm.packed_weights", s_.groups * group_floats_, sizeof(uint32_t));
    b.need_float_inputs(false, true, false);
  }

  // plan_pointwise_pairs' tasks: Y[:, o0:o1] (Cout_g x tile) = W_g (Cout_g x Cin_g, in pairs of
  // channels) * X[:, o0:o1] (Cin_g x tile).
  int run_pointwise_pairs(const Workspace& w, const uint32_t* weights, float* grad_input) const {
    int64_t* offsets = w.at<int64_t>(offsets_);
    for (int64_t q = 0; q < depth_; ++q) offsets[q] = q * ld_;
    return run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t n = t / (s_.groups * tiles_), grp = t / tiles_ % s_.groups, o0 = t % tiles_ * tile_;
      const int64_t o1 = std::min(s_.dst_plane, o0 + tile_), count = o1 - o0;
      auto* pairs = w.at<uint32_t>(window_, thread_index());
      float* planes = w.at<float>(planes_, thread_index());
      for (int64_t q = 0; q < depth_; ++q) {
        uint32_t* row = pairs + q * ld_;
        stage_channel_pairs(source_, n, grp * s_.cin + 2 * q, 2 * q + 1 < s_.cin, o0, count, planes, row, conversions_);
        std::fill(row + count, row + ld_, 0u);
      }
      float* result = w.at<float>(result_, thread_index());
      amx_pair_rows(amx_, s_.cout, count, depth_, weights + grp * group_floats_, pairs, offsets,
                    w.at<uint32_t>(amx_stage_, thread_index()), result, ld_);
      float* y = output_.stores_parts() ? nullptr : grad_input + (n * s_.groups + grp) * s_.cout * s_.dst_plane + o0;
      if (output_.stores_parts()) {
        output_.store_rows(result, ld_, s_.cout, n, grp * s_.cout, o0, count);
      } else if (bias_in_place_) {
        output_.store_rows(result, ld_, s_.cout, n, grp * s_.cout, o0, count);  // (adding the bias)
      } else {
        for (int64_t c = 0; c < s_.cout; ++c)
          std::memcpy(y + c * s_.dst_plane, result + c * ld_, static_cast<size_t>(count) * sizeof(float));
      }
    });
  }

  int run_tiles(const Workspace& w, const float* weights, const float* source, float* grad_input) const {
    if (paired()) return run_pointwise_pairs(w, reinterpret_cast<const uint32_t*>(weights), grad_input);
    if (offsets_ >= 0) {  // a 1x1 source's rows: the plane's, or a staged whole tile's
      int64_t* offsets = w.at<int64_t>(offsets_);
      for (int64_t r = 0; r < s_.rows(); ++r) offsets[r] = r * (staged_ ? tile_ : s_.src_plane);
    }
    if (rows16_) {  // the source's channel rows in the user's tensor
      int64_t* offsets = w.at<int64_t>(rows16_offsets_);
      for (int64_t r = 0; r < s_.rows(); ++r) offsets[r] = r * source_.stride[1];
    }
    return run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t n = t / (s_.groups * tiles_), grp = t / tiles_ % s_.groups, o0 = t % tiles_ * tile_;
      const int64_t o1 = std::min(s_.dst_plane, o0 + tile_);
      // The tile's result: the per-thread tile buffer, or its place in the dense float result.
      const bool buffered = tile_result_ >= 0;
      float* y = buffered ? w.at<float>(tile_result_, thread_index())
                          : grad_input + (n * s_.groups + grp) * s_.cout * s_.dst_plane + o0;
      const int64_t ldy = buffered ? tile_ : s_.dst_plane;
      float* pack = w.at<float>(pack_, thread_index());
      const PackedLeft wg{weights + grp * group_floats_, s_.rows(), 0};
      const int nr = right_sliver_columns(blocking_);
      if (rows16_ && (o1 - o0) % nr == 0) {
        // Y[:, o0:o1] (Cout_g x tile) = W_g (Cout_g x Cin_g) * X[Cin_g, o0:o1] (16-bit rows, in place),
        // narrowed into the user's view by whole slivers of rows, the rows left stored from y.
        const uint16_t* rows =
            static_cast<const uint16_t*>(source_.data) + source_.element(n, grp * s_.cin, 0, 0, 0) + o0;
        const int64_t narrowed =
            sgemm_rows_16bit(blocking_, s_.cout, o1 - o0, s_.rows(), wg, rows, w.at<int64_t>(rows16_offsets_),
                             source_.dtype == ACL_BF16, y, ldy, output_.narrowed_rows(n, grp * s_.cout, o0));
        if (narrowed < s_.cout)
          output_.store_rows(y + narrowed * ldy, ldy, s_.cout - narrowed, n, grp * s_.cout + narrowed, o0, o1 - o0);
        return;
      }
      SliceSource x{nullptr, s_.src_plane};
      if (staged_) {
        const PlaneWindow window = source_window(g_, o0, o1);
        float* staged = w.at<float>(window_, thread_index());
        stage_window(source_, math_, n, grp * s_.cin, 0, s_.cin, window, staged, conversions_);
        x = {staged, window.size(), 0, window.first};
      } else {
        x.data = source + (n * s_.groups + grp) * s_.cin * s_.src_plane;
      }
      // Y[:, o0:o1] (Cout_g x tile) = W_g (Cout_g x Cin_g*K) * cols (Cin_g*K x tile)
      // (A staged tile's rows are read at the shared row offsets, tile_ apart: its window must be the
      // tile's own positions, source_window's for a 1x1 kernel.)
      const bool whole = (o1 - o0) % nr == 0 && (!staged_ || (o1 - o0 == tile_ && x.channel_stride == tile_));
      const float* bias = bias_floats_.from(w, grp * s_.cout);  // (where Y is computed in place)
      if (offsets_ >= 0 && whole && s_.cout % left_sliver_rows(blocking_) == 0) {
        // 1x1, whole tiles: the source's rows (or the staged tile's) read in place (sgemm_rows), nothing packed.
        // A FLOAT16/BF16 result is narrowed by the micro-kernel as it computes it, where it can: stored
        // after the tile, its stores to memory would not overlap the products. A bias is added by the
        // micro-kernel as it stores each finished tile into Y.
        const NarrowedRows narrowed = buffered && converts_in_registers(blocking_) && s_.rows() > 0
                                          ? output_.narrowed_rows(n, grp * s_.cout, o0)
                                          : NarrowedRows{nullptr, 0, false};
        const float* rows = x.data + (o0 - x.first);
        if (narrowed.out != nullptr) {
          sgemm_rows(blocking_, s_.cout, o1 - o0, s_.rows(), wg, rows, w.at<int64_t>(offsets_), y, ldy, narrowed);
          return;
        }
        if (bias != nullptr && s_.rows() > 0) {
          sgemm_rows_with_bias(blocking_, s_.cout, o1 - o0, s_.rows(), wg, rows, w.at<int64_t>(offsets_), y, ldy, bias);
          return;
        }
        sgemm_rows(blocking_, s_.cout, o1 - o0, s_.rows(), wg, rows, w.at<int64_t>(offsets_), y, ldy);
      } else if (columns_are_source(g_)) {  // 1x1: the source (staged or not) is the column matrix
        sgemm(blocking_, pack, s_.cout, o1 - o0, s_.rows(), wg,
              MatrixRef{x.data + (o0 - x.first), x.channel_stride, false}, false, y, ldy);
      } else {
        const Columns columns{&g_, &x, o0};
        sgemm(blocking_, pack, s_.cout, o1 - o0, s_.rows(), wg, PanelWriter{Columns::write, &columns}, false, y, ldy);
      }
      if (tile_result_ >= 0) {  // the tile rounded into the user's view
        output_.store_rows(y, ldy, s_.cout, n, grp * s_.cout, o0, o1 - o0);
      } else if (bias != nullptr) {  // fl32(sum) + bias, in place
        for (int64_t c = 0; c < s_.cout; ++c) {
          float* row = y + c * ldy;
          for (int64_t j = 0; j < o1 - o0; ++j) row[j] += bias[c];
        }
      }
    });
  }

  // The column matrix of one slice from column `first` on, for sgemm's PanelWriter.
  struct Columns {
    const ConvGeometry* g;
    const SliceSource* src;
    int64_t first;
    static void write(const void* context, int64_t p0, int64_t depth, int64_t j0, int64_t cols, int width, float* out) {
      const auto* self = static_cast<const Columns*>(context);
      im2col_panels(*self->g, *self->src, p0, depth, self->first + j0, cols, width, out);
    }
  };

  // Column-matrix row r = c*K + k at depth q of the products: q, or in depth-major order
  // (depth_major_row) where a band next to the source's front or back skips the kernel depths whose
  // taps read only padding.
  int64_t depth_row(int64_t q) const { return depth_major_ ? depth_major_row(g_, s_.cin, q) : q; }

  // Entry (row, r = c*K + k) of group grp's W (Cout_g x Cin_g*K, in this step's terms); flipped, that W is
  // flipped[g][ci][co*K + k'] = wei[g][co][ci][K-1-k'] (ci < Cout_g, co < Cin_g here).
  float weight(const float* wei, int64_t grp, int64_t row, int64_t r) const {
    const int64_t k = s_.kernel_volume;
    return flipped_ ? wei[((grp * s_.cin + r / k) * s_.cout + row) * k + (k - 1 - r % k)]
                    : wei[(grp * s_.cout + row) * s_.rows() + r];
  }

  // Pair q = (c, k) of row `row` of group grp's W: its entries (2c, k) and (2c + 1, k) (zero past the
  // last channel), as BF16 (the float copy of BF16 weights: exact).
  uint32_t weight_pair(const float* wei, int64_t grp, int64_t row, int64_t q) const {
    const int64_t k = s_.kernel_volume, c = q / k * 2, r = c * k + q % k;
    const uint16_t odd = c + 1 < s_.cin ? bf16_bits(weight(wei, grp, row, r + k)) : 0;
    return bf16_pair(bf16_bits(weight(wei, grp, row, r)), odd);
  }

  // Each group's W in pairs of depth_, as pack_amx_left writes them (by blocks of 32 rows).
  int pack_weight_pairs(const float* wei, uint32_t* out) const {
    const int64_t slivers = ceil_div(s_.cout, kAmxBlock);
    return run_tasks(s_.groups * slivers, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t grp = t / slivers, ci0 = t % slivers * kAmxBlock;
      pack_amx_left(
          amx_, s_.cout, depth_, ci0, ci0 + kAmxBlock,
          [&](int64_t i, int64_t q) { return weight_pair(wei, grp, i, q); }, out + grp * group_floats_);
    });
  }

  // Each group's W as a PackedLeft.
  int pack_weights(const float* wei, float* out) const {
    const int64_t mr = left_sliver_rows(blocking_), slivers = ceil_div(s_.cout, mr);
    return run_tasks(s_.groups * slivers, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t grp = t / slivers, ci0 = t % slivers * mr;
      const int64_t rows = std::min(mr, s_.cout - ci0);
      float* sliver = out + grp * group_floats_ + ci0 * s_.rows();  // sliver ci0/mr, mr * rows floats
      if (!flipped_ && !depth_major_) {
        pack_left(blocking_, rows, s_.rows(), {wei + (grp * s_.cout + ci0) * s_.rows(), s_.rows(), false}, sliver,
                  s_.rows(), 0);
        return;
      }
      for (int64_t q = 0; q < s_.rows(); ++q) {
        const int64_t r = depth_row(q);
        for (int64_t i = 0; i < mr; ++i) sliver[q * mr + i] = i < rows ? weight(wei, grp, ci0 + i, r) : 0.0f;
      }
    });
  }

  ConvGeometry g_;
  Shape s_;
  int threads_;
  bool flipped_;
  View5 source_;  // dY (flipped, and a transposed layer's gradInput) or X, as the user passed it
  MathMode math_;
  const Conversions16* conversions_;  // the plan's kit's
  // Tasks stage their windows of source_ (no dense float copy of it); a 1x1 kernel's tiles of unit-stride rows
  // always (each channel's run of the tile copied in order, not one line of every channel's row per
  // micro-kernel tile).
  bool staged_;
  bool rows16_ = false;     // whole 1x1 tiles read from source_'s 16-bit rows in place (sgemm_rows_16bit)
  bool bias_in_place_;      // bands and tiles add the forward operators' bias to their rows in output_'s dense floats
  BiasFloats bias_floats_;  // (that bias, where bias_in_place_)
  DenseFloatOutput output_;
  bool implicit_ = false;           // tasks are bands read from padded windows (plan_padded_windows)
  AmxTiles amx_ = AmxTiles::kNone;  // ... in the AMX tiles' order, on these tiles (amx.h)
  bool paired() const { return amx_ != AmxTiles::kNone; }  // pair products, in the tiles' order
  int64_t window_slack_ = 0;  // implicit_: zeros past a window (the last column tile reads them)
  bool depth_major_ = false;  // implicit_ float products in depth-major order (depth_row)
  int64_t depth_ = 0;         // implicit_ or paired(): the products' depth (in pairs with paired())
  int64_t ld_ = 0;            // paired() of a 1x1 kernel: words between the staged source's channel-pair rows
  WorkspaceLedger::Handle planes_ = -1;  // paired() of a 1x1 kernel, per thread: two source rows as floats
  BandTiling bands_;
  int64_t tile_ = 1, tiles_ = 1, group_floats_ = 0, window_floats_ = 0, result_columns_ = 0;
  int64_t row_blocks_ = 1, block_rows_ = 0;  // implicit_: blocks of output channels per band, and their rows
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;         // per thread
  WorkspaceLedger::Handle weights_ = -1;      // the packed (flipped) weights
  WorkspaceLedger::Handle window_ = -1;       // per thread: the staged (or padded) source window of a task
  WorkspaceLedger::Handle result_ = -1;       // per thread: a band's result, padded to whole tiles
  WorkspaceLedger::Handle amx_stage_ = -1;    // per thread: amx_pair_rows' staged columns of the window
  WorkspaceLedger::Handle tile_result_ = -1;  // per thread: a tile's result, for a view not stored as floats
  WorkspaceLedger::Handle offsets_ = -1;      // the column-matrix rows' offsets (in a padded window, or a 1x1 source)
  WorkspaceLedger::Handle rows16_offsets_ = -1;  // rows16_: the source's channel rows' offsets in its tensor
};

// The forward convolutions: a direct layer's gradInput as its flipped forward convolution where
// that pays (gemm_flipped_*), a transposed layer's gradInput (gemm_forward_*, any dtype, layout and
// geometry); each from padded windows where they serve (*_windows), else from tiles (*_tiles).
Support supports_flipped(const ConvProblem& p) {
  if (!flippable(p.geometry)) return refuse("not stride 1 with padding within the kernel");
  if (!flip_pays(p.geometry)) return refuse("too few positions for its tasks");
  return kSupported;
}
// Where an entry stands in its list: behind the direct kernels, or ahead of them (ahead_of_direct.h).
enum class Rank { kBehindDirect, kAheadOfDirect };
// Where GemmForward reads its source: padded windows per band of output rows, or tiles of columns.
enum class ForwardForm { kWindows, kTiles };
template <bool kFlipped, ForwardForm kForm, Rank kRank>
Support supports_gemm_forward(const ConvProblem& p, const CpuFeatures& cpu) {
  if (kRank == Rank::kAheadOfDirect) {
    const Support ahead =
        kForm == ForwardForm::kWindows ? windows_ahead_of_direct(p, cpu) : col2im_pairs_ahead_of_direct(p, cpu);
    if (!ahead) return ahead;
  }
  const Support kind = kFlipped ? supports_flipped(p) : kSupported;
  if (!kind) return kind;
  const ConvGeometry g = kFlipped ? flipped_geometry(p.geometry) : p.geometry;
  const View5& source = kFlipped ? p.dst : p.src;
  if (kForm == ForwardForm::kTiles) return supported_as(decide_tiles(g, source, p, cpu));
  return decide_windows(g, source, p, cpu);
}
template <bool kFlipped>
std::unique_ptr<ConvStep> plan_gemm_forward(const ConvProblem& p, PlanBuilder& builder) {
  const WindowsDecision* windows = builder.decided<WindowsDecision>();
  const TilesDecision* tiles = builder.decided<TilesDecision>();
  if (windows != nullptr || tiles != nullptr)
    return std::make_unique<GemmForward>(p, builder, kFlipped, windows, tiles);
  // (a plan always hands the decision over; a caller that did not gets the tiles, decided here)
  const TilesDecision own = kFlipped ? decide_tiles(flipped_geometry(p.geometry), p.dst, p, builder.cpu())
                                     : decide_tiles(p.geometry, p.src, p, builder.cpu());
  return std::make_unique<GemmForward>(p, builder, kFlipped, nullptr, &own);
}
template <bool kFlipped, ForwardForm kForm, Rank kRank = Rank::kBehindDirect>
constexpr ConvImpl gemm_forward_entry(const char* name) {
  return {name, "gemm", kFlipped ? ConvPass::kBackwardData : ConvPass::kForward,
          supports_gemm_forward<kFlipped, kForm, kRank>, plan_gemm_forward<kFlipped>};
}

}  // namespace

extern const ConvImpl kGemmFlippedWindowsBackwardData =
    gemm_forward_entry<true, ForwardForm::kWindows>("gemm_flipped_windows");
extern const ConvImpl kGemmFlippedTilesBackwardData =
    gemm_forward_entry<true, ForwardForm::kTiles>("gemm_flipped_tiles");
extern const ConvImpl kGemmForwardWindowsForward =
    gemm_forward_entry<false, ForwardForm::kWindows>("gemm_forward_windows");
extern const ConvImpl kGemmForwardTilesForward = gemm_forward_entry<false, ForwardForm::kTiles>("gemm_forward_tiles");
// (ahead of the direct kernels)
extern const ConvImpl kGemmFlippedWindowsAheadBackwardData =
    gemm_forward_entry<true, ForwardForm::kWindows, Rank::kAheadOfDirect>("gemm_flipped_windows");
extern const ConvImpl kGemmFlippedTilesAheadBackwardData =
    gemm_forward_entry<true, ForwardForm::kTiles, Rank::kAheadOfDirect>("gemm_flipped_tiles");
extern const ConvImpl kGemmForwardWindowsAheadForward =
    gemm_forward_entry<false, ForwardForm::kWindows, Rank::kAheadOfDirect>("gemm_forward_windows");

}  // namespace aclnn_cpu
