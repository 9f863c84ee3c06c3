// channels_last, gradWeight: W_k's gradient = sum over samples (in order) of dY^T * X[t - p + k*d, :],
// per (tap, block of result rows) (kernels/gemm/channels_last.h).
#include <memory>

#include "kernels/gemm/channels_last.h"

namespace aclnn_cpu {
namespace channels_last {
namespace {

// Per (tap, block of result rows): the block's products over every sample, in sample order (time-major
// rows, interleaved_rows: one product over the N x T rows, positions in order, each position's
// samples in order, every operand's packed sliver from neighbouring rows). The
// result is W_k's gradient (Cout x Cin) or its transpose (Cin x Cout), whichever grad_weight's
// strides store row-major. The right operand (dY, or X) of each sample is packed once per execution
// when it fits kPackedBudget (every tap and block multiplies by a depth range of it); FLOAT16/BF16
// operands always are, both of them, converted as they are packed (their workspace is what float
// copies of them would take, and nothing else reads them).
//
// BF16 X and dY (inputs as they are) take pair products in the AMX tiles' order where the CPU runs it
// (amx.h), pairs of positions: each sample's X as pairs of rows from an even row and from an odd row
// ([pair][channel] words: a tap's shift may be odd), dY as PackedPairsRight from even rows. A tap's
// range of dY rows is then an odd first row alone, pairs, and an odd last row alone (each with a
// zero partner), in that order.
AmxTiles weight_pair_tiles(const ConvProblem& p, AmxTiles engine) {
  if (p.src.stride[1] != 1 || p.dst.stride[1] != 1 || p.grad_weight.dtype == ACL_FLOAT) return AmxTiles::kNone;
  return amx_pair_products(engine, p.src, p.dst, p.math);
}

class ChannelsLastWeight final : public ConvStep {
 public:
  // Books the step `d` decided (decide_channels_last).
  ChannelsLastWeight(const ConvProblem& p, PlanBuilder& b, const ChannelsLastDecision& d)
      : p_(p),
        threads_(b.threads()),
        amx_(d.amx),
        conversions_(b.cpu().conversions),
        converted_(!paired() && (p.src.dtype != ACL_FLOAT || p.dst.dtype != ACL_FLOAT)) {
    const ConvGeometry& g = p.geometry;
    if (p.grad_weight.dtype != ACL_FLOAT) {  // computed as floats laid out as (K, Cin, Cout), then rounded
      result_ = b.book_scratch("channels_last.gradWeight", static_cast<uint64_t>(p.grad_weight.numel()), sizeof(float));
    }
    transposed_ = result_ >= 0 || unit_out(p.grad_weight);
    rows_ = transposed_ ? g.src_channels_per_group : g.dst_channels_per_group;
    cols_ = transposed_ ? g.dst_channels_per_group : g.src_channels_per_group;
    const int64_t wanted = ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, g.kernel[2]));
    block_ = std::max<int64_t>(1, std::min(rows_, std::max(kMinWeightRows, ceil_div(rows_, wanted))));
    blocks_ = ceil_div(rows_, block_);
    // Time-major rows: every sample's rows as one matrix, a tap's product over all of them.
    flat_ = d.flat;
    units_ = flat_ ? 1 : g.batch, scale_ = flat_ ? g.batch : 1;
    blocking_ = plan_gemm_blocking(block_, cols_, saturating_product(g.dst_size[2], scale_), b.cpu());
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    depth_ = (transposed_ ? g.dst_size[2] : g.src_size[2]) * scale_;  // rows of the packed operand, per unit
    sample_floats_ = packed_right_floats(blocking_, cols_, depth_);
    const int64_t huge = int64_t{1} << 58;
    if (paired()) {
      plan_pairs(b);
    } else if (converted_ || product_within(units_, sample_floats_, kPackedBudget / 4)) {
      // (FLOAT16/BF16 operands are always packed: converted once, as they are packed)
      packed_ = b.book_scratch(
          "channels_last.packed_operand",
          product_within(units_, sample_floats_, huge) ? uint64_t(units_ * sample_floats_) : UINT64_MAX, sizeof(float));
      plan_packed_left(b);
    }
  }
  int64_t tasks() const override { return p_.geometry.kernel[2] * blocks_; }
  std::string detail() const override {
    return isa_detail(blocking_) + (transposed_ ? ":transposed" : "") + amx_detail(amx_) +
           (flat_ ? ":interleaved" : "");
  }

  int run(const Workspace& w, const StepInputs&) const override {
    if (paired()) return run_pairs(w);
    const ConvGeometry& g = p_.geometry;
    const View5 &x = p_.src, &dy = p_.dst;
    const View5 out = result_ >= 0 ? tbc_weight_view(p_.grad_weight, w.at<float>(result_)) : p_.grad_weight;
    float* grad_weight = dense_float_data(out);
    const int64_t ldc = transposed_ ? out.stride[1] : out.stride[0];
    float* packed = packed_ >= 0 ? w.at<float>(packed_) : nullptr;
    float* packed_left = w.at<float>(packed_left_);
    int status = ACLNN_SUCCESS;
    if (packed != nullptr) {  // each unit's dY (T' x Cout) or X (T x Cin); and the other's transpose
      // (flat_: the one unit in pieces of rows, a task each)
      const int64_t pieces = flat_ ? kTargetTasks : 1;
      status = run_tasks(units_ * pieces, threads_, "channels-last gradWeight", [&](int64_t t) {
        const int64_t n = t / pieces, piece = t % pieces;
        const int64_t step = ceil_div(depth_, pieces), p0 = std::min(depth_, piece * step);
        pack_rows(transposed_ ? dy : x, n, p0, std::min(depth_, p0 + step), false, packed + n * sample_floats_, depth_);
        if (packed_left != nullptr) {
          const int64_t left_step = ceil_div(left_depth_, pieces), q0 = std::min(left_depth_, piece * left_step);
          pack_rows(transposed_ ? x : dy, n, q0, std::min(left_depth_, q0 + left_step), true,
                    packed_left + n * left_floats_, left_depth_);
        }
      });
      if (status != ACLNN_SUCCESS) return status;
    }
    status = run_tasks(tasks(), threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t k = t / blocks_, r0 = t % blocks_ * block_, r1 = std::min(rows_, r0 + block_);
      float* c = grad_weight + k * out.stride[4] + r0 * ldc;
      float* pack = w.at<float>(pack_, thread_index());
      const int64_t shift = k * g.dilation[2] - g.pad[2];  // source row of dY row t: t + shift
      const int64_t first = std::max<int64_t>(0, -shift), last = std::min(g.dst_size[2], g.src_size[2] - shift);
      bool written = false;
      for (int64_t n = 0; n < units_ && first < last; ++n, written = true) {
        // transposed: C (rows x Cout) += X[first+shift : last+shift, r0:r1]^T (rows x T') * dY[first:last, :] (T' x
        // Cout) else:       C (rows x Cin)  += dY[first:last, r0:r1]^T (rows x T') * X[first+shift : last+shift, :] (T'
        // x Cin)
        // (flat_: positions of all samples, scale_ rows each)
        const int64_t x0 = (first + shift) * scale_, d0 = first * scale_, count = (last - first) * scale_;
        const PackedRight right{packed + n * sample_floats_, depth_, transposed_ ? d0 : x0};
        if (packed_left != nullptr) {  // rows r0.. start a sliver (block_ is a multiple of MR)
          const PackedLeft left{packed_left + n * left_floats_ + r0 * left_depth_, left_depth_, transposed_ ? x0 : d0};
          sgemm(blocking_, r1 - r0, cols_, count, left, right, written, c, ldc);
          continue;
        }
        // (float operands only: FLOAT16/BF16 ones are always packed, both)
        const UnitRows unit{flat_, g.batch, n};
        const MatrixRef xs{unit.floats(x, x0), unit.stride(x), transposed_};
        const MatrixRef ds{unit.floats(dy, d0), unit.stride(dy), !transposed_};
        const MatrixRef a = transposed_ ? xs : ds, bm = transposed_ ? ds : xs;
        const MatrixRef rows{a.data + r0, a.ld, true};
        if (packed != nullptr) {
          sgemm(blocking_, pack, r1 - r0, cols_, count, rows, right, written, c, ldc);
        } else {
          sgemm(blocking_, pack, r1 - r0, cols_, count, rows, bm, written, c, ldc);
        }
      }
      if (!written) {  // no sample, or the tap never meets the source
        for (int64_t r = 0; r < r1 - r0; ++r) std::fill_n(c + r * ldc, cols_, 0.0f);
      }
    });
    if (status != ACLNN_SUCCESS || result_ < 0) return status;
    return store_result(w);
  }

 private:
  // The float result (tbc_weight_view) rounded into the user's gradWeight, each (Cout, Cin)'s K taps.
  int store_result(const Workspace& w) const {
    const View5 out = tbc_weight_view(p_.grad_weight, w.at<float>(result_));
    const float* grad_weight = dense_float_data(out);
    const View5& user = p_.grad_weight;
    if (stored_like(user, out)) {
      const View5 row = as_one_row(user);
      return for_each_piece(row.numel(), threads_, "channels-last gradWeight", [&](int64_t first, int64_t count) {
        store_plane_floats(grad_weight + first, row, 0, 0, first, count, conversions_);
      });
    }
    return for_each_tap_run(user, threads_, "channels-last gradWeight",
                            [&](int64_t co, int64_t ci, int64_t k0, int64_t count, float* taps) {
                              for (int64_t k = 0; k < count; ++k)
                                taps[k] = grad_weight[out.element(co, ci, 0, 0, k0 + k)];
                              store_plane_floats(taps, user, co, ci, k0, count, conversions_);
                            });
  }

  // Rows [p0, p1) of unit n's X or dY (its positions x channels) into depths [p0, p1) of a PackedLeft
  // of its transpose (`left`: rows_ channels) or a PackedRight of it (cols_ channels) of `depth`:
  // FLOAT16/BF16 rows converted as they are packed.
  void pack_rows(const View5& v, int64_t n, int64_t p0, int64_t p1, bool left, float* out, int64_t depth) const {
    const UnitRows unit{flat_, p_.geometry.batch, n};
    if (v.dtype != ACL_FLOAT) {
      pack_rows_converted(v, unit, p0, p1, left ? left_sliver_rows(blocking_) : right_sliver_columns(blocking_), out,
                          depth, conversions_);
    } else if (p1 > p0 && left) {
      pack_left(blocking_, rows_, p1 - p0, MatrixRef{unit.floats(v, p0), unit.stride(v), true}, out, depth, p0);
    } else if (p1 > p0) {
      pack_right(blocking_, p1 - p0, cols_, MatrixRef{unit.floats(v, p0), unit.stride(v), false}, out, depth, p0);
    }
  }

  // The left operand (X^T, transposed_, or dY^T: rows_ x positions) of every sample packed once as
  // well, where it fits the budget beside the right ones: each tap reads it at its own depth offset,
  // instead of every (tap, block) task packing its rows again (K times over in all). Its blocks of
  // rows then start slivers: block_ a multiple of MR (the blocking changes no bit).
  void plan_packed_left(PlanBuilder& b) {
    const ConvGeometry& g = p_.geometry;
    left_depth_ = (transposed_ ? g.src_size[2] : g.dst_size[2]) * scale_;
    left_floats_ = packed_left_floats(blocking_, rows_, left_depth_);
    const int64_t budget = kPackedBudget / 4 - units_ * sample_floats_;
    if (!converted_ && (g.kernel[2] < 2 || !product_within(units_, left_floats_, budget))) return;
    const int64_t mr = left_sliver_rows(blocking_);
    block_ = std::max(mr, block_ / mr * mr);  // (rounded down: no fewer tasks)
    blocks_ = ceil_div(rows_, block_);
    packed_left_ = b.book_scratch(
        "channels_last.packed_left",
        product_within(units_, left_floats_, int64_t{1} << 58) ? uint64_t(units_ * left_floats_) : UINT64_MAX,
        sizeof(float));
  }

  // The pair products' workspace: X's pairs of rows (both parities) and dY's PackedPairsRight for every sample,
  // the pair columns, and per thread a block's row offsets, a single row's pairs with zero partners and
  // the tiles' staging.
  void plan_pairs(PlanBuilder& b) {
    const ConvGeometry& g = p_.geometry;
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group, huge = int64_t{1} << 58;
    x_pairs_ = ceil_div(g.src_size[2], 2), dy_pairs_ = ceil_div(g.dst_size[2], 2);
    x_words_ = product_within(2 * x_pairs_, cin, huge) ? 2 * x_pairs_ * cin : huge;
    dy_words_ = packed_pairs_right_words(cout, dy_pairs_);
    packed_x_ = b.book_scratch("channels_last.input_pairs",
                               product_within(g.batch, x_words_, huge) ? uint64_t(g.batch * x_words_) : UINT64_MAX,
                               sizeof(uint32_t));
    packed_ = b.book_scratch("channels_last.gradOutput_pairs",
                             product_within(g.batch, dy_words_, huge) ? uint64_t(g.batch * dy_words_) : UINT64_MAX,
                             sizeof(uint32_t));
    pair_columns_ = b.book_scratch("channels_last.pair_columns", dy_pairs_, sizeof(int64_t));
    block_rows_ = b.book_scratch("channels_last.block_rows", block_, sizeof(int64_t), threads_);
    single_x_ = b.book_scratch("channels_last.single_input", cin, sizeof(uint32_t), threads_);
    single_dy_ =
        b.book_scratch("channels_last.single_gradOutput", round_up(cout, kAmxBlock), sizeof(uint32_t), threads_);
    amx_stage_ = b.book_scratch("channels_last.amx_stage", amx_a_stage_words(dy_pairs_), sizeof(uint32_t), threads_);
  }

  // The pair products' run: C (Cin x Cout rows r0..r1 of tap k's dW^T) += X[t + shift, r0:r1]^T * dY[t, :] over each
  // sample's rows t in pairs, X's pairs read in place.
  int run_pairs(const Workspace& w) const {
    const ConvGeometry& g = p_.geometry;
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group;
    const auto* x16 = static_cast<const uint16_t*>(p_.src.data);
    const auto* dy16 = static_cast<const uint16_t*>(p_.dst.data);
    auto x_row = [&](int64_t n, int64_t t) { return x16 + p_.src.element(n, 0, 0, 0, t); };
    auto dy_row = [&](int64_t n, int64_t t) { return dy16 + p_.dst.element(n, 0, 0, 0, t); };
    uint32_t* packed_x = w.at<uint32_t>(packed_x_);
    uint32_t* packed_dy = w.at<uint32_t>(packed_);
    // X: pair q of parity `par` holds rows 2q + par and 2q + par + 1 (zero past the last row).
    int status = run_tasks(g.batch * 2, threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t n = t / 2, par = t % 2;
      uint32_t* out = packed_x + n * x_words_ + par * x_pairs_ * cin;
      for (int64_t q = 0; q < x_pairs_; ++q, out += cin) {
        const int64_t row = 2 * q + par;
        const uint16_t* even = row < g.src_size[2] ? x_row(n, row) : nullptr;
        const uint16_t* odd = row + 1 < g.src_size[2] ? x_row(n, row + 1) : nullptr;
        for (int64_t c = 0; c < cin; ++c) out[c] = bf16_pair(even ? even[c] : 0, odd ? odd[c] : 0);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(g.batch, threads_, "channels-last gradWeight", [&](int64_t n) {  // dY in slivers of 32 columns
      for (int64_t q = 0; q < dy_pairs_; ++q) {
        const uint16_t* even = dy_row(n, 2 * q);
        const uint16_t* odd = 2 * q + 1 < g.dst_size[2] ? dy_row(n, 2 * q + 1) : nullptr;
        for (int64_t j0 = 0; j0 < cout; j0 += kAmxBlock) {
          uint32_t* to = packed_dy + n * dy_words_ + j0 * dy_pairs_ + q * kAmxBlock;
          for (int64_t j = j0; j < j0 + kAmxBlock; ++j)
            to[j - j0] = j < cout ? bf16_pair(even[j], odd ? odd[j] : 0) : 0;
        }
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    int64_t* columns = w.at<int64_t>(pair_columns_);
    for (int64_t q = 0; q < dy_pairs_; ++q) columns[q] = 2 * q * cin;  // pair q of X's pairs (in BF16 entries)
    float* grad_weight = w.at<float>(result_);                         // (K, Cin, Cout) floats
    status = run_tasks(tasks(), threads_, "channels-last gradWeight", [&](int64_t t) {
      const int64_t k = t / blocks_, r0 = t % blocks_ * block_, r1 = std::min(rows_, r0 + block_);
      float* c = grad_weight + (k * cin + r0) * cout;
      const int64_t shift = k * g.dilation[2] - g.pad[2];  // source row of dY row t: t + shift
      const int64_t first = std::max<int64_t>(0, -shift), last = std::min(g.dst_size[2], g.src_size[2] - shift);
      const int64_t par = (shift % 2 + 2) % 2;
      int64_t* rows = w.at<int64_t>(block_rows_, thread_index());
      for (int64_t r = r0; r < r1; ++r) rows[r - r0] = 2 * r;
      auto* single_x = w.at<uint32_t>(single_x_, thread_index());
      auto* single_dy = w.at<uint32_t>(single_dy_, thread_index());
      auto* stage = w.at<uint32_t>(amx_stage_, thread_index());
      bool written = false;
      // C += X[t + shift, r0:r1]^T dY[t, :] for one row t alone (its pairs' partners zero).
      auto single = [&](int64_t n, int64_t row) {
        const uint16_t *x = x_row(n, row + shift), *dy = dy_row(n, row);
        for (int64_t r = r0; r < r1; ++r) single_x[r] = bf16_pair(x[r], 0);
        for (int64_t j = 0; j < round_up(cout, kAmxBlock); ++j) single_dy[j] = j < cout ? bf16_pair(dy[j], 0) : 0;
        amx_pair_a_rows(amx_, r1 - r0, cout, 1, reinterpret_cast<const uint16_t*>(single_x), rows, columns, single_dy,
                        1, 0, written, c, cout, stage);
        written = true;
      };
      for (int64_t n = 0; n < g.batch && first < last; ++n) {
        int64_t row = first;
        if (row % 2 == 1) single(n, row++);
        const int64_t q0 = row / 2, q1 = last / 2;  // pairs of dY rows (2q, 2q + 1), q0 <= q < q1
        if (q1 > q0) {
          // C (rows x Cout) += X^T (rows x 2(q1-q0)) * dY (2(q1-q0) x Cout): X's rows 2q + shift, + 1 are
          // pair q + (shift - par) / 2 of parity par.
          const uint16_t* x_base = reinterpret_cast<const uint16_t*>(packed_x + n * x_words_ + par * x_pairs_ * cin) +
                                   (q0 + (shift - par) / 2) * 2 * cin;
          amx_pair_a_rows(amx_, r1 - r0, cout, q1 - q0, x_base, rows, columns, packed_dy + n * dy_words_, dy_pairs_, q0,
                          written, c, cout, stage);
          written = true;
        }
        if (2 * q1 < last) single(n, last - 1);
      }
      if (!written) {  // no sample, or the tap never meets the source
        for (int64_t r = 0; r < r1 - r0; ++r) std::fill_n(c + r * cout, cout, 0.0f);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    return store_result(w);
  }

  ConvProblem p_;
  int threads_;
  AmxTiles amx_;                      // the tiles whose order pair products take (ChannelsLastDecision), or none
  const Conversions16* conversions_;  // the plan's kit's
  bool paired() const { return amx_ != AmxTiles::kNone; }  // pair products, in the tiles' order
  bool converted_;  // FLOAT16/BF16 X or dY (not paired()): both operands packed, converted as they are
  WorkspaceLedger::Handle result_ = -1;  // a FLOAT16/BF16 gradWeight as floats (tbc_weight_view)
  // paired(): pairs per parity of X's rows and of dY's, words per sample of each; their regions (dY's is
  // packed_), the pair columns, and per thread the block's row offsets and a single row's pairs.
  int64_t x_pairs_ = 0, dy_pairs_ = 0, x_words_ = 0, dy_words_ = 0;
  WorkspaceLedger::Handle packed_x_ = -1, pair_columns_ = -1, block_rows_ = -1, single_x_ = -1, single_dy_ = -1;
  WorkspaceLedger::Handle amx_stage_ = -1;  // per thread: amx_pair_a_rows' staging
  bool transposed_ = false;
  int64_t rows_ = 0, cols_ = 0, block_ = 1, blocks_ = 1, depth_ = 0, sample_floats_ = 0;
  // flat_ (time-major rows, interleaved_rows): one unit of N x T rows, scale_ = N rows per
  // position; else a unit per sample, a row per position.
  bool flat_ = false;
  int64_t units_ = 1, scale_ = 1;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;         // per thread
  WorkspaceLedger::Handle packed_ = -1;       // each sample's right operand as a PackedRight, or none
  WorkspaceLedger::Handle packed_left_ = -1;  // each sample's left operand as a PackedLeft, or none
  int64_t left_depth_ = 0, left_floats_ = 0;
};

Support supports_weight(const ConvProblem& p, const CpuFeatures& cpu) {
  const View5& out = p.grad_weight;
  const bool stored = out.shape[0] == 1 || out.shape[1] == 1 || out.stride[0] == 1 || out.stride[1] == 1;
  if (p.src.numel() <= 0 || p.dst.numel() <= 0 || out.numel() <= 0) return refuse("empty");
  if (!geometry_fits(p)) return refuse("not a 1-D stride-1 layer of one group in full precision");
  if (!rows_view(p.src, false) || !rows_view(p.dst, false)) return refuse("not channels-last rows");
  if (!float_or_half(out) || (!stored && out.dtype == ACL_FLOAT) || may_overlap(out))
    return refuse("gradWeight view not stored by taps");
  return supported_as(decide_channels_last(p, weight_pair_tiles(p, cpu.pairs), p.src, p.dst));
}

std::unique_ptr<ConvStep> plan_weight(const ConvProblem& p, PlanBuilder& builder) {
  const ChannelsLastDecision* decided = builder.decided<ChannelsLastDecision>();
  // (a plan always hands the decision over; a caller that did not gets it decided here)
  return std::make_unique<ChannelsLastWeight>(
      p, builder,
      decided != nullptr ? *decided : decide_channels_last(p, weight_pair_tiles(p, builder.cpu().pairs), p.src, p.dst));
}

}  // namespace
}  // namespace channels_last

extern const ConvImpl kChannelsLastBackwardWeight = {"channels_last", "channels_last", ConvPass::kBackwardWeight,
                                                     channels_last::supports_weight, channels_last::plan_weight};

}  // namespace aclnn_cpu
