// channels_last, gradInput: dX[s, :] = sum over taps k (in order) of dY[s + p - k*d, :] * W_k, per
// (sample, tile of positions) (kernels/gemm/channels_last.h).
#include <memory>

#include "kernels/gemm/channels_last.h"

namespace aclnn_cpu {
namespace channels_last {
namespace {

// Per (sample, tile of positions): the tile's dX rows zeroed, then each tap's product added. Each
// tap's W_k is packed once per execution (every task multiplies by it). With bf16 pair products,
// dY's rows are read in place from the user's BF16 tensor, each tap's W_k packed in pairs.
// Interleaved rows (interleaved_rows: ConvTbc's) are tiled as one matrix of N x T rows instead, each
// tap's product over every sample's rows at once: the packed operand's slivers are then 8
// neighbouring rows, not 8 positions of one sample N rows apart (32 KiB with B 16 x C 512).
// Each entry's chain (taps in order, output channels in order) is the same: so are the bits.
// A tile with FLOAT16/BF16 dY or dX goes in chunks of rows (kChunkFloats): each tap's dY rows of the
// chunk widened into a per-thread block, a 16-bit dX chunk summed in a per-thread float block and
// rounded into the user's view after the last tap (the same chains again).
class ChannelsLastInput final : public ConvStep {
 public:
  ChannelsLastInput(const ConvProblem& p, PlanBuilder& b) : p_(p), threads_(b.threads()), dot_(input_pairs_apply(p)) {
    const ConvGeometry& g = p.geometry;
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group;
    if (dot_ && p.wei.dtype != ACL_FLOAT) {  // pack_pairs_right reads float weights
      weights_ = b.book_scratch("channels_last.weights", static_cast<uint64_t>(p.wei.numel()), sizeof(float));
    }
    flat_ = !dot_ && interleaved_rows(p.dst) && interleaved_rows(p.grad_input);
    const int64_t rows = flat_ ? g.batch * g.src_size[2] : g.src_size[2];  // dX rows of a unit
    const int64_t tasks_per_unit =
        flat_ ? kTasksPerThread * threads_ : ceil_div(kTasksPerThread * threads_, std::max<int64_t>(1, g.batch));
    tile_ = std::max<int64_t>(1, ceil_div(rows, tasks_per_unit));
    tiles_ = ceil_div(rows, tile_);
    blocking_ = plan_gemm_blocking(tile_, cin, cout);
    // (a tile cut into equal chunks of at most kChunkFloats, or of one GEMM row block where that is
    // more: a small last chunk would multiply by all of W_k as often as a whole one does)
    const bool staged = !dot_ && p.dst.dtype != ACL_FLOAT, summed = p.grad_input.dtype != ACL_FLOAT;
    const int64_t chunk_rows = std::max<int64_t>(1, kChunkFloats / std::max(cin, cout));
    const int64_t most = std::max(blocking_.mc, chunk_rows / blocking_.mc * blocking_.mc);
    chunk_ = staged || summed ? ceil_div(tile_, ceil_div(tile_, most)) : tile_;
    if (staged) staged_ = b.book_scratch("channels_last.gradOutput_rows", chunk_ * cout, sizeof(float), threads_);
    if (summed) summed_ = b.book_scratch("channels_last.gradInput_rows", chunk_ * cin, sizeof(float), threads_);
    pack_ = b.book_scratch("gemm.pack", blocking_.scratch_floats(), sizeof(float), threads_);
    tap_floats_ = packed_right_floats(blocking_, cin, cout);
    if (dot_) {  // W_k in pairs; a chunk's dY row offsets; the pairs' channel offsets
      tap_floats_ = packed_pairs_right_words(cin, cout / 2);
      row_offsets_ = b.book_scratch("channels_last.row_offsets", chunk_, sizeof(int64_t), threads_);
      pair_offsets_ = b.book_scratch("channels_last.pair_offsets", cout / 2, sizeof(int64_t));
    }
    const int64_t taps = g.kernel[2], huge = int64_t{1} << 58;
    packed_ = b.book_scratch("channels_last.packed_weights",
                             product_within(taps, tap_floats_, huge) ? uint64_t(taps * tap_floats_) : UINT64_MAX,
                             sizeof(float));
  }
  int64_t tasks() const override { return flat_ ? tiles_ : p_.geometry.batch * tiles_; }
  std::string detail() const override {
    return isa_detail(blocking_) + (dot_ ? ":bf16_dot" : "") + (flat_ ? ":interleaved" : "") +
           (chunk_ < tile_ ? ":chunks=" + std::to_string(ceil_div(tile_, chunk_)) : "");
  }

  int run(const Workspace& w, const StepInputs&) const override {
    const ConvGeometry& g = p_.geometry;
    const View5 wei = weights_ >= 0 ? tbc_weight_view(p_.wei, w.at<float>(weights_)) : p_.wei;
    if (weights_ >= 0) {
      const int status = convert_weights(p_.wei, wei, threads_);
      if (status != ACLNN_SUCCESS) return status;
    }
    const int64_t cin = g.src_channels_per_group, cout = g.dst_channels_per_group, pairs = cout / 2;
    void* packed = w.at<float>(packed_);
    int status = run_tasks(g.kernel[2], threads_, "channels-last gradInput", [&](int64_t k) {  // W_k
      if (dot_) {  // in pairs (column ci of W_k: Cout floats)
        pack_pairs_right(dense_float_data(wei) + k * wei.stride[4], wei.stride[1], cin, pairs,
                         static_cast<uint32_t*>(packed) + k * tap_floats_, pairs, 0, 0);
      } else if (wei.dtype == ACL_FLOAT) {
        pack_right(blocking_, cout, cin, tap_matrix(wei, dense_float_data(wei), k),
                   static_cast<float*>(packed) + k * tap_floats_);
      } else {
        pack_tap_converted(wei, k, right_sliver_columns(blocking_), static_cast<float*>(packed) + k * tap_floats_);
      }
    });
    if (status != ACLNN_SUCCESS) return status;
    int64_t* pair_offsets = dot_ ? w.at<int64_t>(pair_offsets_) : nullptr;
    for (int64_t q = 0; q < (dot_ ? pairs : 0); ++q) pair_offsets[q] = 2 * q;
    const View5 &dy = p_.dst, &dx = p_.grad_input;
    const View5 dy_positions = positions_as_planes(dy), dx_positions = positions_as_planes(dx);  // a row per position
    const int64_t rows = flat_ ? g.batch * g.src_size[2] : g.src_size[2];
    const int64_t dy_rows = flat_ ? g.batch * g.dst_size[2] : g.dst_size[2], scale = flat_ ? g.batch : 1;
    return run_tasks(tasks(), threads_, "channels-last gradInput", [&](int64_t t) {
      const UnitRows unit{flat_, g.batch, flat_ ? 0 : t / tiles_};
      const int64_t r0 = t % tiles_ * tile_, r1 = std::min(rows, r0 + tile_);
      float* pack = w.at<float>(pack_, thread_index());
      float* staged = w.at<float>(staged_, thread_index());
      float* summed = w.at<float>(summed_, thread_index());
      int64_t* offsets = dot_ ? w.at<int64_t>(row_offsets_, thread_index()) : nullptr;
      for (int64_t c0 = r0; c0 < r1; c0 += chunk_) {
        const int64_t c1 = std::min(r1, c0 + chunk_);
        // dX rows [c0, c1) in place (float), or in `summed` (row r at (r - c0) * Cin)
        float* out = summed != nullptr ? summed : static_cast<float*>(dx.data) + unit.element(dx, c0);
        const int64_t ld = summed != nullptr ? cin : unit.stride(dx);
        for (int64_t r = c0; r < c1; ++r) std::fill_n(out + (r - c0) * ld, cin, 0.0f);
        for (int64_t k = 0; k < g.kernel[2]; ++k) {
          const int64_t shift = (g.pad[2] - k * g.dilation[2]) * scale;  // dY row of dX row r: r + shift
          const int64_t first = std::max(c0, -shift), last = std::min(c1, dy_rows - shift);
          if (first >= last) continue;
          float* c = out + (first - c0) * ld;
          // dX[first:last, :] (rows x Cin) += dY[first+shift : last+shift, :] (rows x Cout) * W_k (Cout x Cin)
          if (dot_) {  // dY's rows read in place from the user's BF16 tensor, in pairs of channels
            for (int64_t r = first; r < last; ++r) offsets[r - first] = unit.element(dy, r + shift);
            const PackedPairsRight w_k{static_cast<const uint32_t*>(packed) + k * tap_floats_, pairs, 0};
            bf16_dot_a_rows(blocking_, last - first, cin, pairs, static_cast<const uint16_t*>(dy.data), offsets,
                            pair_offsets, w_k, true, c, ld);
            continue;
          }
          for (int64_t r = first; r < last && staged != nullptr; ++r) {  // FLOAT16/BF16 rows widened
            read_row_floats(dy_positions, MathMode::kFull, unit.sample(r + shift), unit.position(r + shift), 0, 0, 0, 1,
                            cout, staged + (r - first) * cout);
          }
          const MatrixRef a = staged != nullptr ? MatrixRef{staged, cout, false}
                                                : MatrixRef{unit.floats(dy, first + shift), unit.stride(dy), false};
          sgemm(blocking_, pack, last - first, cin, cout, a,
                PackedRight{static_cast<const float*>(packed) + k * tap_floats_, cout}, true, c, ld);
        }
        for (int64_t r = c0; r < c1 && summed != nullptr; ++r) {
          store_plane_floats(summed + (r - c0) * cin, dx_positions, unit.sample(r), unit.position(r), 0, cin);
        }
      }
    });
  }

 private:
  ConvProblem p_;
  int threads_;
  bool dot_;           // bf16 pair products (input_pairs_apply): dY read in place, W_k packed in pairs
  bool flat_ = false;  // interleaved rows (interleaved_rows), tiled as one matrix
  WorkspaceLedger::Handle weights_ = -1;  // dot_'s FLOAT16/BF16 weights as floats (tbc_weight_view)
  int64_t tile_ = 1, tiles_ = 1, chunk_ = 1, tap_floats_ = 0;
  GemmBlocking blocking_;
  WorkspaceLedger::Handle pack_ = -1;    // per thread
  WorkspaceLedger::Handle packed_ = -1;  // each tap's W_k as a PackedRight (dot_: PackedPairsRight)
  WorkspaceLedger::Handle row_offsets_ = -1, pair_offsets_ = -1;  // dot_: per thread; shared
  // Per thread: a chunk's FLOAT16/BF16 dY rows widened (chunk_ x Cout), a 16-bit dX chunk's sums (chunk_ x Cin)
  WorkspaceLedger::Handle staged_ = -1, summed_ = -1;
};

// (Empty tensors, whose data may be null, are left to `gemm`.)
Support supports_input(const ConvProblem& p, const CpuFeatures&) {
  if (p.dst.numel() <= 0 || p.wei.numel() <= 0 || p.grad_input.numel() <= 0) return refuse("empty");
  if (p.input_grad != InputGrad::kBackwardData) return refuse("transposed layer");
  if (p.add_grad_input_bias) return refuse("a bias to add");
  if (!geometry_fits(p)) return refuse("not a 1-D stride-1 layer of one group in full precision");
  if (!rows_view(p.dst, false) || !rows_view(p.grad_input, true)) return refuse("not channels-last rows");
  if (!matrix_view(p.wei)) return refuse("weight not a matrix per tap");
  return kSupported;
}
std::unique_ptr<ConvStep> plan_input(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<ChannelsLastInput>(p, builder);
}
}  // namespace
}  // namespace channels_last

extern const ConvImpl kChannelsLastInputGrad = {"channels_last", "channels_last", Gradient::kInput,
                                                channels_last::supports_input, channels_last::plan_input};

}  // namespace aclnn_cpu
