// Convolutions with few channels per group (at most 16 in and out: grouped layers such as ResNeXt's
// 32 groups of 8, channel multipliers, thin dense layers) computed directly, without a column
// matrix. Through a GEMM each entry of the column matrix would be written, packed and read back
// for only Cout_g multiply-adds; here each slice (sample, group) of the source is copied once into
// zero-padded rows (Staging), straight from the user's tensor in its own dtype and strides (no dense
// copy of the inputs; only the weights are), and register-blocked row kernels (row_kernels.h) read
// every kernel tap from there at a fixed offset.
//   gradInput: a forward convolution (a transposed layer's, or a stride-1 direct layer's flipped
//     one, conv_problem.h), per output row and block of 8 output channels.
//   gradWeight: per source channel, dot products over the slice's rows in 16 lanes, for blocks of
//     output channels x taps held in registers.
// Each output element is summed in a fixed order inside one task (one chain; with one output channel
// per group, a chain per kernel row and their sums in order); the weight
// gradient's lanes are summed over samples in fixed chunks, the chunks in order, then the 16 lanes
// pairwise. So results do not depend on the thread count, and AVX-512 and AVX2 agree bit for bit.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "common/dtype.h"
#include "kernels/common/convert.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/common/tiling.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/plan.h"
#include "kernels/direct/small_group_decision.h"
#include "kernels/direct/small_group_staging.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kMaxChannels = 16;                    // per group, in and out
constexpr int64_t kStagingBudget = int64_t{4} << 20;    // bytes of staged slices per thread, at most
constexpr int64_t kLanesBudget = int64_t{16} << 20;     // bytes of weight-gradient lanes, at most
constexpr int64_t kContiguousLanes = int64_t{2} << 20;  // ... and while more chunks only cost this

using small_group::decide_input;
using small_group::kBufferedSlice;
using small_group::SmallGroupDecision;
using small_group::Staging;

// Channels per group within the limit, an output that is not empty, a kernel of at least one tap
// on every axis, and slices that fit the staging budget (then no size computed from them overflows).
bool small_enough(const ConvGeometry& g, int64_t staged_channels) {
  for (int a = 0; a < 3; ++a) {
    if (g.dst_size[a] <= 0 || g.kernel[a] <= 0) return false;
  }
  return g.src_channels_per_group <= kMaxChannels && g.dst_channels_per_group <= kMaxChannels &&
         Staging::floats(g, staged_channels) * 4 <= double(kStagingBudget);
}

constexpr const char* kNotSmallEnough = "more than 16 channels per group or slices past the staging budget";

// gradInput as a forward convolution, per (sample, group): stage the source slice (or, where the kernels
// read it in place, take the user's planes as they are), then every output row in blocks of 8 output
// channels.
class SmallGroupInput final : public ConvStep {
 public:
  // Books the step `d` decided (decide_input).
  SmallGroupInput(const ConvProblem& p, PlanBuilder& b, const SmallGroupDecision& d)
      : flipped_(p.input_grad == InputGrad::kBackwardData),
        g_(flipped_ ? flipped_geometry(p.geometry) : p.geometry),
        source_(flipped_ ? p.dst : p.src),
        math_(p.math),
        staging_(g_),
        threads_(b.threads()),
        kernels_(b.cpu().kit->rows),
        conversions_(b.cpu().conversions),
        // (a forward operator's dense float output: written in place, the kernels adding its bias as they
        // store each sum; not buffered and stored again, a pass whose stores do not overlap the products)
        bias_in_kernels_(bias_added_in_place(p) != nullptr),
        buffered_(d.buffered),
        output_(p.grad_input, b, "gradInput.f32", buffered_, result_bias(p), bias_in_kernels_),
        bias_(bias_added_in_place(p), b, "small_group.bias") {
    blocks_ = ceil_div(g_.dst_channels_per_group, kForwardBlock);
    if (buffered_) {
      slice_ =
          b.book_scratch("small_group.result", g_.dst_channels_per_group * g_.dst_plane(), sizeof(float), threads_);
    }
    group_floats_ = blocks_ * g_.src_channels_per_group * g_.kernel_volume() * kForwardBlock;
    weights_ = b.book_scratch("small_group.weights", g_.groups * group_floats_, sizeof(float));
    in_place_ = d.in_place;
    if (in_place_) plan_in_place();
    if (!in_place_) {
      staged_ = b.book_scratch("small_group.staged", g_.src_channels_per_group * staging_.channel_stride, sizeof(float),
                               threads_);
    }
    b.need_float_inputs(false, true, false);  // the source is staged from the user's view, or read in place
  }
  int64_t tasks() const override { return g_.batch * g_.groups; }
  std::string detail() const override {
    return std::string("isa=") + isa_name(kernels_.isa) + (flipped_ ? ":flipped" : "") + (in_place_ ? ":in_place" : "");
  }

  int run(const Workspace& w, const StepInputs& in) const override {
    int status = prepare(w, in);
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(tasks(), threads_, "small-group gradInput",
                       [&](int64_t t) { slice(w, t / g_.groups, t % g_.groups); });  // t = (n, group)
    if (status == ACLNN_SUCCESS) finish(w);
    return status;
  }

  // The three parts of run(), for a step that computes this gradient's slices among its own work
  // (SmallGroupJoint): the weights packed and each thread's staging buffer cleared; one slice
  // computed and stored (any thread, in any order); the result stored where it was not in parts.
  int prepare(const Workspace& w, const StepInputs& in) const {
    pack_weights(in.f32.wei, w.at<float>(weights_));
    bias_.fill(w);
    if (in_place_) return ACLNN_SUCCESS;
    return run_tasks(threads_, threads_, "small-group gradInput",
                     [&](int64_t i) { staging_.clear(w.at<float>(staged_, i), g_.src_channels_per_group); });
  }
  void slice(const Workspace& w, int64_t n, int64_t grp) const {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group, taps = g_.kernel_volume();
    // The slice's source: the user's planes read in place, or staged into this thread's padded rows.
    const float* source = nullptr;
    if (in_place_) {
      source = static_cast<const float*>(source_.data) + source_.element(n, grp * cin, 0, 0, 0);
    } else {
      float* staged = w.at<float>(staged_, thread_index());
      staging_.stage(g_, source_, math_, n, grp * cin, cin, staged, conversions_);
      source = staged;
    }
    // The slice's result where it belongs, or for a result that is not a dense float tensor in a
    // buffer of this thread's, rounded into the user's view from there (no float copy of it all).
    float* y = buffered_ ? w.at<float>(slice_, thread_index())
                         : output_.data(w) + (n * g_.groups + grp) * cout * g_.dst_plane();
    const float* group_weights = w.at<float>(weights_) + grp * group_floats_;
    const float* group_bias = bias_.from(w, grp * cout);
    for (int64_t blk = 0; blk < blocks_; ++blk) {
      ForwardRows rows{source, in_place_ ? in_place_row_base_.data() : staging_.row_base.data(), staging_.out_rows,
                       in_place_ ? source_.stride[1] : staging_.channel_stride, cin,
                       in_place_ ? in_place_tap_.data() : staging_.tap.data(), taps,
                       group_weights + blk * cin * taps * kForwardBlock,
                       std::min<int64_t>(kForwardBlock, cout - blk * kForwardBlock),
                       y + blk * kForwardBlock * g_.dst_plane(), g_.dst_plane(), staging_.width,
                       // (one output channel per group: a chain per kernel row)
                       cout == 1 ? g_.kernel[2] : 0,
                       group_bias != nullptr ? group_bias + blk * kForwardBlock : nullptr};
      staging_.describe_grid(g_, rows);
      if (in_place_) {
        const int64_t width = g_.src_size[2];
        if (rows.grid_rows > 0) rows.row_step = width;  // (consecutive source rows one source row apart)
        rows.source_row = source_row_.data(), rows.tap_column = tap_column_.data();
        rows.source_height = g_.src_size[1], rows.source_width = width;
      }
      kernels_.forward_rows(rows);
    }
    if (buffered_) {
      output_.store_rows(y, g_.dst_plane(), cout, n, grp * cout, 0, g_.dst_plane());
    } else {
      output_.store_part(w, n, grp * cout, (grp + 1) * cout, 0, g_.dst_plane());
    }
  }
  void finish(const Workspace& w) const { output_.finish(w, threads_, true); }
  // Where slice (n, grp)'s result is written in place, or an empty run (one buffered per thread).
  PlanesRun output_run(const Workspace& w, int64_t n, int64_t grp) const {
    if (buffered_) return {};
    const int64_t floats = g_.dst_channels_per_group * g_.dst_plane();
    return {reinterpret_cast<const char*>(output_.data(w) + (n * g_.groups + grp) * floats), floats * 4};
  }

  // For a direct layer (the source is dY) whose staging holds all of dY (stages_whole_source()):
  // adds the gradBias lanes of each channel c of the slice this thread staged last into
  // lanes[c * 8], exactly as reduce_bias forms them (the staged values are the user's, widened
  // exactly, where cubeMathType rounds nothing).
  void add_source_lanes(const Workspace& w, int64_t n, int64_t grp, double* lanes) const {
    if (in_place_) {  // the user's planes themselves (the view's plane shape and strides)
      const int64_t cin = g_.src_channels_per_group;
      add_float_planes_lanes(source_, static_cast<const float*>(source_.data) + source_.element(n, grp * cin, 0, 0, 0),
                             cin, source_.stride[1], lanes, conversions_);
      return;
    }
    const float* staged = w.at<float>(staged_, thread_index());
    View5 plane;  // one staged channel's dY plane, without its padding
    plane.shape[2] = g_.src_size[0], plane.shape[3] = g_.src_size[1], plane.shape[4] = g_.src_size[2];
    plane.stride[2] = staging_.rows_h * staging_.row_stride, plane.stride[3] = staging_.row_stride, plane.stride[4] = 1;
    const int64_t inside = (g_.pad[0] * staging_.rows_h + g_.pad[1]) * staging_.row_stride + g_.pad[2];
    add_float_planes_lanes(plane, staged + inside, g_.src_channels_per_group, staging_.channel_stride, lanes,
                           conversions_);
  }
  bool flipped() const { return flipped_; }
  // (read in place, the source is whole too: the same condition keeps the same plans)
  bool stages_whole_source() const { return staging_.holds_whole_source(g_); }

 private:
  // packed[group][block][c][t][co] = W(block*8 + co, c, t) of the forward geometry (zero past its
  // output channels). Flipped, that W(co, c, t) is wei[c][co][K-1-t] (channel roles swapped).
  void pack_weights(const float* wei, float* packed) const {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group, taps = g_.kernel_volume();
    for (int64_t grp = 0; grp < g_.groups; ++grp) {
      for (int64_t blk = 0; blk < blocks_; ++blk) {
        float* out = packed + grp * group_floats_ + blk * cin * taps * kForwardBlock;
        for (int64_t c = 0; c < cin; ++c) {
          for (int64_t t = 0; t < taps; ++t) {
            for (int64_t i = 0; i < kForwardBlock; ++i, ++out) {
              const int64_t co = blk * kForwardBlock + i;
              if (co >= cout) {
                *out = 0.0f;
              } else if (flipped_) {
                *out = wei[((grp * cin + c) * cout + co) * taps + (taps - 1 - t)];
              } else {
                *out = wei[((grp * cout + co) * cin + c) * taps + t];
              }
            }
          }
        }
      }
    }
  }

  // The source's rows' and taps' offsets in the user's planes, which the kernels read in place.
  void plan_in_place() {
    const int64_t width = g_.src_size[2];
    for (int64_t oh = 0; oh < g_.dst_size[1]; ++oh) {
      source_row_.push_back(oh * g_.stride[1] - g_.pad[1]);
      in_place_row_base_.push_back(source_row_.back() * width);
    }
    for (int64_t kh = 0; kh < g_.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < g_.kernel[2]; ++kw) {
        tap_column_.push_back(kw * g_.dilation[2] - g_.pad[2]);
        in_place_tap_.push_back(kh * g_.dilation[1] * width + tap_column_.back());
      }
    }
  }
  bool flipped_;
  ConvGeometry g_;  // the forward convolution computed (flipped_geometry for a direct layer)
  View5 source_;    // its source: dY for a direct layer, X (the user's gradOutput) for a transposed one
  MathMode math_;
  Staging staging_;
  int threads_;
  const RowKernels& kernels_;
  const Conversions16* conversions_;  // the plan's kit's
  bool bias_in_kernels_;              // the kernels add the forward operators' bias (bias_)
  bool buffered_;                     // each slice's result computed in a per-thread buffer (a result not dense float)
  DenseFloatOutput output_;
  BiasFloats bias_;
  int64_t blocks_ = 1, group_floats_ = 0;
  WorkspaceLedger::Handle weights_ = -1, staged_ = -1, slice_ = -1;  // staged_, slice_: per thread
  bool in_place_ = false;
  std::vector<int64_t> source_row_, in_place_row_base_, tap_column_, in_place_tap_;  // (in_place_)
};

// gradWeight per (group, chunk of samples): for each sample, stage its source slice and its dY rows
// (zero-padded to whole vectors), then each source channel's dot products into the chunk's lanes.
// Then per group: the chunks' lanes added in order, and each entry's 16 lanes pairwise.
class SmallGroupWeight final : public ConvStep {
 public:
  SmallGroupWeight(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry),
        src_(p.src),
        dst_(p.dst),
        math_(p.math),
        staging_(g_),
        threads_(b.threads()),
        kernels_(b.cpu().kit->rows),
        conversions_(b.cpu().conversions),
        output_(p.grad_weight, b, "gradWeight.f32"),
        prefetch_next_(b.cpu().amd) {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group;
    group_lanes_ = cout * cin * g_.kernel_volume() * kRowLanes;
    // Chunks of samples: enough for the task count, and more while their partial lanes stay small
    // (a sample per chunk when they allow: then consecutive tasks read consecutive slices; not for
    // a slice without channels, whose batch may be any size).
    const int64_t lanes_per_chunk = std::max<int64_t>(1, g_.groups * group_lanes_);
    const int64_t contiguous = group_lanes_ > 0 ? kContiguousLanes / 4 / lanes_per_chunk : 1;
    chunks_ = std::max<int64_t>(
        1, std::min({std::max(pieces_for_tasks(g_.groups), contiguous), g_.batch, kLanesBudget / 4 / lanes_per_chunk}));
    dy_channels_ = round_up(std::max<int64_t>(1, cout), kernels_.weight_block(cout));
    dy_row_ = ceil_div(staging_.width, kRowLanes) * dy_channels_ * kRowLanes;
    lanes_ = b.book_scratch("small_group.lanes", g_.groups * chunks_ * group_lanes_, sizeof(float));
    staged_ = b.book_scratch("small_group.staged", cin * staging_.channel_stride, sizeof(float), threads_);
    staged_dy_ = b.book_scratch("small_group.staged_gradOutput", staging_.out_rows * dy_row_, sizeof(float), threads_);
  }
  int64_t tasks() const override { return g_.groups * chunks_; }
  std::string detail() const override { return std::string("isa=") + isa_name(kernels_.isa); }

  int run(const Workspace& w, const StepInputs&) const override {
    int status = prepare(w);
    if (status != ACLNN_SUCCESS) return status;
    status = run_tasks(tasks(), threads_, "small-group gradWeight", [&](int64_t t) {
      chunk(
          w, t / g_.groups, t % g_.groups, [](int64_t) {}, [](int64_t, int64_t) { return PlanesRun{}; });
    });
    return status == ACLNN_SUCCESS ? finish(w) : status;
  }

  // The three parts of run(), for a step that does more in the same tasks (SmallGroupJoint): each
  // thread's staging buffers cleared; task (chunk, group), calling before(n) before each sample's
  // products; the chunks' lanes reduced into the result.
  int prepare(const Workspace& w) const {
    const int64_t cin = g_.src_channels_per_group;
    return run_tasks(threads_, threads_, "small-group gradWeight", [&](int64_t i) {
      staging_.clear(w.at<float>(staged_, i), cin);
      std::fill_n(w.at<float>(staged_dy_, i), staging_.out_rows * dy_row_, 0.0f);
    });
  }
  // Consecutive tasks (chunk, group) read neighbouring slices of the same samples. output_run(n,
  // grp) is the memory slice (n, grp)'s output is written to in place where it is (SmallGroupJoint:
  // its gradInput slice), else an empty run: prefetched too, a store finds its line in L2.
  template <class Before, class OutputRun>
  void chunk(const Workspace& w, int64_t chunk, int64_t grp, Before before, OutputRun output_run) const {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group, taps = g_.kernel_volume();
    float* lanes = w.at<float>(lanes_) + (grp * chunks_ + chunk) * group_lanes_;
    std::fill_n(lanes, group_lanes_, 0.0f);
    float* staged = w.at<float>(staged_, thread_index());
    float* dy = w.at<float>(staged_dy_, thread_index());
    const int64_t n1 = g_.batch * (chunk + 1) / chunks_;
    for (int64_t n = g_.batch * chunk / chunks_; n < n1; ++n) {
      before(n);
      staging_.stage(g_, src_, math_, n, grp * cin, cin, staged, conversions_);
      stage_rows(n, grp * cout, cout, dy);
      // The slices the thread stages the slice after next (kSlicesAhead), read while this one is
      // computed: where each is one run of memory, a part of each run spread over each source
      // channel's products into L2 (not a burst of prefetches before them, each waiting for a free
      // miss buffer), with that slice's output; else the next slice's, in a burst into L1. Two slices
      // ahead, into L2, with the output too, rather than the next slice's inputs alone into L1: a
      // depthwise slice is computed in about the time its inputs take to arrive.
      PlanesRun next_x, next_dy, next_out;
      if (prefetch_next_) {
        const Slice ahead = slice_after({chunk, n, grp}, kSlicesAhead);
        next_x = planes_run(src_, ahead.n, ahead.grp * cin, cin);
        next_dy = planes_run(dst_, ahead.n, ahead.grp * cout, cout);
        if (next_x.at == nullptr || next_dy.at == nullptr) {
          const Slice next = slice_after({chunk, n, grp}, 1);
          prefetch_planes(src_, next.n, next.grp * cin, cin);
          prefetch_planes(dst_, next.n, next.grp * cout, cout);
        } else if (ahead.n < g_.batch) {
          next_out = output_run(ahead.n, ahead.grp);
        }
      }
      for (int64_t c = 0; c < cin; ++c) {
        WeightRows rows{staged + c * staging_.channel_stride,
                        staging_.row_base.data(),
                        staging_.out_rows,
                        staging_.width,
                        staging_.tap.data(),
                        taps,
                        dy,
                        dy_row_,
                        dy_channels_,
                        cout,
                        lanes + c * taps * kRowLanes,
                        cin * taps * kRowLanes};
        staging_.describe_grid(g_, rows);
        if (next_x.at != nullptr && next_dy.at != nullptr) {  // part c of cin of each run
          const PlanesRun* runs[WeightRows::kPrefetchRuns] = {&next_x, &next_dy, &next_out};
          for (int i = 0; i < WeightRows::kPrefetchRuns; ++i) {
            if (runs[i]->at == nullptr) continue;
            const int64_t from = runs[i]->bytes * c / cin, to = runs[i]->bytes * (c + 1) / cin;
            rows.prefetch_from[i] = runs[i]->at + from;
            rows.prefetch_lines[i] = ceil_div(to - from, 64);
          }
        }
        kernels_.weight_rows(rows);
      }
    }
  }
  int finish(const Workspace& w) const {
    const int64_t cin = g_.src_channels_per_group, cout = g_.dst_channels_per_group, taps = g_.kernel_volume();
    float* all_lanes = w.at<float>(lanes_);
    float* grad_weight = output_.data(w);
    const int status = run_tasks(g_.groups, threads_, "small-group gradWeight", [&](int64_t grp) {
      float* sum = all_lanes + grp * chunks_ * group_lanes_;  // chunk 0's lanes
      for (int64_t chunk = 1; chunk < chunks_; ++chunk) {
        const float* more = sum + chunk * group_lanes_;
        for (int64_t i = 0; i < group_lanes_; ++i) sum[i] += more[i];
      }
      // dW[grp*cout + co][c][t] is the entry (co, c, t): lanes in that order.
      for (int64_t e = 0; e < cout * cin * taps; ++e) {
        grad_weight[grp * cout * cin * taps + e] = sum_lanes(sum + e * kRowLanes);
      }
    });
    if (status == ACLNN_SUCCESS) output_.finish(w, threads_);
    return status;
  }

 private:
  static constexpr int kSlicesAhead = 2;
  struct Slice {
    int64_t chunk, n, grp;
  };
  // The slice a thread computes `count` slices after `s`, where the tasks (chunk, group) follow in
  // order: the chunk's next sample, else the next group's first, else the next chunk's first (a
  // sample past the last one after the last slice).
  Slice slice_after(Slice s, int count) const {
    for (int i = 0; i < count; ++i) {
      if (s.n + 1 < g_.batch * (s.chunk + 1) / chunks_) {
        ++s.n;
      } else if (s.grp + 1 < g_.groups) {
        s = {s.chunk, g_.batch * s.chunk / chunks_, s.grp + 1};
      } else {
        s = {s.chunk + 1, g_.batch * (s.chunk + 1) / chunks_, 0};
      }
    }
    return s;
  }

  // The dY rows of channels [c0, c0 + channels) of sample n into `out`, a cleared buffer, in
  // WeightRows' layout: vector j of row r of channel ch at r * dy_row_ + (j * dy_channels_ + ch) * 16
  // (the entries past the width and the slots past the channels stay zero).
  void stage_rows(int64_t n, int64_t c0, int64_t channels, float* out) const {
    const int64_t width = staging_.width, rows_h = g_.dst_size[1];
    const int64_t vector_stride = dy_channels_ * kRowLanes;
    const int64_t depth = g_.dst_size[0];
    // Unit column stride: a plane's rows (every depth's) copied or widened in one call.
    const bool some = dst_.stride[4] == 1 && dst_.data != nullptr && conversions_ != nullptr;
    const bool half_rows = some && (dst_.dtype == ACL_FLOAT16 || dst_.dtype == ACL_BF16) && math_ == MathMode::kFull;
    const bool float_rows = some && dst_.dtype == ACL_FLOAT && math_ != MathMode::kFp16Inputs;
    if (half_rows || float_rows) {
      const int kind = float_rows ? 0 : dst_.dtype == ACL_FLOAT16 ? 1 : 2;
      const auto* data = static_cast<const char*>(dst_.data);
      for (int64_t p = 0; p < channels * depth; ++p) {  // p = (channel, depth)
        const int64_t at = dst_.element(n, c0 + p / depth, p % depth, 0, 0) * (float_rows ? 4 : 2);
        conversions_->rows_to_vectors(data + at, kind, dst_.stride[3], width, rows_h,
                                      out + p % depth * rows_h * dy_row_ + p / depth * kRowLanes, dy_row_,
                                      vector_stride);
      }
      return;
    }
    for (int64_t ch = 0; ch < channels; ++ch) {
      for (int64_t r = 0; r < staging_.out_rows; ++r) {
        float* to = out + r * dy_row_ + ch * kRowLanes;
        for (int64_t w0 = 0; w0 < width; w0 += kRowLanes, to += vector_stride) {
          read_row_floats(dst_, math_, n, c0 + ch, r / rows_h, r % rows_h, w0, 1,
                          std::min<int64_t>(kRowLanes, width - w0), to, conversions_);
        }
      }
    }
  }

  ConvGeometry g_;
  View5 src_, dst_;  // read straight from the user's views
  MathMode math_;
  Staging staging_;
  int threads_;
  const RowKernels& kernels_;
  const Conversions16* conversions_;  // the plan's kit's
  DenseFloatOutput output_;
  int64_t group_lanes_ = 0, chunks_ = 1;
  int64_t dy_channels_ = 1, dy_row_ = 0;  // staged dY: channel slots per vector, floats per row (WeightRows)
  // Whether the next slices are prefetched, a line at a time, while this one is computed: on AMD's
  // cores; on Intel's the burst of prefetches stalls the core (every fill buffer taken).
  bool prefetch_next_;
  WorkspaceLedger::Handle lanes_ = -1, staged_ = -1, staged_dy_ = -1;  // staged: per thread
};

// gradInput and gradWeight in one pass: task (chunk of samples, group) computes, for each sample,
// its gradInput slice, then its weight products. dY, the source of a direct layer's gradInput, is
// staged again for the weights right after, from the cache instead of memory, and the output slice
// is written while the sample's inputs are at hand; the sample's gradBias lanes are taken from the
// staged dY too where they can be (below). Every value is computed as the separate steps compute it
// (each output element inside one task, in the same order): the same bits.
class SmallGroupJoint final : public ConvStep {
 public:
  SmallGroupJoint(const ConvProblem& p, PlanBuilder& b, const SmallGroupDecision& d)
      : input_(p, b, d),
        weight_(p, b),
        groups_(p.geometry.groups),
        channels_(p.geometry.dst_channels_per_group),
        threads_(b.threads()),
        grad_bias_(p.grad_bias) {
    // gradBias too where dY is the gradInput's source (a direct layer) staged as the user's values:
    // each sample's lanes from the staged slice, into N x C x 8 doubles.
    const int64_t samples = p.geometry.batch, channels = p.geometry.groups * p.geometry.dst_channels_per_group;
    if (b.joint_bias_offered && input_.flipped() && input_.stages_whole_source() && p.math == MathMode::kFull &&
        same_view(p.bias_source, p.dst) && double(samples) * double(channels) * 8 * 8 <= double(kLanesBudget)) {
      bias_lanes_ = b.book_scratch("small_group.bias_lanes", samples * channels * 8, sizeof(double));
      samples_ = samples;
      b.joint_bias_taken = true;
    }
  }
  int64_t tasks() const override { return weight_.tasks(); }
  std::string detail() const override { return input_.detail() + (bias_lanes_ >= 0 ? ":joint:bias" : ":joint"); }

  int run(const Workspace& w, const StepInputs& in) const override {
    int status = input_.prepare(w, in);
    if (status == ACLNN_SUCCESS) status = weight_.prepare(w);
    if (status != ACLNN_SUCCESS) return status;
    double* bias_lanes = w.at<double>(bias_lanes_);
    status = run_tasks(tasks(), threads_, "small-group gradients", [&](int64_t t) {
      const int64_t grp = t % groups_;
      weight_.chunk(
          w, t / groups_, grp,
          [&](int64_t n) {
            input_.slice(w, n, grp);
            if (bias_lanes != nullptr) {
              double* lanes = bias_lanes + (n * groups_ + grp) * channels_ * 8;
              std::fill_n(lanes, channels_ * 8, 0.0);
              input_.add_source_lanes(w, n, grp, lanes);
            }
          },
          [&](int64_t n, int64_t g) { return input_.output_run(w, n, g); });
    });
    if (status != ACLNN_SUCCESS) return status;
    input_.finish(w);
    if (bias_lanes != nullptr) store_bias_lanes(bias_lanes, samples_, grad_bias_);
    return weight_.finish(w);
  }

 private:
  static bool same_view(const View5& a, const View5& b) {
    for (int i = 0; i < 5; ++i) {
      if (a.shape[i] != b.shape[i] || a.stride[i] != b.stride[i]) return false;
    }
    return a.data == b.data && a.dtype == b.dtype && a.offset == b.offset;
  }

  SmallGroupInput input_;
  SmallGroupWeight weight_;
  int64_t groups_, channels_;  // dY's channels per group
  int threads_;
  View5 grad_bias_;
  int64_t samples_ = 0;
  WorkspaceLedger::Handle bias_lanes_ = -1;  // each sample's gradBias lanes, N x C x 8
};

// gradInput: a transposed layer's forward convolution, or a stride-1 direct layer's flipped one.
Support supports_input(const ConvProblem& p, const CpuFeatures& cpu) {
  if (p.input_grad != InputGrad::kForward && !flippable(p.geometry))
    return refuse("not stride 1 with padding within the kernel");
  const ConvGeometry g = p.input_grad == InputGrad::kForward ? p.geometry : flipped_geometry(p.geometry);
  if (!small_enough(g, g.src_channels_per_group)) return refuse(kNotSmallEnough);
  return supported_as(decide_input(p, cpu));
}
// The decision plan_input and plan_joint book: the one handed over (a plan always hands it), else decided here.
SmallGroupDecision input_decision(const ConvProblem& p, const PlanBuilder& builder) {
  const SmallGroupDecision* decided = builder.decided<SmallGroupDecision>();
  return decided != nullptr ? *decided : decide_input(p, builder.cpu());
}
Support supports_weight(const ConvProblem& p, const CpuFeatures&) {
  const ConvGeometry& g = p.geometry;
  const double staged_dy = std::ceil(std::max(1.0, double(g.dst_channels_per_group)) / 8) * 8 *  // slots, at most
                           double(g.dst_size[0]) * double(g.dst_size[1]) *
                           (double(g.dst_size[2]) + kRowLanes);  // dY rows rounded up to whole vectors
  if (!small_enough(g, g.src_channels_per_group)) return refuse(kNotSmallEnough);
  if (staged_dy * 4 > double(kStagingBudget)) return refuse("staged gradOutput past the budget");
  if (double(g.groups) * double(g.dst_channels_per_group * g.src_channels_per_group) * double(g.kernel_volume()) *
          kRowLanes * 4 >
      double(kLanesBudget))
    return refuse("lanes past the budget");
  return kSupported;
}

std::unique_ptr<ConvStep> plan_input(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<SmallGroupInput>(p, builder, input_decision(p, builder));
}
std::unique_ptr<ConvStep> plan_weight(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<SmallGroupWeight>(p, builder);
}
std::unique_ptr<ConvStep> plan_joint(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<SmallGroupJoint>(p, builder, input_decision(p, builder));
}

}  // namespace

extern const ConvImpl kSmallGroupBackwardWeight = {"small_group", "small_group", ConvPass::kBackwardWeight,
                                                   supports_weight, plan_weight};
extern const ConvImpl kSmallGroupBackwardData = [] {
  ConvImpl impl{"small_group", "small_group", ConvPass::kBackwardData, supports_input, plan_input};
  impl.joint_weight = &kSmallGroupBackwardWeight;
  impl.plan_joint = plan_joint;
  return impl;
}();
extern const ConvImpl kSmallGroupForward = for_pass(kSmallGroupBackwardData, ConvPass::kForward);

}  // namespace aclnn_cpu
