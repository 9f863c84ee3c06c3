// gradWeight by GEMMs: dW = sum over samples and output positions of dY cols^T. Float
// accumulation, as on the NPU's cube unit.
//
// Parallel split, fixed by the geometry alone (never by the thread count): the reduction over
// (sample, output position) is cut into `chunks` equal ranges, the column-matrix rows into
// `blocks`; a task (group, block, chunk) sums its range into its chunk's own partial dW, and the
// partials are then added in chunk order. Within a chunk, each GEMM (a tile of positions, a band, or
// a batch of bands) sums its positions as a blocked sum (blocked_sum.h) added to the partial, so the
// products' extents, fixed by the geometry (gemm_weight_split.h), fix the order. From padded windows
// (and 1x1 sources) the products may be transposed, dW^T = cols dY^T with cols read in place: the
// same sums as the product of the same extent the other way round.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "kernels/common/im2col.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/common/transpose_4x4.h"
#include "kernels/core/plan.h"
#include "kernels/gemm/gemm_weight_split.h"
#include "kernels/gemm/padded_window.h"
#include "kernels/matmul/bf16_pairs.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {
namespace {

using namespace gemm_weight;

constexpr int64_t kDyPiece = 1024;  // positions of dY read from a view per packing step

class GemmBackwardWeight final : public ConvStep {
 public:
  // Books the step `d` decided (decide_weight).
  GemmBackwardWeight(const ConvProblem& p, PlanBuilder& b, const WeightDecision& d)
      : g_(p.geometry),
        s_(p.geometry),
        threads_(b.threads()),
        src_(p.src),
        dst_(p.dst),
        dw_(p.grad_weight),
        math_(p.math),
        conversions_(b.cpu().conversions) {
    const WeightSplit& split = d.split;
    const WeightVariant& v = d.variant;
    chunks_ = split.chunks, block_ = split.block, blocks_ = split.blocks;
    const int64_t weight_floats = split.weight_floats, length = split.length;
    windows_ = d.windows, bands_ = d.bands, window_floats_ = d.window_floats;
    x_staged_ = v.x_staged, tile_ = v.tile, blocking_ = v.blocking, batch_ = v.batch;
    amx_ = v.amx, transposed_ = v.transposed, depth_major_ = v.depth_major;
    bf16_in_place_ = v.bf16_in_place;
    rounds_blocks_ = v.rounds_blocks, narrows_sums_ = v.narrows_sums;
    if (windows_) {
      lines_ = b.book_scratch("gemm.line_offsets", block_, sizeof(int64_t), threads_);
    } else {
      if (x_staged_) {
        window_ = b.book_scratch("gemm.source_window", split.block_channels * max_source_window(g_, tile_),
                                 sizeof(float), threads_);
      }
      if (!columns_are_source(g_)) cols_ = b.book_scratch("gemm.cols", block_ * tile_, sizeof(float), threads_);
    }
    const bool pack_once = v.pack_once, dy_dense = v.dy_dense;
    // dY packed once: its slivers (of the split's blocking), as rows of dY, dY^T, or pairs of positions.
    group_floats_ = paired()      ? packed_pairs_right_words(s_.cout, length / 2)
                    : transposed_ ? packed_right_floats(split.blocking, s_.cout, length)
                                  : packed_left_floats(split.blocking, s_.cout, length);
    const int64_t sliver = transposed_ ? right_sliver_columns(blocking_) : left_sliver_rows(blocking_);
    if (pack_once) packed_dy_ = b.book_scratch("gemm.packed_gradOutput", s_.groups * group_floats_, sizeof(float));
    if (windows_) window_ = b.book_scratch("gemm.padded_window", batch_ * window_floats_, sizeof(float), threads_);
    if (pack_once && !dy_dense) {  // one sliver of dY rows per thread, read from the view
      // (saturated: a size past 64 bits is too large for the ledger)
      dy_rows_ =
          b.book_scratch("gemm.gradOutput_rows", uint64_t(saturating_product(sliver, std::min(s_.dst_plane, kDyPiece))),
                         sizeof(float), threads_);
    }
    if (transposed_) {  // every chunk sums into its own dW^T, added in chunk order into dW at the end
      partials_ = b.book_scratch("gemm.partials", weight_floats, sizeof(float), chunks_);
      positions_ =
          b.book_scratch("gemm.band_positions", windows_ ? bands_.columns() : tile_, sizeof(int64_t), threads_);
      if (!windows_) lines_ = b.book_scratch("gemm.line_offsets", block_, sizeof(int64_t), threads_);
    } else {  // chunk 0 sums into the result itself, each later chunk into its own partial
      if (chunks_ > 1) partials_ = b.book_scratch("gemm.partials", weight_floats, sizeof(float), chunks_ - 1);
      pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(pack_once), sizeof(float), threads_);
    }
    if (narrows_sums_) sums_ = b.book_scratch("gemm.row_block_sums", s_.cout * block_, sizeof(float), threads_);
    if (paired()) {  // a product's depth: a band's positions, or a tile's, in pairs
      const int64_t pairs = ceil_div(windows_ ? bands_.columns() : tile_, 2);
      amx_stage_ = b.book_scratch("gemm.amx_stage", amx_a_stage_words(pairs), sizeof(uint32_t), threads_);
    }
    output_ = DenseFloatOutput(dw_, b, "gradWeight.f32", (rounds_blocks_ && transposed_) || narrows_sums_);
    b.need_float_inputs(!x_staged_ && !windows_ && !paired(), false, !pack_once || dy_dense);
  }

  int64_t tasks() const override { return s_.groups * blocks_ * chunks_; }

  std::string detail() const override {
    return isa_detail(blocking_) + (windows_ ? ":windows" : "") + (transposed_ ? ":transposed" : "") +
           (bf16_in_place_ ? ":bf16_rows" : "") + (depth_major_ ? ":depth_major" : "") + amx_detail(amx_) +
           (narrows_sums_ ? ":narrowed" : "") + (batch_ > 1 ? ":bands=" + std::to_string(batch_) : "") +
           ":chunks=" + std::to_string(chunks_) + ":rows=" + std::to_string(blocks_) + "x" + std::to_string(block_);
  }

  int run(const Workspace& w, const StepInputs& in) const override {
    float* grad_weight = output_.data(w);  // (null where rounded from the transposed partials)
    float* packed_dy = packed_dy_ >= 0 ? w.at<float>(packed_dy_) : nullptr;
    int status = packed_dy != nullptr ? pack_grad_output(w, in.f32.dst, packed_dy) : ACLNN_SUCCESS;
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(tasks(), threads_, "gemm gradWeight", [&](int64_t t) {
      const int64_t grp = t / (blocks_ * chunks_), r0 = t / chunks_ % blocks_ * block_, chunk = t % chunks_;
      const int64_t r1 = std::min(s_.rows(), r0 + block_);
      if (transposed_) {  // chunk's dW^T rows r0..r1 (ld Cout_g)
        float* sum = w.at<float>(partials_, chunk) + (grp * s_.rows() + r0) * s_.cout;
        const bool summed = windows_ ? sum_bands(w, in, packed_dy, grp, r0, r1, chunk, Sums{sum, s_.cout, {}})
                                     : sum_source_transposed(w, in, packed_dy, grp, r0, r1, chunk, sum);
        if (!summed) std::fill_n(sum, (r1 - r0) * s_.cout, 0.0f);
        return;
      }
      // (grad_weight is null where the sums are narrowed: no pointer is formed from it then)
      const Sums sums =
          narrows_sums_
              ? Sums{w.at<float>(sums_, thread_index()), block_, weights16(grp, r0)}
              : Sums{(chunk == 0 ? grad_weight : w.at<float>(partials_, chunk - 1)) + grp * s_.cout * s_.rows() + r0,
                     s_.rows(),
                     {}};
      const bool summed = windows_ ? sum_bands(w, in, packed_dy, grp, r0, r1, chunk, sums)
                                   : sum_tiles(w, in, packed_dy, grp, r0, r1, chunk, sums);
      if (!summed) {  // an empty range (no output positions): its part of the sum is zero
        for (int64_t co = 0; co < s_.cout; ++co) std::fill_n(sums.c + co * sums.ldc, r1 - r0, 0.0f);
      }
      if (narrows_sums_) round_rest(grp, r0, r1, summed, sums.c);
    });
    if (status == ACLNN_SUCCESS && transposed_) status = add_transposed_partials(w, grad_weight);
    if (status == ACLNN_SUCCESS && !transposed_ && chunks_ > 1) status = add_partials(w, grad_weight);
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_, rounds_blocks_ || narrows_sums_);
    return status;
  }

 private:
  // Where a task's products (not transposed) put its sums, Cout_g x its rows: C at c, ld ldc (its chunk's
  // dW or partial, or narrows_sums_ its own buffer); with narrowed.out set, the whole tiles of its last
  // product go narrowed there (sgemm's NarrowedRows), the rest stays in C.
  struct Sums {
    float* c;
    int64_t ldc;
    NarrowedRows narrowed;
  };

  // sums (Cout_g x rows) (+)= dY[:, o0 : o0+count] of sample n (Cout_g x count) * right (count x rows),
  // dY from its packed copy or its dense float array; `last`: the task's last product.
  template <typename Right>
  void multiply_grad_output(const Workspace& w, const StepInputs& in, const float* packed_dy, int64_t grp, int64_t n,
                            int64_t o0, int64_t count, int64_t rows, const Right& right, bool accumulate,
                            const Sums& sums, bool last) const {
    float* pack = w.at<float>(pack_, thread_index());
    if (packed_dy != nullptr) {
      const PackedLeft left{packed_dy + grp * group_floats_, s_.n * s_.dst_plane, n * s_.dst_plane + o0};
      sgemm(blocking_, pack, s_.cout, rows, count, left, right, accumulate, sums.c, sums.ldc,
            last ? sums.narrowed : NarrowedRows{});
    } else {  // (narrows_sums_ packs dY)
      const float* dy = in.f32.dst + (n * s_.groups + grp) * s_.cout * s_.dst_plane;
      sgemm(blocking_, pack, s_.cout, rows, count, MatrixRef{dy + o0, s_.dst_plane, false}, right, accumulate, sums.c,
            sums.ldc);
    }
  }

  // The im2col plan's task: sum over the chunk's range of (sample, position), in pieces within one
  // sample and at most one tile long, cols^T im2col'd per piece (or the source itself for 1x1).
  // Returns whether it summed any piece.
  bool sum_tiles(const Workspace& w, const StepInputs& in, const float* packed_dy, int64_t grp, int64_t r0, int64_t r1,
                 int64_t chunk, const Sums& sums) const {
    const int thread = thread_index();
    const int64_t length = s_.n * s_.dst_plane;
    const int64_t begin = length * chunk / chunks_, end = length * (chunk + 1) / chunks_;
    bool summed = false;
    for (int64_t at = begin; at < end;) {
      const int64_t n = at / s_.dst_plane, o0 = at % s_.dst_plane;
      const int64_t o1 = std::min({s_.dst_plane, o0 + tile_, end - n * s_.dst_plane});
      SliceSource x{nullptr, s_.src_plane};
      if (x_staged_) {  // the row block's channels, the positions this piece reads
        const int64_t taps = std::max<int64_t>(1, s_.kernel_volume);
        const int64_t c0 = r0 / taps, c1 = (r1 - 1) / taps + 1;
        const PlaneWindow window = source_window(g_, o0, o1);
        float* staged = w.at<float>(window_, thread);
        stage_window(src_, math_, n, grp * s_.cin, c0, c1, window, staged, conversions_);
        x = {staged, window.size(), c0, window.first};
      } else {
        x.data = in.f32.src + (n * s_.groups + grp) * s_.cin * s_.src_plane;
      }
      MatrixRef rows{nullptr, o1 - o0, true};
      if (columns_are_source(g_)) {  // 1x1: rows are channels of x (staged or not), positions its columns
        rows = {x.data + (r0 - x.first_channel) * x.channel_stride + (o0 - x.first), x.channel_stride, true};
      } else {
        float* cols = w.at<float>(cols_, thread);
        im2col(g_, x, r0, r1, o0, o1, cols);
        rows.data = cols;
      }
      at = n * s_.dst_plane + o1;
      multiply_grad_output(w, in, packed_dy, grp, n, o0, o1 - o0, r1 - r0, rows, summed, sums, at >= end);
      summed = true;
    }
    return summed;
  }

  // The padded-window plan's task: sum (Cout_g x rows r0..r1) (+)= dY[:, band] (Cout_g x positions)
  // * cols^T (positions x rows) over the chunk's bands in order, cols^T written into the packed
  // panels from each band's window; or, transposed_, sum (rows x Cout_g) (+)= cols (rows x
  // positions) * dY^T, cols read in place from the window. Returns whether it summed any band.
  bool sum_bands(const Workspace& w, const StepInputs& in, const float* packed_dy, int64_t grp, int64_t r0, int64_t r1,
                 int64_t chunk, const Sums& sums) const {
    float* sum = sums.c;  // (transposed: ld Cout_g)
    const int thread = thread_index();
    const int64_t taps = std::max<int64_t>(1, s_.kernel_volume);
    const int64_t units = s_.n * bands_.bands(), window_width = bands_.window_width();
    int64_t* lines = w.at<int64_t>(lines_, thread);
    // The block's channels and kernel depths (depth-major: one kernel depth, the block within its slab).
    int64_t c0 = r0 / taps, c1 = (r1 - 1) / taps + 1;
    KernelDepths depths{0, g_.kernel[0]};
    if (depth_major_) {
      const int64_t taps_hw = g_.kernel[1] * g_.kernel[2], slab = s_.cin * taps_hw;
      c0 = r0 % slab / taps_hw, c1 = (r1 - 1) % slab / taps_hw + 1;
      depths = {r0 / slab, r0 / slab + 1};
      for (int64_t q = r0; q < r1; ++q) {
        const int64_t r = depth_major_row(g_, s_.cin, q);
        bands_.row_offsets(r, r + 1, c0, lines + (q - r0));
      }
    } else {
      bands_.row_offsets(r0, r1, c0, lines);
    }
    float* window = w.at<float>(window_, thread);
    int64_t* positions = transposed_ ? w.at<int64_t>(positions_, thread) : nullptr;  // position p: window column
    int64_t positions_width = 0;                                                     // (for bands this wide)
    bool summed = false;
    const int64_t u_end = units * (chunk + 1) / chunks_;
    for (int64_t u = units * chunk / chunks_, next = u + 1; u < u_end; u = next, next = u + 1) {
      const int64_t n = u / bands_.bands();
      const OutputBand band = bands_.band(u % bands_.bands());
      const int64_t width = band.w1 - band.w0, count = (band.h1 - band.h0) * width;
      const int64_t o0 = band_origin(band);
      if (paired()) {  // sum (rows x Cout_g) (+)= cols * dY^T over the band's positions in pairs
        auto* window16 = reinterpret_cast<uint16_t*>(window);
        stage_padded_window_bf16(src_, g_, bands_, n, grp * s_.cin + c0, c1 - c0, band, window16);
        if (width != positions_width) {  // pair q: positions 2q and 2q + 1, side by side in the window
          window_columns(width, window_width, bands_.columns() / 2, 2, positions);
          positions_width = width;
        }
        const int64_t length = s_.n * s_.dst_plane;
        const PackedPairsRight dy_t{reinterpret_cast<const uint32_t*>(packed_dy) + grp * group_floats_, length / 2,
                                    (n * s_.dst_plane + o0) / 2};
        pair_products(r1 - r0, count / 2, window16, lines, positions, dy_t, summed, sum, w);
        summed = true;
        continue;
      }
      if (depth_major_) {  // the block's kernel depth reads only padding here: nothing to add
        const KernelDepths inside = kernel_depths_inside(g_, band.od);
        if (depths.begin < inside.begin || depths.begin >= inside.end) continue;
      }
      if (transposed_) {
        stage_padded_window(src_, math_, g_, bands_, n, grp * s_.cin + c0, c1 - c0, band, depths, 0, window,
                            conversions_);
        if (width != positions_width) {  // (the last piece of a row may be narrower)
          window_columns(width, window_width, bands_.columns(), 1, positions);
          positions_width = width;
        }
        const PackedRight dy_t{packed_dy + grp * group_floats_, s_.n * s_.dst_plane, n * s_.dst_plane + o0};
        sgemm_a_rows(blocking_, r1 - r0, s_.cout, count, window, lines, positions, dy_t, summed, sum, s_.cout);
      } else {  // this band and the next ones that follow it in dY, up to batch_, in one product
        WindowColumns columns{window, window_floats_, lines, window_width};
        const int64_t start = n * s_.dst_plane + o0;
        int64_t total = 0;
        for (int64_t v = u; v < u_end && columns.bands < batch_; ++v, ++columns.bands) {
          const int64_t nv = v / bands_.bands();
          const OutputBand piece = bands_.band(v % bands_.bands());
          if (nv * s_.dst_plane + band_origin(piece) != start + total) break;
          stage_padded_window(src_, math_, g_, bands_, nv, grp * s_.cin + c0, c1 - c0, piece, depths, 0,
                              window + columns.bands * window_floats_, conversions_);
          columns.widths[columns.bands] = piece.w1 - piece.w0;
          columns.counts[columns.bands] = (piece.h1 - piece.h0) * (piece.w1 - piece.w0);
          total += columns.counts[columns.bands];
        }
        next = u + columns.bands;
        multiply_grad_output(w, in, packed_dy, grp, n, o0, total, r1 - r0, PanelWriter{WindowColumns::write, &columns},
                             summed, sums, next >= u_end);
      }
      summed = true;
    }
    return summed;
  }

  // out[i] = the window column of a band's position i * step (bands `width` wide, rows window_width
  // apart in the window) for i < count, counted row by row (no division per position, nor in the
  // loop's bound).
  static void window_columns(int64_t width, int64_t window_width, int64_t count, int64_t step, int64_t* out) {
    int64_t row = 0, column = 0;
    for (int64_t i = 0; i < count; ++i, column += step) {
      while (column >= width) column -= width, row += window_width;
      out[i] = row + column;
    }
  }

  // The first position of `band` in its output plane (its positions follow on from there).
  int64_t band_origin(const OutputBand& band) const {
    return (band.od * g_.dst_size[1] + band.h0) * g_.dst_size[2] + band.w0;
  }

  // sum (rows x Cout_g) (+)= A (rows x 2 pairs: BF16 X read in place, row i's pair q at a_base + a_rows[i] +
  // a_columns[q]) * dY^T (2 pairs x Cout_g, packed), in the AMX tiles' order.
  void pair_products(int64_t rows, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,
                     const int64_t* a_columns, const PackedPairsRight& dy_t, bool accumulate, float* sum,
                     const Workspace& w) const {
    amx_pair_a_rows(amx_, rows, s_.cout, pairs, a_base, a_rows, a_columns, dy_t.data, dy_t.pairs, dy_t.offset,
                    accumulate, sum, s_.cout, w.at<uint32_t>(amx_stage_, thread_index()));
  }

  // The same for a 1x1 kernel: sum (rows r0..r1 x Cout_g) (+)= X[r0:r1, positions] * dY^T over the
  // chunk's range in pieces within one sample, X's rows (channels) read in place (staged or not).
  bool sum_source_transposed(const Workspace& w, const StepInputs& in, const float* packed_dy, int64_t grp, int64_t r0,
                             int64_t r1, int64_t chunk, float* sum) const {
    const int thread = thread_index();
    const int64_t length = s_.n * s_.dst_plane;
    int64_t begin = length * chunk / chunks_, end = length * (chunk + 1) / chunks_;
    if (paired()) begin = length / 2 * chunk / chunks_ * 2, end = length / 2 * (chunk + 1) / chunks_ * 2;  // pairs
    int64_t* lines = w.at<int64_t>(lines_, thread);
    int64_t* positions = w.at<int64_t>(positions_, thread);
    for (int64_t p = 0; p < tile_; ++p) positions[p] = paired() ? 2 * p : p;  // (paired(): pair p's first position)
    bool summed = false;
    for (int64_t at = begin; at < end;) {
      const int64_t n = at / s_.dst_plane, o0 = at % s_.dst_plane;
      const int64_t o1 = std::min({s_.dst_plane, o0 + tile_, end - n * s_.dst_plane});
      if (paired()) {  // X's channel rows read in place from the user's BF16 tensor, in pairs of positions
        for (int64_t r = r0; r < r1; ++r) lines[r - r0] = src_.element(n, grp * s_.cin + r, 0, 0, 0) + o0;
        const PackedPairsRight dy_t{reinterpret_cast<const uint32_t*>(packed_dy) + grp * group_floats_, length / 2,
                                    (n * s_.dst_plane + o0) / 2};
        pair_products(r1 - r0, (o1 - o0) / 2, static_cast<const uint16_t*>(src_.data), lines, positions, dy_t, summed,
                      sum, w);
        summed = true;
        at = n * s_.dst_plane + o1;
        continue;
      }
      const PackedRight dy_t{packed_dy + grp * group_floats_, length, n * s_.dst_plane + o0};
      int64_t lowest_entry = 0;  // (bf16_in_place_: of the rows' first entries)
      if (bf16_in_place_) {
        lowest_entry = INT64_MAX;
        for (int64_t r = r0; r < r1; ++r) {
          lines[r - r0] = src_.element(n, grp * s_.cin + r, 0, 0, 0) + o0;
          lowest_entry = std::min(lowest_entry, lines[r - r0]);
        }
      }
      if (lowest_entry > 0) {  // X's BF16 rows read in place
        sgemm_a_rows_bf16(blocking_, r1 - r0, s_.cout, o1 - o0, static_cast<const uint16_t*>(src_.data), lines,
                          positions, dy_t, summed, sum, s_.cout);
        summed = true;
        at = n * s_.dst_plane + o1;
        continue;
      }
      SliceSource x{in.f32.src + (n * s_.groups + grp) * s_.cin * s_.src_plane, s_.src_plane};
      if (x_staged_) {  // the row block's channels, the positions this piece reads
        const PlaneWindow window = source_window(g_, o0, o1);
        float* staged = w.at<float>(window_, thread);
        stage_window(src_, math_, n, grp * s_.cin, r0, r1, window, staged, conversions_);
        x = {staged, window.size(), r0, window.first};
      }
      for (int64_t r = r0; r < r1; ++r) lines[r - r0] = (r - x.first_channel) * x.channel_stride;
      sgemm_a_rows(blocking_, r1 - r0, s_.cout, o1 - o0, x.data + (o0 - x.first), lines, positions, dy_t, summed, sum,
                   s_.cout);
      summed = true;
      at = n * s_.dst_plane + o1;
    }
    return summed;
  }

  // cols^T of consecutive bands from their windows (`window_floats` apart), their positions one after
  // the other, for sgemm's PanelWriter.
  struct WindowColumns {
    const float* window;
    int64_t window_floats;
    const int64_t* lines;  // the window offsets of the row block's column-matrix rows
    int64_t window_width;
    int64_t bands = 0, widths[kMaxBatch] = {}, counts[kMaxBatch] = {};  // each band's width and positions
    static void write(const void* context, int64_t p0, int64_t depth, int64_t j0, int64_t cols, int width, float* out) {
      const auto* self = static_cast<const WindowColumns*>(context);
      int64_t first = 0;  // band i's positions are [first, first + counts[i]) of the product
      for (int64_t i = 0; i < self->bands && first < p0 + depth; first += self->counts[i++]) {
        const int64_t begin = std::max(p0, first), end = std::min(p0 + depth, first + self->counts[i]);
        if (begin >= end) continue;
        window_panels(self->window + i * self->window_floats, self->lines + j0, cols, self->widths[i],
                      self->window_width, begin - first, end - begin, width, depth, out + (begin - p0) * width);
      }
    }
  };

  // Each group's dY (Cout_g x (sample, position)) as a PackedLeft: one task per sample and sliver,
  // from the dense float dY or, without one, from the user's view (a sliver's rows read first).
  int pack_grad_output(const Workspace& w, const float* dy, float* out) const {
    const int64_t mr = transposed_ ? right_sliver_columns(blocking_) : left_sliver_rows(blocking_);
    const int64_t slivers = ceil_div(s_.cout, mr), length = s_.n * s_.dst_plane;
    return run_tasks(s_.groups * s_.n * slivers, threads_, "gemm gradWeight", [&](int64_t t) {
      const int64_t grp = t / (s_.n * slivers), n = t / slivers % s_.n, c0 = t % slivers * mr;
      const int64_t count = std::min(mr, s_.cout - c0);
      // The sliver's positions [p0, p0 + span) at a time: from the dense float dY in one piece, or read
      // from the view kDyPiece positions at a time (each piece's rows still in cache when packed, where
      // whole planes converted first would be read back from memory).
      const int64_t piece = dy_rows_ >= 0 ? std::min(s_.dst_plane, kDyPiece) : s_.dst_plane;
      for (int64_t p0 = 0; p0 < s_.dst_plane; p0 += piece) {
        const int64_t span = std::min(piece, s_.dst_plane - p0), at = n * s_.dst_plane + p0;
        const float* slice = nullptr;
        int64_t ld = s_.dst_plane;
        if (dy_rows_ >= 0) {
          float* rows = w.at<float>(dy_rows_, thread_index());
          for (int64_t c = 0; c < count; ++c)
            read_plane_floats(dst_, math_, n, grp * s_.cout + c0 + c, p0, span, rows + c * span, conversions_);
          slice = rows, ld = span;
        } else {
          slice = dy + ((n * s_.groups + grp) * s_.cout + c0) * s_.dst_plane + p0;
        }
        if (paired()) {  // dY^T in pairs of positions: a PackedPairsRight
          pack_pairs_right(slice, ld, count, span / 2, reinterpret_cast<uint32_t*>(out) + grp * group_floats_,
                           length / 2, c0, at / 2);
        } else if (transposed_) {  // dY^T (positions x Cout_g): a PackedRight
          pack_right(blocking_, span, count, MatrixRef{slice, ld, true}, out + grp * group_floats_ + c0 * length,
                     length, at);
        } else {
          pack_left(blocking_, count, span, MatrixRef{slice, ld, false}, out + grp * group_floats_ + c0 * length,
                    length, at);
        }
      }
    });
  }

  // grad_weight[grp][co][r] = chunk 0's dW^T[grp][r][co] + chunk 1's + ... in chunk order, in blocks
  // of 64 x 64: the chunks added row by row as they lie ([r][co], contiguous runs), then the block
  // stored transposed as rows of dW (4 x 4 transposes where whole, not a scatter per chunk into the
  // transposed block), or into a block of rows rounded into dW.
  int add_transposed_partials(const Workspace& w, float* grad_weight) const {
    constexpr int64_t kBlock = 64;
    const int64_t pieces = ceil_div(s_.rows(), kBlock), co_blocks = ceil_div(s_.cout, kBlock);
    return run_tasks(s_.groups * pieces, threads_, "gemm gradWeight", [&](int64_t t) {
      const int64_t grp = t / pieces, r0 = t % pieces * kBlock, r1 = std::min(s_.rows(), r0 + kBlock);
      float* out = rounds_blocks_ ? nullptr : grad_weight + grp * s_.cout * s_.rows();
      float sum[kBlock][kBlock];                               // [r - r0][co - co0]
      float rounded[kBlock][kBlock];                           // rounds_blocks_: [co - co0][r - r0]
      const int64_t ld = rounds_blocks_ ? kBlock : s_.rows();  // (row co of the block at rows + (co - co0) * ld)
      for (int64_t b = 0; b < co_blocks; ++b) {
        const int64_t co0 = b * kBlock, co1 = std::min(s_.cout, co0 + kBlock), width = co1 - co0;
        for (int64_t r = r0; r < r1; ++r) {
          float* line = sum[r - r0];
          std::copy_n(w.at<float>(partials_, 0) + (grp * s_.rows() + r) * s_.cout + co0, width, line);
          for (int64_t c = 1; c < chunks_; ++c) {
            const float* row = w.at<float>(partials_, c) + (grp * s_.rows() + r) * s_.cout + co0;
            for (int64_t i = 0; i < width; ++i) line[i] += row[i];
          }
        }
        if (depth_major_) {  // rows stored in their depth-major places (each row's found once)
          int64_t where[kBlock];
          for (int64_t q = r0; q < r1; ++q) where[q - r0] = depth_major_row(g_, s_.cin, q);
          for (int64_t co = co0; co < co1; ++co) {
            for (int64_t q = r0; q < r1; ++q) out[co * s_.rows() + where[q - r0]] = sum[q - r0][co - co0];
          }
          continue;
        }
        float* rows = rounds_blocks_ ? &rounded[0][0] : out + co0 * s_.rows() + r0;
        const int64_t rows4 = (r1 - r0) / 4 * 4, cols4 = width / 4 * 4;
        for (int64_t i = 0; i < rows4; i += 4) {
          for (int64_t j = 0; j < cols4; j += 4) transpose_4x4(&sum[i][j], kBlock, rows + j * ld + i, ld);
        }
        for (int64_t i = 0; i < r1 - r0; ++i) {  // the rest one by one
          for (int64_t j = i < rows4 ? cols4 : 0; j < width; ++j) rows[j * ld + i] = sum[i][j];
        }
        if (rounds_blocks_) round_into_weights(grp, co0, co1, r0, r1, rows, ld);
      }
    });
  }

  // grad_weight (chunk 0's sum) += chunk 1's, chunk 2's, ... in chunk order, element by element
  // (each span then rounded into dW where the step rounds blocks).
  int add_partials(const Workspace& w, float* grad_weight) const {
    const int64_t count = s_.groups * s_.cout * s_.rows(), span = 16384;
    return run_tasks(ceil_div(count, span), threads_, "gemm gradWeight", [&](int64_t t) {
      const int64_t i0 = t * span, i1 = std::min(count, i0 + span);
      for (int64_t c = 1; c < chunks_; ++c) {
        const float* part = w.at<float>(partials_, c - 1);
        for (int64_t i = i0; i < i1; ++i) grad_weight[i] += part[i];
      }
      if (rounds_blocks_) store_dense_floats(grad_weight + i0, dw_, i0, i1 - i0, conversions_);
    });
  }

  // Rows co0..co1 of group grp's dW, its columns r0..r1 (row co's values at values + (co - co0) * ld),
  // rounded into the user's dense 16-bit tensor.
  void round_into_weights(int64_t grp, int64_t co0, int64_t co1, int64_t r0, int64_t r1, const float* values,
                          int64_t ld) const {
    for (int64_t co = co0; co < co1; ++co)
      store_dense_floats(values + (co - co0) * ld, dw_, (grp * s_.cout + co) * s_.rows() + r0, r1 - r0, conversions_);
  }

  // narrows_sums_: group grp's dW from column r on, in the user's dense 16-bit tensor, as the
  // micro-kernel narrows into it (rows Cin_g * K apart).
  NarrowedRows weights16(int64_t grp, int64_t r) const {
    uint16_t* first = static_cast<uint16_t*>(dw_.data) + dw_.offset + grp * s_.cout * s_.rows() + r;
    return {first, s_.rows(), dw_.dtype == ACL_BF16};
  }

  // narrows_sums_: rounds into dW what the task's last product left in its buffer `sums` (ld block_):
  // the entries outside its whole micro-kernel tiles, or all of them where it summed nothing.
  void round_rest(int64_t grp, int64_t r0, int64_t r1, bool summed, const float* sums) const {
    const int64_t mr = left_sliver_rows(blocking_), nr = right_sliver_columns(blocking_);
    const int64_t tile_rows = summed ? s_.cout / mr * mr : 0, tile_columns = summed ? (r1 - r0) / nr * nr : 0;
    round_into_weights(grp, 0, tile_rows, r0 + tile_columns, r1, sums + tile_columns, block_);
    round_into_weights(grp, tile_rows, s_.cout, r0, r1, sums + tile_rows * block_, block_);
  }

  ConvGeometry g_;
  Shape s_;
  int threads_;
  View5 src_, dst_, dw_;  // X, dY and dW as the user passed them
  MathMode math_;
  const Conversions16* conversions_;  // the plan's kit's
  bool x_staged_ = false;             // each piece stages the X it reads (no dense float copy of X)
  DenseFloatOutput output_;
  bool rounds_blocks_ = false;      // a dense 16-bit dW rounded as its partials are added (round_into_weights)
  bool narrows_sums_ = false;       // ... or by the micro-kernel, from one chunk's products (not transposed)
  bool windows_ = false;            // X read from padded windows per band (WeightDecision::windows)
  bool transposed_ = false;         // products transposed: windows read in place, dY^T packed once
  AmxTiles amx_ = AmxTiles::kNone;  // ... in the AMX tiles' order, on these tiles (amx.h)
  bool paired() const { return amx_ != AmxTiles::kNone; }  // pair products, in the tiles' order
  WorkspaceLedger::Handle amx_stage_ = -1;                 // per thread: amx_pair_a_rows' staging
  bool depth_major_ = false;    // ... float, their rows (dW^T's) in depth-major order (depth_major_row)
  bool bf16_in_place_ = false;  // ... from a BF16 1x1 source read in place (sgemm_a_rows_bf16)
  BandTiling bands_;
  int64_t chunks_ = 1, block_ = 1, blocks_ = 1, tile_ = 1, group_floats_ = 0;
  int64_t window_floats_ = 0;  // windows_: floats of one band's window
  int64_t batch_ = 1;          // windows_: bands per product, at most (consecutive ones, float, not transposed)
  GemmBlocking blocking_;
  WorkspaceLedger::Handle cols_ = -1, pack_ = -1;  // per thread (pack_: untransposed only)
  WorkspaceLedger::Handle partials_ = -1;          // per chunk after the first
  WorkspaceLedger::Handle packed_dy_ = -1;         // dY packed once, or none
  WorkspaceLedger::Handle dy_rows_ = -1;           // per thread: a sliver of dY rows read from its view
  WorkspaceLedger::Handle window_ = -1;            // per thread: the staged X of a piece, or a band's window
  WorkspaceLedger::Handle lines_ = -1;             // per thread: the row block's offsets in a band's window
  WorkspaceLedger::Handle positions_ = -1;         // per thread: a band's positions' window columns
  WorkspaceLedger::Handle sums_ = -1;              // per thread: narrows_sums_'s row block sums
};

// gemm_weight_windows: X read from padded windows per band, where they serve the geometry.
Support supports_windows(const ConvProblem& p, const CpuFeatures& cpu) { return decide_weight(p, cpu, true); }
// gemm_weight_tiles: X's columns per tile of positions; any dtype, layout and geometry.
Support supports_tiles(const ConvProblem& p, const CpuFeatures& cpu) { return decide_weight(p, cpu, false); }
std::unique_ptr<ConvStep> plan_weight(const ConvProblem& p, PlanBuilder& builder) {
  const WeightDecision* decided = builder.decided<WeightDecision>();
  if (decided != nullptr) return std::make_unique<GemmBackwardWeight>(p, builder, *decided);
  // (A plan always hands the decision over; a caller that did not gets gemm_weight_tiles', which takes
  // every problem.)
  const Support own = decide_weight(p, builder.cpu(), false);
  return std::make_unique<GemmBackwardWeight>(p, builder, static_cast<const WeightDecision&>(*own.decision));
}

}  // namespace

extern const ConvImpl kGemmWindowsBackwardWeight = {"gemm_weight_windows", "gemm", ConvPass::kBackwardWeight,
                                                    supports_windows, plan_weight};
extern const ConvImpl kGemmTilesBackwardWeight = {"gemm_weight_tiles", "gemm", ConvPass::kBackwardWeight,
                                                  supports_tiles, plan_weight};

}  // namespace aclnn_cpu
