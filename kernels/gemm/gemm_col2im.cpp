// gemm_col2im: a direct convolution's gradInput as cols = W^T dY, then col2im-add into dX. Float
// accumulation, as on the NPU's cube unit.
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
#include "kernels/gemm/padded_window.h"
#include "kernels/matmul/bf16_pairs.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kPackedDyBudget = int64_t{16} << 20;  // bytes of dY packed once for every block of channels

// Per (samples, group, block of input channels), over output-position tiles:
// cols = W^T dY, then col2im-add into the dense float result. A task takes one sample, or, when the
// planes are small (under kMinTilePositions positions), several: their columns side by side in one
// GEMM, so that n is not a plane of a few dozen positions rounded up to the micro-kernel's width
// (7 x 7 planes: 49 columns computed as 64). dY is packed once for all blocks where a task's
// columns are one tile (and it fits a budget), else per task while multiplied.
constexpr int64_t kBufferedResult = int64_t{256} << 10;  // bytes of a task's result buffer, at most

int64_t samples_per_task(const ConvGeometry& g, const Shape& s) {
  if (columns_are_source(g) || s.dst_plane <= 0 || s.dst_plane >= kMinTilePositions || s.n <= 1) return 1;
  return ceil_div(s.n, ceil_div(s.n * s.dst_plane, 2 * kMinTilePositions));
}

// Whether gemm_col2im's pair products (amx.h) fit a problem of geometry g with tasks of `samples` samples:
// not a 1x1 kernel of stride 1 (its GEMM writes dX in place), and dY staged as rows of channel pairs for
// every (samples, group) unit within kPackedDyBudget.
bool pair_products_fit(const ConvGeometry& g, int64_t samples) {
  const Shape s(g);
  const int64_t units = ceil_div(s.n, samples) * s.groups;
  const int64_t pairs = ceil_div(s.cout, 2), columns = samples * s.dst_plane;
  if (columns_are_source(g) || columns > kPackedDyBudget / 4 ||
      !product_within(pairs, columns + kAmxBlock, kPackedDyBudget / 4))  // (columns first: no overflow)
    return false;
  return product_within(units, pairs * (round_up(columns, kAmxBlock) + kAmxBlock), kPackedDyBudget / 4);
}

}  // namespace

bool col2im_pair_products_fit(const ConvGeometry& g) { return pair_products_fit(g, samples_per_task(g, Shape(g))); }

namespace {

// What gemm_col2im decides in supports() and plans from: the tasks (samples side by side, blocks of
// input channels), where their results are computed, and how dY reaches the GEMM: packed once per
// (samples, group) unit, its rows read in place by the micro-kernel (from the user's 16-bit dY, or
// from a float copy of a dY that is not dense float), or packed per tile (from the view, or from
// the dense float copy).
struct Col2imDecision final : EntryDecision {
  int64_t samples = 1, block = 1, blocks = 1, tile = 1;
  bool buffered = false;
  bool pack_once = false, dy_rows = false, rows16 = false, dy_copy = false;
  uint64_t copied_floats = 0;      // dy_copy: floats of dY's float copy (below 2^58)
  AmxTiles amx = AmxTiles::kNone;  // BF16 pair products in the AMX tiles' order, on these tiles
  GemmBlocking blocking;
  ChoiceReasons reasons;
  std::string describe() const override { return reasons.text; }
};

// A tile of a plane cut into several: a multiple of 32 columns, of every NR (the same tiles, so
// the same col2im order, on every ISA), and of whole output rows where such a multiple fits
// (col2im then adds a row's runs in one loop).
int64_t sliver_tile(const ConvGeometry& g, int64_t tile) {
  if (tile >= Shape(g).dst_plane) return tile;
  const int64_t width = g.dst_size[2];  // (the tile is small: no lcm overflows)
  const int64_t rows_multiple = width >= 1 && width <= tile ? std::lcm(int64_t{32}, width) : INT64_MAX;
  const int64_t multiple = rows_multiple <= tile ? rows_multiple : 32;
  return std::max(multiple, tile / multiple * multiple);
}

Col2imDecision decide_col2im(const ConvProblem& p, const CpuFeatures& cpu) {
  const ConvGeometry& g = p.geometry;
  const Shape s(g);
  const std::string& forced = p.forced_choices;
  const bool from_view = stage_from_view(p.dst, p.math);
  Col2imDecision d;
  // Samples per task: about 2 * kMinTilePositions columns where planes are smaller than that (sample
  // groups of equal size but the last), else one; their columns are one tile, packed once (so
  // no_pack_once takes one sample). Input channels per task: blocks of a slice's channels until there
  // are kTargetTasks tasks (whole slices when there are that many).
  const int64_t several = samples_per_task(g, s);
  if (take_choice(forced, "samples", several > 1 && !named_in(forced, "no_pack_once"), true)) d.samples = several;
  d.block = std::max<int64_t>(1, s.cin / pieces_for_tasks(ceil_div(s.n, d.samples) * s.groups));
  d.blocks = ceil_div(s.cin, d.block);
  // A result that is not a dense float tensor: each task computes its channels in a buffer of its
  // thread's, within kBufferedResult, and rounds them into the view from there (no float copy of the
  // whole result).
  const double result_bytes = double(d.samples) * double(d.block) * double(s.src_plane) * 4;
  d.buffered = take_choice(forced, "buffered",
                           !result_in_place(p) && !may_overlap(p.grad_input) && result_bytes < double(int64_t{1} << 58),
                           result_bytes <= double(kBufferedResult));
  const int64_t max_rows = d.block * s.kernel_volume;
  d.tile = d.samples > 1 ? d.samples * s.dst_plane : s.tile(max_rows);
  // dY is the right operand of every block's GEMMs: packed once per (samples, group) where there
  // are several blocks and it fits kPackedDyBudget (each block would pack it again), when a task's
  // columns are one tile (samples side by side, or one whole plane).
  // A dY that is not a dense float array (converted while packed) is packed once that way with
  // planes of several tiles too, its tiles whole slivers (multiples of 32 columns): each block
  // would convert it again.
  const int64_t units = ceil_div(s.n, d.samples) * s.groups;
  const bool tiles_of_slivers = from_view && d.tile >= 32 && d.samples == 1;
  const bool packable = (d.tile == s.dst_plane || tiles_of_slivers) && !columns_are_source(g) &&
                        product_within(units, s.cout, kPackedDyBudget) &&
                        product_within(units * s.cout, ceil_div(s.dst_plane, 32), kPackedDyBudget / 4 / 32);
  d.pack_once = d.samples > 1 || take_choice(forced, "pack_once", packable, d.blocks > 1);
  if (d.pack_once && d.samples == 1) d.tile = sliver_tile(g, d.tile);
  d.blocking = plan_gemm_blocking(max_rows, d.tile, s.cout, cpu);
  const AmxTiles amx = amx_pair_products(cpu.pairs, p.dst, p.wei, p.math);
  if (take_choice(forced, "pairs", amx != AmxTiles::kNone && pair_products_fit(g, d.samples), true)) {
    d.amx = amx, d.pack_once = false;
    d.tile = std::min(d.tile, d.samples * s.dst_plane);
  } else {
    // dY's rows read in place by the micro-kernel (sgemm_rows) rather than packed for every task (each
    // block of channels would pack the sample's dY again, even for a block of one channel's K rows): a
    // dense float dY's where it is not packed once; a dY that is not a dense float array, to be packed
    // once per sample, converted once into plain float rows instead and read in place as a float dY is
    // (as panels: the same floats written, with a transpose more). (Only for a dY with elements: its
    // sizes then multiply within its memory; a forced pack_once keeps dY packed.)
    const uint64_t copied_floats =
        uint64_t(saturating_product(saturating_product(s.n, s.groups), saturating_product(s.cout, s.dst_plane)));
    const bool has_rows = d.samples == 1 && !columns_are_source(g) && s.n > 0 && s.groups > 0 && s.cout > 0 &&
                          s.dst_plane > 0 && (!from_view || copied_floats < (uint64_t{1} << 58));
    d.dy_rows = take_choice(forced, "dy_rows", has_rows,
                            from_view ? d.pack_once && !named_in(forced, "pack_once") : !d.pack_once);
    if (d.dy_rows) {
      d.pack_once = false;
      // Where the micro-kernel widens 16-bit rows itself (sgemm_rows_16bit) and that dY is a dense
      // FLOAT16/BF16 tensor (no rounding asked of it), its rows are read in place from the user's
      // tensor: no copy.
      d.rows16 = take_choice(forced, "rows16",
                             from_view && (p.dst.dtype == ACL_FLOAT16 || p.dst.dtype == ACL_BF16) &&
                                 p.math == MathMode::kFull && is_dense(p.dst) && converts_in_registers(d.blocking),
                             true);
      d.dy_copy = from_view && !d.rows16;
      d.copied_floats = d.dy_copy ? copied_floats : 0;
      d.tile = sliver_tile(g, d.tile);  // (whole micro-kernel tiles: rows and columns rounded up in cols)
    }
  }
  d.reasons.note(forced, d.samples > 1, "samples", "several small planes' columns side by side in one GEMM");
  d.reasons.note(forced, d.buffered, "buffered", "each task's result rounded from a buffer of its thread's");
  d.reasons.note(forced, d.pack_once, "pack_once", "dY packed once for every block of channels");
  d.reasons.note(forced, d.amx != AmxTiles::kNone, "pairs", "BF16 dY and weights in the AMX tiles' order");
  d.reasons.note(forced, d.dy_rows, "dy_rows",
                 d.dy_copy ? "dY converted once into float rows read in place by the micro-kernel"
                           : "dY's rows read in place by the micro-kernel");
  d.reasons.note(forced, d.rows16, "rows16", "a dense 16-bit dY widened by the micro-kernel");
  return d;
}

class GemmBackwardData final : public ConvStep {
 public:
  // Books the step `d` decided (decide_col2im).
  GemmBackwardData(const ConvProblem& p, PlanBuilder& b, const Col2imDecision& d)
      : g_(p.geometry),
        s_(p.geometry),
        threads_(b.threads()),
        dst_(p.dst),
        math_(p.math),
        conversions_(b.cpu().conversions),
        dy_from_view_(stage_from_view(p.dst, p.math)),
        rows_dy_(d.dy_rows),
        rows16_(d.rows16),
        samples_(d.samples),
        block_(d.block),
        buffered_(d.buffered),
        output_(p.grad_input, b, "gradInput.f32", buffered_, result_bias(p)),
        blocks_(d.blocks),
        tile_(d.tile),
        blocking_(d.blocking),
        pack_dy_(d.pack_once),
        amx_(d.amx) {
    if (buffered_)
      result_ = b.book_scratch("gemm.task_result", samples_ * block_ * s_.src_plane, sizeof(float), threads_);
    const int64_t max_rows = block_ * s_.kernel_volume, units = ceil_div(s_.n, samples_) * s_.groups;
    if (paired()) {
      book_pair_products(b, units, max_rows);
      return;
    }
    // (Booked with a micro-kernel tile of slack: the last row's last tile reads whole tiles past its end.)
    if (d.dy_copy) {
      dy_rows_copy_ =
          b.book_scratch("gemm.gradOutput_rows", d.copied_floats + right_sliver_columns(blocking_), sizeof(float));
    }
    if (rows_dy_) {
      cols_ld_ = round_up(tile_, right_sliver_columns(blocking_));
      const int64_t rows = round_up(max_rows, left_sliver_rows(blocking_));
      cols_ = b.book_scratch("gemm.cols", uint64_t(saturating_product(rows, cols_ld_)), sizeof(float), threads_);
      dy_rows_ = b.book_scratch("gemm.gradOutput_row_offsets", s_.cout, sizeof(int64_t));
    } else if (!columns_are_source(g_)) {
      cols_ = b.book_scratch("gemm.cols", max_rows * tile_, sizeof(float), threads_);
    }
    // (op(B) packed per tile, from the view or a matrix: at most tile_ columns over Cout_g)
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(true, tile_, s_.cout), sizeof(float), threads_);
    // W^T is the left operand of every tile of every sample: packed once per (group, block).
    // (Sizes past 2^60 bytes, possible only with absurd empty problems, go to the ledger as too large.)
    const int64_t padded_rows = max_rows + left_sliver_rows(blocking_), limit = int64_t{1} << 58;
    uint64_t weight_floats = UINT64_MAX;
    if (product_within(padded_rows, s_.cout, limit) &&
        product_within(s_.groups * blocks_, padded_rows * s_.cout, limit)) {
      block_floats_ = packed_left_floats(blocking_, max_rows, s_.cout);
      weight_floats = static_cast<uint64_t>(s_.groups * blocks_ * block_floats_);
    }
    weights_ = b.book_scratch("gemm.packed_weights", weight_floats, sizeof(float));
    if (pack_dy_) {  // gathered from the view
      dy_from_view_ = true;
      dy_floats_ = packed_right_floats(blocking_, samples_ * s_.dst_plane, s_.cout);
      packed_dy_ = product_within(units, dy_floats_, int64_t{1} << 58)
                       ? b.book_scratch("gemm.packed_gradOutput", units * dy_floats_, sizeof(float))
                       : b.book_scratch("gemm.packed_gradOutput", UINT64_MAX, sizeof(float));
    }
    b.need_float_inputs(false, true, !dy_from_view_);
  }

  // dy_rows_copy_: dY converted from the user's view into plain float rows, a task per (sample, group, channel).
  int copy_grad_output(float* out) const {
    const int64_t slices = s_.n * s_.groups;
    return run_tasks(slices * s_.cout, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t n = t / s_.cout / s_.groups, grp = t / s_.cout % s_.groups, co = t % s_.cout;
      read_plane_floats(dst_, math_, n, grp * s_.cout + co, 0, s_.dst_plane, out + t * s_.dst_plane, conversions_);
    });
  }

  int64_t tasks() const override { return ceil_div(s_.n, samples_) * s_.groups * blocks_; }
  std::string detail() const override { return isa_detail(blocking_) + amx_detail(amx_) + (rows16_ ? ":rows16" : ""); }

  int run(const Workspace& w, const StepInputs& in) const override {
    if (paired()) return run_pairs(w, in);
    float* grad_input = output_.data(w);
    float* weights = w.at<float>(weights_);
    int status = pack_weights(in.f32.wei, weights);
    if (status == ACLNN_SUCCESS && pack_dy_) status = pack_grad_output(w.at<float>(packed_dy_));
    const float* dy_copy = dy_rows_copy_ >= 0 ? w.at<float>(dy_rows_copy_) : nullptr;
    if (status == ACLNN_SUCCESS && dy_copy != nullptr) status = copy_grad_output(w.at<float>(dy_rows_copy_));
    if (status != ACLNN_SUCCESS) return status;
    int64_t* dy_rows = w.at<int64_t>(dy_rows_);  // rows_dy_: row co of a slice's dY at co * plane
    for (int64_t co = 0; co < (rows_dy_ ? s_.cout : 0); ++co) dy_rows[co] = co * s_.dst_plane;
    // (dense, not empty; a copy's slack read too)
    const int64_t dy_floats = rows_dy_ ? s_.n * s_.groups * s_.cout * s_.dst_plane +
                                             (dy_copy != nullptr ? right_sliver_columns(blocking_) : 0)
                                       : 0;
    const float* dy_dense = dy_copy != nullptr ? dy_copy : in.f32.dst;
    // (rows16_: the user's dense FLOAT16/BF16 dY, its rows where a float dY's would be)
    const uint16_t* dy16 = rows16_ ? static_cast<const uint16_t*>(dst_.data) + dst_.offset : nullptr;
    status = run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t n0 = t / (s_.groups * blocks_) * samples_, n1 = std::min(s_.n, n0 + samples_);
      const int64_t grp = t / blocks_ % s_.groups, c0 = t % blocks_ * block_, c1 = std::min(s_.cin, c0 + block_);
      const PackedLeft wt{weights + (grp * blocks_ + c0 / block_) * block_floats_, s_.cout, 0};
      const int64_t m = (c1 - c0) * s_.kernel_volume;
      float* pack = w.at<float>(pack_, thread_index());
      if (pack_dy_ && samples_ > 1) {  // one tile: the columns of samples n0..n1
        const int64_t columns = (n1 - n0) * s_.dst_plane;
        float* cols = w.at<float>(cols_, thread_index());
        // cols ((c1-c0)*K x samples*plane) = W_g[:, c0*K : c1*K]^T ((c1-c0)*K x Cout_g) * dY[n0:n1] (Cout_g x
        // samples*plane)
        const float* dy = w.at<float>(packed_dy_) + (n0 / samples_ * s_.groups + grp) * dy_floats_;
        sgemm(blocking_, m, columns, s_.cout, wt, PackedRight{dy, s_.cout}, false, cols, columns);
        for (int64_t n = n0; n < n1; ++n) {
          float* dx = task_result(w, grad_input, n, n0, grp, c0);  // channel c0's plane
          std::memset(dx, 0, static_cast<size_t>((c1 - c0) * s_.src_plane) * sizeof(float));
          col2im_add(g_, cols + (n - n0) * s_.dst_plane, columns, 0, (c1 - c0) * s_.kernel_volume, 0, s_.dst_plane, dx,
                     blocking_.isa);
        }
        return store_task_result(w, grad_input, n0, n1, grp, c0, c1);
      }
      const int64_t n = n0;
      float* dx = task_result(w, grad_input, n, n0, grp, c0);  // channel c0's plane
      const int64_t slice = (n * s_.groups + grp) * s_.cout * s_.dst_plane;
      const float* dy = dy_from_view_ && dy_copy == nullptr ? nullptr : dy_dense + slice;
      const float* packed_dy = pack_dy_ ? w.at<float>(packed_dy_) + (n * s_.groups + grp) * dy_floats_ : nullptr;
      const bool in_place = cols_ < 0;  // col2im is the identity: the GEMM writes dx
      if (!in_place) std::memset(dx, 0, static_cast<size_t>((c1 - c0) * s_.src_plane) * sizeof(float));
      for (int64_t o0 = 0; o0 < s_.dst_plane; o0 += tile_) {
        const int64_t o1 = std::min(s_.dst_plane, o0 + tile_);
        float* cols = in_place ? dx + o0 : w.at<float>(cols_, thread_index());
        // dY's rows in place while whole tiles stay inside dY (only its very last row could end in a
        // partial one)
        const int64_t last_row = (n * s_.groups + grp) * s_.cout * s_.dst_plane + (s_.cout - 1) * s_.dst_plane;
        const bool rows = rows_dy_ && last_row + o0 + round_up(o1 - o0, right_sliver_columns(blocking_)) <= dy_floats;
        const int64_t ldc = in_place ? s_.src_plane : rows ? cols_ld_ : o1 - o0;
        // cols ((c1-c0)*K x tile) = W_g[:, c0*K : c1*K]^T ((c1-c0)*K x Cout_g) * dY[:, o0:o1] (Cout_g x tile)
        if (packed_dy != nullptr) {  // packed once: the tile's slivers (tiles are whole slivers)
          sgemm(blocking_, m, o1 - o0, s_.cout, wt, PackedRight{packed_dy + o0 * s_.cout, s_.cout}, false, cols, ldc);
        } else if (rows && rows16_) {
          sgemm_rows_16bit(blocking_, m, o1 - o0, s_.cout, wt, dy16 + slice + o0, dy_rows, dst_.dtype == ACL_BF16, cols,
                           ldc, NarrowedRows{nullptr, 0, false});
        } else if (rows) {
          sgemm_rows(blocking_, m, o1 - o0, s_.cout, wt, dy + o0, dy_rows, cols, ldc);
        } else if (dy_from_view_) {  // dY converted from the user's view while it is packed
          const GradOutputPanels panels{this, n, grp * s_.cout, o0};
          sgemm(blocking_, pack, m, o1 - o0, s_.cout, wt, PanelWriter{GradOutputPanels::write, &panels}, false, cols,
                ldc);
        } else {
          sgemm(blocking_, pack, m, o1 - o0, s_.cout, wt, MatrixRef{dy + o0, s_.dst_plane, false}, false, cols, ldc);
        }
        if (!in_place) col2im_add(g_, cols, ldc, 0, (c1 - c0) * s_.kernel_volume, o0, o1, dx, blocking_.isa);
      }
      store_task_result(w, grad_input, n, n + 1, grp, c0, c1);
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, true);
    return status;
  }

 private:
  // Where a task computes channels [c0, ..) of sample n (its first sample n0) of group grp, channel
  // c0's plane first: in the dense float result, or (buffered_) in this thread's buffer.
  float* task_result(const Workspace& w, float* grad_input, int64_t n, int64_t n0, int64_t grp, int64_t c0) const {
    if (buffered_) return w.at<float>(result_, thread_index()) + (n - n0) * block_ * s_.src_plane;
    return grad_input + ((n * s_.groups + grp) * s_.cin + c0) * s_.src_plane;
  }
  // A task's channels [c0, c1) of samples [n0, n1) into the user's view (nothing when computed there).
  void store_task_result(const Workspace& w, float* grad_input, int64_t n0, int64_t n1, int64_t grp, int64_t c0,
                         int64_t c1) const {
    for (int64_t n = n0; n < n1; ++n) {
      if (!buffered_) {
        output_.store_part(w, n, grp * s_.cin + c0, grp * s_.cin + c1, 0, s_.src_plane);
        continue;
      }
      const float* planes = task_result(w, grad_input, n, n0, grp, c0);
      output_.store_rows(planes, s_.src_plane, c1 - c0, n, grp * s_.cin + c0, 0, s_.src_plane);
    }
  }

  // W_g[:, c0*K : c1*K]^T ((c1-c0)*K x Cout_g) of each group and block of input channels as a
  // PackedLeft: one task per (group, block).
  int pack_weights(const float* wei, float* out) const {
    return run_tasks(s_.groups * blocks_, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t grp = t / blocks_, c0 = t % blocks_ * block_, c1 = std::min(s_.cin, c0 + block_);
      pack_left(blocking_, (c1 - c0) * s_.kernel_volume, s_.cout,
                MatrixRef{wei + grp * s_.cout * s_.rows() + c0 * s_.kernel_volume, s_.rows(), true},
                out + t * block_floats_, s_.cout, 0);
    });
  }

  // BF16 dY and W (used as they are) in pair products in the AMX tiles' order where the CPU runs it
  // (amx.h), pairs of output channels: dY staged once per (samples, group) unit as rows of channel
  // pairs, [pair][column] words, ld_ apart (its columns rounded up to whole blocks of 32, zeros past
  // them), within kPackedDyBudget; W^T packed per (group, block) in tiles (pack_amx_left). Where
  // pair_products_fit.
  void book_pair_products(PlanBuilder& b, int64_t units, int64_t max_rows) {
    const int64_t pairs = ceil_div(s_.cout, 2), columns = samples_ * s_.dst_plane;
    ld_ = round_up(columns, kAmxBlock) + kAmxBlock;  // (a tile at column o0 reads 32 past it)
    // (whole blocks of 32 rows and columns in the result)
    const int64_t result_rows = round_up(max_rows, kAmxBlock), result_columns = round_up(tile_, kAmxBlock);
    cols_ = b.book_scratch("gemm.cols", result_rows * result_columns, sizeof(float), threads_);
    dy_pairs_ = b.book_scratch("gemm.gradOutput_pairs", units * pairs * ld_, sizeof(uint32_t));
    dy_planes_ = b.book_scratch("gemm.gradOutput_planes", 2 * s_.dst_plane, sizeof(float), threads_);
    pair_rows_ = b.book_scratch("gemm.pair_rows", pairs, sizeof(int64_t));
    block_floats_ = amx_left_words(max_rows, pairs);
    weights_ = b.book_scratch("gemm.packed_weights",
                              product_within(s_.groups * blocks_, block_floats_, int64_t{1} << 58)
                                  ? uint64_t(s_.groups * blocks_ * block_floats_)
                                  : UINT64_MAX,
                              sizeof(uint32_t));
    amx_stage_ = b.book_scratch("gemm.amx_stage", amx_stage_words(pairs), sizeof(uint32_t), threads_);
    b.need_float_inputs(false, true, false);
  }

  // The pair products' run: dY and W^T in pairs, then per (samples, group, block of input channels) and tile of
  // columns: cols ((c1-c0)*K x tile) = W_g[:, c0*K : c1*K]^T * dY[:, tile], in pairs of output
  // channels, then col2im-add into the dense float result.
  int run_pairs(const Workspace& w, const StepInputs& in) const {
    float* grad_input = output_.data(w);
    auto* weights = w.at<uint32_t>(weights_);
    auto* dy_pairs = w.at<uint32_t>(dy_pairs_);
    const int64_t pairs = ceil_div(s_.cout, 2), units = ceil_div(s_.n, samples_) * s_.groups;
    int64_t* pair_rows = w.at<int64_t>(pair_rows_);
    for (int64_t q = 0; q < pairs; ++q) pair_rows[q] = q * ld_;
    int status = run_tasks(s_.groups * blocks_, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t grp = t / blocks_, c0 = t % blocks_ * block_, c1 = std::min(s_.cin, c0 + block_);
      const int64_t rows = (c1 - c0) * s_.kernel_volume;
      const float* wei =
          in.f32.wei + grp * s_.cout * s_.rows() + c0 * s_.kernel_volume;  // W_g^T(i, co): wei[co*rows + i]
      const auto pair = [&](int64_t i, int64_t q) {
        const uint16_t odd = 2 * q + 1 < s_.cout ? bf16_bits(wei[(2 * q + 1) * s_.rows() + i]) : 0;
        return bf16_pair(bf16_bits(wei[2 * q * s_.rows() + i]), odd);
      };
      pack_amx_left(amx_, rows, pairs, 0, round_up(rows, kAmxBlock), pair, weights + t * block_floats_);
    });
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(units * pairs, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t unit = t / pairs, q = t % pairs, n0 = unit / s_.groups * samples_, grp = unit % s_.groups;
      const int64_t n1 = std::min(s_.n, n0 + samples_);
      uint32_t* row = dy_pairs + (unit * pairs + q) * ld_;
      float* planes = w.at<float>(dy_planes_, thread_index());
      for (int64_t n = n0; n < n1; ++n) {
        stage_channel_pairs(dst_, n, grp * s_.cout + 2 * q, 2 * q + 1 < s_.cout, 0, s_.dst_plane, planes,
                            row + (n - n0) * s_.dst_plane, conversions_);
      }
      std::fill(row + (n1 - n0) * s_.dst_plane, row + ld_, 0u);
    });
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(tasks(), threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t unit = t / blocks_, n0 = unit / s_.groups * samples_, n1 = std::min(s_.n, n0 + samples_);
      const int64_t grp = unit % s_.groups, c0 = t % blocks_ * block_, c1 = std::min(s_.cin, c0 + block_);
      const uint32_t* block_weights = weights + (grp * blocks_ + c0 / block_) * block_floats_;
      const int64_t m = (c1 - c0) * s_.kernel_volume, columns = (n1 - n0) * s_.dst_plane;
      float* cols = w.at<float>(cols_, thread_index());
      for (int64_t n = n0; n < n1; ++n) {
        std::memset(task_result(w, grad_input, n, n0, grp, c0), 0,
                    static_cast<size_t>((c1 - c0) * s_.src_plane) * sizeof(float));
      }
      for (int64_t o0 = 0; o0 < columns; o0 += tile_) {  // tiles of the unit's columns (within one sample when single)
        const int64_t o1 = std::min(columns, o0 + tile_), ldc = round_up(o1 - o0, kAmxBlock);
        // cols ((c1-c0)*K x tile) = W_g[:, c0*K : c1*K]^T ((c1-c0)*K x Cout_g) * dY[:, o0:o1] (Cout_g x tile)
        const uint32_t* dy_tile = dy_pairs + unit * pairs * ld_ + o0;
        // (dY's pair rows evenly spaced: the CPU's tiles load them in place)
        amx_pair_rows(amx_, m, o1 - o0, pairs, block_weights, dy_tile, pair_rows,
                      w.at<uint32_t>(amx_stage_, thread_index()), cols, ldc);
        for (int64_t at = o0; at < o1;) {  // col2im, sample by sample
          const int64_t n = n0 + at / s_.dst_plane, end = std::min(o1, (at / s_.dst_plane + 1) * s_.dst_plane);
          const int64_t first = at % s_.dst_plane;
          col2im_add(g_, cols + (at - o0), ldc, 0, (c1 - c0) * s_.kernel_volume, first, first + (end - at),
                     task_result(w, grad_input, n, n0, grp, c0), blocking_.isa);
          at = end;
        }
      }
      store_task_result(w, grad_input, n0, n1, grp, c0, c1);
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, true);
    return status;
  }

  // dY of each (samples, group) unit as a PackedRight, read from the view: tasks of whole slivers.
  int pack_grad_output(float* out) const {
    const int64_t units = ceil_div(s_.n, samples_) * s_.groups, nr = right_sliver_columns(blocking_);
    const int64_t pieces = pieces_for_tasks(units), slivers = ceil_div(samples_ * s_.dst_plane, nr);
    return run_tasks(units * pieces, threads_, "gemm gradInput", [&](int64_t t) {
      const int64_t unit = t / pieces, n0 = unit / s_.groups * samples_, grp = unit % s_.groups;
      const int64_t columns = (std::min(s_.n, n0 + samples_) - n0) * s_.dst_plane;
      const int64_t j0 = slivers * (t % pieces) / pieces * nr,
                    j1 = std::min(columns, slivers * (t % pieces + 1) / pieces * nr);
      if (j0 >= j1) return;
      view_panels(dst_, math_, n0, grp * s_.cout, j0, 0, s_.cout, 0, j1 - j0, static_cast<int>(nr),
                  out + unit * dy_floats_ + j0 * s_.cout, conversions_);
    });
  }

  // dY[:, first:] of one (sample, group) slice as sgemm's right operand, read from the view.
  struct GradOutputPanels {
    const GemmBackwardData* self;
    int64_t n, c0, first;
    static void write(const void* context, int64_t p0, int64_t depth, int64_t j0, int64_t cols, int width, float* out) {
      const auto* panels = static_cast<const GradOutputPanels*>(context);
      const GemmBackwardData& step = *panels->self;
      view_panels(step.dst_, step.math_, panels->n, panels->c0, panels->first, p0, depth, j0, cols, width, out,
                  step.conversions_);
    }
  };

  ConvGeometry g_;
  Shape s_;
  int threads_;
  View5 dst_;  // dY as the user passed it
  MathMode math_;
  const Conversions16* conversions_;  // the plan's kit's
  bool dy_from_view_;                 // stage_from_view(dst_): dY read from the view while packed (no dense copy)
  bool rows_dy_ = false;              // dY's rows read in place (sgemm_rows) into cols of cols_ld_ columns
  bool rows16_ = false;  // ... from the user's dense FLOAT16/BF16 dY (sgemm_rows_16bit), not from a float copy
  int64_t cols_ld_ = 0;
  WorkspaceLedger::Handle dy_rows_ = -1;  // rows_dy_: the offsets of dY's rows in a slice
  // Samples per task: about 2 * kMinTilePositions columns where planes are smaller than that (sample
  // groups of equal size but the last), else one. Input channels per task (block_): blocks of a
  // slice's channels until there are kTargetTasks tasks (whole slices when there are that many).
  int64_t samples_, block_;
  // A result that is not a dense float tensor: each task computes its channels in a buffer of its
  // thread's and rounds them into the view from there (no float copy of the whole result).
  bool buffered_;
  DenseFloatOutput output_;
  WorkspaceLedger::Handle result_ = -1;  // buffered_: per thread
  int64_t blocks_ = 1, tile_ = 1, block_floats_ = 0;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle cols_ = -1, pack_ = -1;          // per thread
  bool pack_dy_ = false;                                   // dY packed once per (samples, group) unit
  WorkspaceLedger::Handle dy_rows_copy_ = -1;              // dY converted into plain float rows (rows_dy_ reads them)
  WorkspaceLedger::Handle packed_dy_ = -1;                 // pack_dy_: those units
  int64_t dy_floats_ = 0;                                  // floats of one unit's packed dY
  AmxTiles amx_ = AmxTiles::kNone;                         // ... on AMX tiles (amx.h)
  bool paired() const { return amx_ != AmxTiles::kNone; }  // pair products, in the tiles' order
  WorkspaceLedger::Handle amx_stage_ = -1;                 // per thread: amx_pair_rows' staging
  int64_t ld_ = 0;                                         // paired(): words between dY's channel-pair rows
  WorkspaceLedger::Handle dy_pairs_ = -1, dy_planes_ = -1, pair_rows_ = -1;
  WorkspaceLedger::Handle weights_ = -1;  // W^T packed per (group, block of input channels)
};

// gemm_col2im: a direct layer's gradInput as W^T dY and col2im; any dtype, layout and geometry.
Support supports_col2im(const ConvProblem& p, const CpuFeatures& cpu) { return supported_as(decide_col2im(p, cpu)); }
// ... and ahead of `direct` (ahead_of_direct.h): where it takes pair products.
Support supports_col2im_ahead(const ConvProblem& p, const CpuFeatures& cpu) {
  Col2imDecision d = decide_col2im(p, cpu);
  if (d.amx == AmxTiles::kNone) return refuse("not BF16 pairs that col2im fits");
  return supported_as(std::move(d));
}
std::unique_ptr<ConvStep> plan_col2im(const ConvProblem& p, PlanBuilder& builder) {
  const Col2imDecision* decided = builder.decided<Col2imDecision>();
  // (a plan always hands the decision over; a caller that did not gets it decided here)
  return std::make_unique<GemmBackwardData>(p, builder,
                                            decided != nullptr ? *decided : decide_col2im(p, builder.cpu()));
}

}  // namespace

extern const ConvImpl kGemmCol2imBackwardData = {"gemm_col2im", "gemm", ConvPass::kBackwardData, supports_col2im,
                                                 plan_col2im};
extern const ConvImpl kGemmCol2imAheadBackwardData = {"gemm_col2im", "gemm", ConvPass::kBackwardData,
                                                      supports_col2im_ahead, plan_col2im};

}  // namespace aclnn_cpu
