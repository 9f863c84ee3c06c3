// channels_last, gradInput: dX[s, :] = sum over taps k (in order) of dY[s + p - k*d, :] * W_k, and
// the forward product Y[t, :] = sum over taps k (in order) of X[t - p + k*d, :] * W_k^T (plus the
// forward operators' bias), per (sample, tile of positions) (kernels/gemm/channels_last.h: TapProduct).
#include <memory>

#include "kernels/gemm/channels_last.h"

namespace aclnn_cpu {
namespace channels_last {
namespace {

// Per (sample, tile of positions): the tile's rows of `to` zeroed, then each tap's product added, then
// the bias (if any) added to the sums. Each tap's M_k is packed once per execution (every task
// multiplies by it); the `from` rows are read in place by the micro-kernel (sgemm_a_rows), never
// packed. With pair products (the AMX tiles' order, amx.h), they are read in pairs from the user's
// BF16 tensor, each tap's M_k packed in pairs.
// Interleaved rows (interleaved_rows: ConvTbc's) are tiled as one matrix of N x T rows instead, each
// tap's product over every sample's rows at once.
// Each entry's chain (taps in order, `from` channels in order) is the same: so are the bits.
// A tile goes in chunks of rows (kChunkFloats), every tap's product over one chunk before the next:
// the chunk's sums stay in cache between taps (a whole tile's would go to memory and back per tap and
// depth block). FLOAT16/BF16 `from` rows of a chunk are widened per tap into a per-thread block, a
// 16-bit `to` chunk summed in a per-thread float block and rounded into the user's view after the
// last tap (the same chains again).
class ChannelsLastInput final : public ConvStep {
 public:
  // Books the step `d` decided (decide_channels_last).
  ChannelsLastInput(const ConvProblem& p, PlanBuilder& b, const ChannelsLastDecision& d)
      : p_(p),
        t_(tap_product(p)),
        threads_(b.threads()),
        amx_(d.amx),
        conversions_(b.cpu().conversions),
        flat_(d.flat) {
    const int64_t to_channels = t_.to_channels, from_channels = t_.from_channels, batch = p.geometry.batch;
    if (paired() && p.wei.dtype != ACL_FLOAT) {  // pack_pairs_right reads float weights
      weights_ = b.book_scratch("channels_last.weights", static_cast<uint64_t>(p.wei.numel()), sizeof(float));
    }
    bias_ = BiasFloats(result_bias(p), b, "channels_last.bias");
    const int64_t rows = flat_ ? batch * t_.to_positions : t_.to_positions;  // `to` rows of a unit
    const int64_t tasks_per_unit =
        flat_ ? kTasksPerThread * threads_ : ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, batch));
    tile_ = std::max<int64_t>(1, ceil_div(rows, tasks_per_unit));
    tiles_ = ceil_div(rows, tile_);
    blocking_ = plan_gemm_blocking(tile_, to_channels, from_channels, b.cpu());
    // (a tile cut into equal chunks of at most kChunkFloats: a chunk's sums and `from` rows stay in L2
    // over its taps; pair products' chunks of one GEMM row block where that is more: a small last chunk
    // would multiply by all of M_k as often as a whole one does)
    const bool staged = !paired() && t_.from.dtype != ACL_FLOAT, summed = t_.to.dtype != ACL_FLOAT;
    const int64_t chunk_rows = std::max<int64_t>(1, kChunkFloats / std::max(to_channels, from_channels));
    const int64_t most = paired() ? std::max(blocking_.mc, chunk_rows / blocking_.mc * blocking_.mc) : chunk_rows;
    chunk_ = ceil_div(tile_, ceil_div(tile_, most));
    if (staged) staged_ = b.book_scratch("channels_last.from_rows", chunk_ * from_channels, sizeof(float), threads_);
    if (summed) summed_ = b.book_scratch("channels_last.to_rows", chunk_ * to_channels, sizeof(float), threads_);
    // A chunk's `from` rows are read in place (never packed): their offsets, and those of the channels
    // (of the pairs of channels with pair products) along them.
    row_offsets_ = b.book_scratch("channels_last.row_offsets", chunk_, sizeof(int64_t), threads_);
    channel_offsets_ =
        b.book_scratch("channels_last.channel_offsets", paired() ? from_channels / 2 : from_channels, sizeof(int64_t));
    tap_floats_ = packed_right_floats(blocking_, to_channels, from_channels);
    if (paired()) {  // M_k in pairs; the tiles' staging
      tap_floats_ = packed_pairs_right_words(to_channels, from_channels / 2);
      amx_stage_ =
          b.book_scratch("channels_last.amx_stage", amx_a_stage_words(from_channels / 2), sizeof(uint32_t), threads_);
    }
    const int64_t taps = t_.taps_count, huge = int64_t{1} << 58;
    packed_ = b.book_scratch("channels_last.packed_weights",
                             product_within(taps, tap_floats_, huge) ? uint64_t(taps * tap_floats_) : UINT64_MAX,
                             sizeof(float));
  }
  int64_t tasks() const override { return flat_ ? tiles_ : p_.geometry.batch * tiles_; }
  std::string detail() const override {
    return isa_detail(blocking_) + (t_.forward ? ":forward" : "") + amx_detail(amx_) + (flat_ ? ":interleaved" : "") +
           (chunk_ < tile_ ? ":chunks=" + std::to_string(ceil_div(tile_, chunk_)) : "");
  }

  int run(const Workspace& w, const StepInputs&) const override {
    const View5 taps = weights_ >= 0 ? tbc_weight_view(t_.taps, w.at<float>(weights_)) : t_.taps;
    if (weights_ >= 0) {
      const int status = convert_weights(t_.taps, taps, threads_, conversions_);
      if (status != ACLNN_SUCCESS) return status;
    }
    const int64_t to_channels = t_.to_channels, from_channels = t_.from_channels, pairs = from_channels / 2;
    bias_.fill(w);
    const float* bias = bias_.from(w, 0);
    void* packed = w.at<float>(packed_);
    int status = run_tasks(t_.taps_count, threads_, "channels-last gradInput", [&](int64_t k) {  // M_k
      if (paired()) {  // in pairs (column j of M_k: From floats)
        pack_pairs_right(dense_float_data(taps) + k * taps.stride[4], taps.stride[1], to_channels, pairs,
                         static_cast<uint32_t*>(packed) + k * tap_floats_, pairs, 0, 0);
      } else if (taps.dtype == ACL_FLOAT) {
        pack_right(blocking_, from_channels, to_channels, tap_matrix(taps, dense_float_data(taps), k),
                   static_cast<float*>(packed) + k * tap_floats_);
      } else {
        pack_tap_converted(taps, k, right_sliver_columns(blocking_), static_cast<float*>(packed) + k * tap_floats_,
                           conversions_);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    int64_t* channel_offsets = w.at<int64_t>(channel_offsets_);  // (pairs: each pair's first channel)
    for (int64_t q = 0; q < (paired() ? pairs : from_channels); ++q) channel_offsets[q] = paired() ? 2 * q : q;
    const View5 &from = t_.from, &to = t_.to;
    const View5 from_positions = positions_as_planes(from), to_positions = positions_as_planes(to);  // a row each
    const int64_t batch = p_.geometry.batch;
    const int64_t rows = flat_ ? batch * t_.to_positions : t_.to_positions;
    const int64_t from_rows = flat_ ? batch * t_.from_positions : t_.from_positions, scale = flat_ ? batch : 1;
    return run_tasks(tasks(), threads_, "channels-last gradInput", [&](int64_t t) {
      const UnitRows unit{flat_, batch, flat_ ? 0 : t / tiles_};
      const int64_t r0 = t % tiles_ * tile_, r1 = std::min(rows, r0 + tile_);
      float* staged = w.at<float>(staged_, thread_index());
      float* summed = w.at<float>(summed_, thread_index());
      int64_t* offsets = w.at<int64_t>(row_offsets_, thread_index());
      for (int64_t c0 = r0; c0 < r1; c0 += chunk_) {
        const int64_t c1 = std::min(r1, c0 + chunk_);
        // `to` rows [c0, c1) in place (float), or in `summed` (row r at (r - c0) * To)
        float* out = summed != nullptr ? summed : static_cast<float*>(to.data) + unit.element(to, c0);
        const int64_t ld = summed != nullptr ? to_channels : unit.stride(to);
        for (int64_t r = c0; r < c1; ++r) std::fill_n(out + (r - c0) * ld, to_channels, 0.0f);
        for (int64_t k = 0; k < t_.taps_count; ++k) {
          const int64_t shift = t_.shift(k) * scale;  // `from` row of `to` row r: r + shift
          const int64_t first = std::max(c0, -shift), last = std::min(c1, from_rows - shift);
          if (first >= last) continue;
          float* c = out + (first - c0) * ld;
          // to[first:last, :] (rows x To) += from[first+shift : last+shift, :] (rows x From) * M_k (From x To)
          for (int64_t r = first; r < last; ++r) {  // the rows in the user's tensor, or in `staged`
            offsets[r - first] = staged != nullptr ? (r - first) * from_channels : unit.element(from, r + shift);
          }
          if (paired()) {  // in pairs of channels from the user's BF16 tensor
            amx_pair_a_rows(amx_, last - first, to_channels, pairs, static_cast<const uint16_t*>(from.data), offsets,
                            channel_offsets, static_cast<const uint32_t*>(packed) + k * tap_floats_, pairs, 0, true, c,
                            ld, w.at<uint32_t>(amx_stage_, thread_index()));
            continue;
          }
          for (int64_t r = first; r < last && staged != nullptr; ++r) {  // FLOAT16/BF16 rows widened
            read_row_floats(from_positions, MathMode::kFull, unit.sample(r + shift), unit.position(r + shift), 0, 0, 0,
                            1, from_channels, staged + (r - first) * from_channels, conversions_);
          }
          sgemm_a_rows(blocking_, last - first, to_channels, from_channels,
                       staged != nullptr ? staged : static_cast<const float*>(from.data), offsets, channel_offsets,
                       PackedRight{static_cast<const float*>(packed) + k * tap_floats_, from_channels}, true, c, ld);
        }
        for (int64_t r = c0; r < c1 && bias != nullptr; ++r) {  // fl32(sum) + bias
          float* row = out + (r - c0) * ld;
          for (int64_t j = 0; j < to_channels; ++j) row[j] += bias[j];
        }
        for (int64_t r = c0; r < c1 && summed != nullptr; ++r) {
          store_plane_floats(summed + (r - c0) * to_channels, to_positions, unit.sample(r), unit.position(r), 0,
                             to_channels, conversions_);
        }
      }
    });
  }

 private:
  ConvProblem p_;
  TapProduct t_;
  int threads_;
  AmxTiles amx_;                      // the tiles whose order pair products take (ChannelsLastDecision), or none
  const Conversions16* conversions_;  // the plan's kit's
  bool paired() const { return amx_ != AmxTiles::kNone; }  // pair products, in the tiles' order
  bool flat_;                                              // interleaved rows (interleaved_rows), tiled as one matrix
  WorkspaceLedger::Handle weights_ = -1;  // pair products' FLOAT16/BF16 weights as floats (tbc_weight_view of the taps)
  BiasFloats bias_;                       // the forward operators' bias, per `to` channel
  int64_t tile_ = 1, tiles_ = 1, chunk_ = 1, tap_floats_ = 0;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle packed_ = -1;  // each tap's M_k as a PackedRight (paired(): PackedPairsRight)
  WorkspaceLedger::Handle row_offsets_ = -1, channel_offsets_ = -1;  // per thread; shared
  WorkspaceLedger::Handle amx_stage_ = -1;                           // paired(), per thread: amx_pair_a_rows' staging
  // Per thread: a chunk's FLOAT16/BF16 `from` rows widened (chunk_ x From), a 16-bit `to` chunk's sums (chunk_ x To)
  WorkspaceLedger::Handle staged_ = -1, summed_ = -1;
};

// (Empty tensors, whose data may be null, are left to `gemm`.)
Support supports_input(const ConvProblem& p, const CpuFeatures& cpu) {
  const TapProduct t = tap_product(p);
  if (t.from.numel() <= 0 || p.wei.numel() <= 0 || t.to.numel() <= 0) return refuse("empty");
  if (!geometry_fits(p)) return refuse("not a 1-D stride-1 layer of one group in full precision");
  if (!rows_view(t.from, false) || !rows_view(t.to, true)) return refuse("not channels-last rows");
  if (!matrix_view(p.wei)) return refuse("weight not a matrix per tap");
  return supported_as(decide_channels_last(p, input_pair_tiles(p, t, cpu.pairs), t.from, t.to));
}
std::unique_ptr<ConvStep> plan_input(const ConvProblem& p, PlanBuilder& builder) {
  const ChannelsLastDecision* decided = builder.decided<ChannelsLastDecision>();
  // (a plan always hands the decision over; a caller that did not gets it decided here)
  const TapProduct t = tap_product(p);
  return std::make_unique<ChannelsLastInput>(
      p, builder,
      decided != nullptr ? *decided
                         : decide_channels_last(p, input_pair_tiles(p, t, builder.cpu().pairs), t.from, t.to));
}
}  // namespace
}  // namespace channels_last

namespace {
// Its products read only rows inside `from` and, in pairs, whole pairs of channels: no padding meets an Inf
// or NaN, so it needs no non-finite repair.
constexpr ConvImpl channels_last_input_entry() {
  ConvImpl impl{"channels_last", "channels_last", ConvPass::kBackwardData, channels_last::supports_input,
                channels_last::plan_input};
  impl.multiplies_padding = false;
  return impl;
}
}  // namespace
extern const ConvImpl kChannelsLastBackwardData = channels_last_input_entry();
extern const ConvImpl kChannelsLastForward = for_pass(kChannelsLastBackwardData, ConvPass::kForward);

}  // namespace aclnn_cpu
