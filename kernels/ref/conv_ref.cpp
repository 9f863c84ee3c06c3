// The reference implementations: gather-form loops in double precision over the user's views. Each
// task forms one channel of the result (gradInput: a sample's plane; gradWeight: a row) from the
// planes it reads, each packed in turn into its thread's scratch (no copy of whole tensors). They
// are last in every implementation list and the oracle of every other entry; restricted to some
// channels they also repair the other entries' non-finite results (conv_ref.h). Every output
// element is one task's, summed in a fixed order: bit-identical for any thread count. Clarity
// over speed.
#include "kernels/ref/conv_ref.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "common/dtype.h"
#include "kernels/common/finite.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/plan.h"

namespace aclnn_cpu {
namespace {

// Along one spatial axis, kernel tap `k` connects a position of one tensor with `pos` of the other.
struct Tap {
  int64_t k;
  int64_t pos;
};

// Along one axis, each position's taps in order, worked out per position in a few integer operations
// (nothing stored: phase 1 of every plan books the reference as its non-finite repair, and a table per
// position would cost a plan of many positions an allocation and its page faults):
//   forward (of dst position o): the taps (k, i), i = o*s - p + k*d inside [0, src), k ascending (one
//     run of k);
//   backward (of src position i): the taps (k, o), o*s = i + p - k*d with o inside [0, dst), o ascending:
//     k descending through the k with k*d = i + p (mod s), one every s / gcd(s, d).
class AxisTaps {
 public:
  // One position's taps: `count` of them, the first `first`, each next k + k_step, pos + pos_step.
  struct Range {
    struct Iterator {
      Tap tap;
      int64_t left, k_step, pos_step;
      Tap operator*() const { return tap; }
      Iterator& operator++() {
        tap.k += k_step, tap.pos += pos_step, --left;
        return *this;
      }
      bool operator!=(const Iterator& other) const { return left != other.left; }
    };
    Tap first{0, 0};
    int64_t count = 0, k_step = 0, pos_step = 0;
    Iterator begin() const { return {first, count, k_step, pos_step}; }
    Iterator end() const { return {first, 0, k_step, pos_step}; }
  };
  Range operator[](int64_t position) const { return by_source_ ? from_source(position) : from_destination(position); }

  static AxisTaps forward(const ConvGeometry& g, int axis) { return AxisTaps(g, axis, false); }
  static AxisTaps backward(const ConvGeometry& g, int axis) { return AxisTaps(g, axis, true); }
  AxisTaps() = default;

 private:
  AxisTaps(const ConvGeometry& g, int axis, bool by_source)
      : by_source_(by_source),
        kernel_(g.kernel[axis]),
        stride_(g.stride[axis]),
        pad_(g.pad[axis]),
        dilation_(g.dilation[axis]),
        other_(by_source ? g.dst_size[axis] : g.src_size[axis]),
        // (backward: the k with k*d = a (mod s) come every s / gcd(s, d)-th)
        period_(stride_ / std::gcd(stride_, dilation_)) {}
  static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }  // (b > 0)
  static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

  Range from_destination(int64_t o) const {
    const int64_t base = o * stride_ - pad_;  // (i at k = 0)
    const int64_t lo = std::max<int64_t>(0, ceil_div(-base, dilation_));
    const int64_t hi = std::min(kernel_ - 1, floor_div(other_ - 1 - base, dilation_));
    if (hi < lo) return {};
    return {{lo, base + lo * dilation_}, hi - lo + 1, 1, dilation_};
  }
  Range from_source(int64_t i) const {
    const int64_t a = i + pad_;                                                                    // o*s + k*d
    const int64_t top = std::min(kernel_ - 1, floor_div(a, dilation_));                            // (o >= 0)
    const int64_t bottom = std::max<int64_t>(0, ceil_div(a - (other_ - 1) * stride_, dilation_));  // (o < dst)
    // The first k from the top whose o is whole (within a period of it, if any), then every period-th.
    for (int64_t k = top; k >= bottom && top - k < period_; --k) {
      if ((a - k * dilation_) % stride_ != 0) continue;
      return {
          {k, (a - k * dilation_) / stride_}, (k - bottom) / period_ + 1, -period_, dilation_ / (stride_ / period_)};
    }
    return {};
  }

  bool by_source_ = false;
  int64_t kernel_ = 0, stride_ = 1, pad_ = 0, dilation_ = 1;
  int64_t other_ = 0;   // the size of the axis the taps reach
  int64_t period_ = 1;  // (backward: s / gcd(s, d), the step between two taps' k)
};

// The reference's loops over one problem's views. Each forms one task's outputs from the planes it
// reads, packed one at a time into its thread's scratch (`scratch_doubles()` doubles): the same
// values, summed in the same order, as over dense double copies of whole tensors.
class RefLoops {
 public:
  explicit RefLoops(const ConvProblem& p)
      : g_(p.geometry),
        src_(p.src),
        wei_(p.wei),
        dst_(p.dst),
        bias_(p.grad_input_bias),
        has_bias_(p.add_grad_input_bias),
        math_(p.math) {
    for (int axis = 0; axis < 3; ++axis)
      forward_[axis] = AxisTaps::forward(g_, axis), backward_[axis] = AxisTaps::backward(g_, axis);
  }
  // An input plane of each kind and a weight row's doubles (saturating: the ledger refuses it).
  uint64_t scratch_doubles() const {
    uint64_t total = 0;
    const int64_t parts[3] = {g_.src_plane(), g_.dst_plane(), g_.src_channels_per_group * g_.kernel_volume()};
    for (int64_t part : parts) {
      if (__builtin_add_overflow(total, static_cast<uint64_t>(part), &total)) return UINT64_MAX;
    }
    return total;
  }

  // Plane (n, c) of a result that gathers from `role`'s input through the weight: forward (a
  // transposed layer's gradInput) and backward-data are one convolution with the roles swapped.
  //   forward:       out[n, co, o] = sum_{ic, k} src[n, g*Cin_g + ic, i(o, k)] * wei[co, ic, k]
  //   backward-data: out[n, ci, i] = sum_{oc, k: o(i, k) valid} dst[n, g*Cout_g + oc, o] * wei[g*Cout_g + oc, ic, k]
  //                  with ic = ci % Cin_g
  enum class Role { kForward, kBackwardData };
  void gather_plane(Role role, double* scratch, int64_t n, int64_t c, const View5& out) const {
    const bool forward = role == Role::kForward;
    const View5& in_view = forward ? src_ : dst_;
    const int64_t(&in_size)[3] = forward ? g_.src_size : g_.dst_size;
    const int64_t(&out_size)[3] = forward ? g_.dst_size : g_.src_size;
    const AxisTaps(&taps)[3] = forward ? forward_ : backward_;
    const int64_t reads = forward ? g_.src_channels_per_group : g_.dst_channels_per_group;
    const int64_t out_per_group = forward ? g_.dst_channels_per_group : g_.src_channels_per_group;
    const int64_t group = c / out_per_group;
    double* in = scratch;
    double* sums = in + plane(in_size);
    double* w = sums + plane(out_size);
    // (the forward operators' bias first: it is part of the one double sum)
    std::fill(sums, sums + plane(out_size),
              has_bias_ ? load_element(bias_.data, bias_.dtype, bias_.element(0, c, 0, 0, 0)) : 0.0);
    for (int64_t r = 0; r < reads; ++r) {
      // The channel read and the weight entry (co, ic) joining it with out's channel c.
      const int64_t in_channel = group * reads + r;
      const int64_t co = forward ? c : in_channel, ic = forward ? r : c % out_per_group;
      pack_plane(in_view, math_, n, in_channel, in);
      pack_plane(wei_, math_, co, ic, w);
      each_position(out_size, [&](int64_t o, int64_t od, int64_t oh, int64_t ow) {
        double sum = sums[o];
        const AxisTaps::Range rows = taps[1][oh], columns = taps[2][ow];
        for (const Tap d : taps[0][od]) {
          for (const Tap h : rows) {
            for (const Tap t : columns) sum += in[index(in_size, d.pos, h.pos, t.pos)] * w[tap(d.k, h.k, t.k)];
          }
        }
        sums[o] = sum;
      });
    }
    store_plane(sums, out_size, out, n, c);
  }

  // out[co, ic, k] = sum_{n, o: i(o, k) valid} dst[n, co, o] * src[n, g*Cin_g + ic, i(o, k)]: row co of
  // out (every ic and k).
  void weight_row(double* scratch, int64_t co, const View5& out) const {
    const int64_t taps = g_.kernel_volume();
    double* x = scratch;
    double* y = x + g_.src_plane();
    double* sums = y + g_.dst_plane();  // [ic][k]
    std::fill(sums, sums + g_.src_channels_per_group * taps, 0.0);
    const int64_t first_src_channel = co / g_.dst_channels_per_group * g_.src_channels_per_group;
    for (int64_t n = 0; n < g_.batch; ++n) {
      pack_plane(dst_, math_, n, co, y);
      for (int64_t ic = 0; ic < g_.src_channels_per_group; ++ic) {
        pack_plane(src_, math_, n, first_src_channel + ic, x);
        double* row = sums + ic * taps;
        each_position(g_.dst_size, [&](int64_t o, int64_t od, int64_t oh, int64_t ow) {
          const double dy = y[o];
          const AxisTaps::Range rows = forward_[1][oh], columns = forward_[2][ow];
          for (const Tap d : forward_[0][od]) {
            for (const Tap h : rows) {
              for (const Tap t : columns) row[tap(d.k, h.k, t.k)] += dy * x[index(g_.src_size, d.pos, h.pos, t.pos)];
            }
          }
        });
      }
    }
    for (int64_t ic = 0; ic < g_.src_channels_per_group; ++ic) {
      for (int64_t kd = 0; kd < g_.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g_.kernel[1]; ++kh) {
          for (int64_t kw = 0; kw < g_.kernel[2]; ++kw) {
            store_element(out.data, out.dtype, out.element(co, ic, kd, kh, kw), sums[ic * taps + tap(kd, kh, kw)]);
          }
        }
      }
    }
  }

  const ConvGeometry& geometry() const { return g_; }

 private:
  template <typename Body>
  static void each_position(const int64_t (&size)[3], Body body) {
    int64_t at = 0;
    for (int64_t d = 0; d < size[0]; ++d) {
      for (int64_t h = 0; h < size[1]; ++h) {
        for (int64_t w = 0; w < size[2]; ++w) body(at++, d, h, w);
      }
    }
  }
  static void store_plane(const double* sums, const int64_t (&size)[3], const View5& out, int64_t n, int64_t c) {
    each_position(size, [&](int64_t at, int64_t d, int64_t h, int64_t w) {
      store_element(out.data, out.dtype, out.element(n, c, d, h, w), sums[at]);
    });
  }
  static int64_t plane(const int64_t (&size)[3]) { return size[0] * size[1] * size[2]; }
  static int64_t index(const int64_t (&size)[3], int64_t d, int64_t h, int64_t w) {
    return (d * size[1] + h) * size[2] + w;
  }
  int64_t tap(int64_t d, int64_t h, int64_t w) const { return (d * g_.kernel[1] + h) * g_.kernel[2] + w; }

  ConvGeometry g_;
  View5 src_, wei_, dst_, bias_;
  bool has_bias_;
  MathMode math_;
  AxisTaps forward_[3], backward_[3];  // per axis
};

// --- The reference steps ---------------------------------------------------------------------

// Where a step writes its output: the user's view, or (a view that may overlap itself) a dense
// double copy in the workspace, stored into the view afterwards in the user's dim order.
class RefOutput {
 public:
  RefOutput(const View5& view, PlanBuilder& b, const char* region_name) : view_(view) {
    if (may_overlap(view)) staged_ = b.book_scratch(region_name, static_cast<uint64_t>(view.numel()), sizeof(double));
  }
  View5 target(const Workspace& w) const {
    if (staged_ < 0) return view_;
    View5 dense = view_;
    dense.data = w.at<double>(staged_);
    dense.dtype = ACL_DOUBLE;
    dense.offset = 0;
    int64_t step = 1;
    for (int i = 4; i >= 0; --i) {
      dense.stride[i] = step;
      step *= view_.shape[i];
    }
    return dense;
  }
  void finish(const Workspace& w, int threads) const {
    if (staged_ >= 0) store_dense(w.at<double>(staged_), view_, threads, nullptr);  // (doubles: no kit conversions)
  }
  bool staged() const { return staged_ >= 0; }

 private:
  View5 view_;
  WorkspaceLedger::Handle staged_ = -1;
};

// gradInput or gradWeight as the reference computes it: per channel of the result (gradInput: each
// sample's plane of it; gradWeight: its row), for every channel or for those a mask marks.
class RefResult {
 public:
  RefResult(ConvPass pass, const ConvProblem& p, PlanBuilder& b)
      : weight_(pass == ConvPass::kBackwardWeight),
        forward_(p.input_grad == InputGrad::kForward),
        loops_(p),
        out_(weight_ ? p.grad_weight : p.grad_input, b, "ref.result"),
        threads_(b.threads()) {
    scratch_ = b.book_scratch("ref.scratch", loops_.scratch_doubles(), sizeof(double), threads_);
  }
  // The result's channels: gradWeight's rows (dY's channels), gradInput's channels.
  int64_t channels() const {
    const ConvGeometry& g = loops_.geometry();
    return g.groups * (weight_ || forward_ ? g.dst_channels_per_group : g.src_channels_per_group);
  }
  int64_t tasks() const { return weight_ ? channels() : loops_.geometry().batch * channels(); }
  bool staged() const { return out_.staged(); }

  // Computes the channels c with mask[c] != 0, or every one where mask is null. (A staged result
  // is stored whole afterwards: computed whole.)
  int run(const Workspace& w, const unsigned char* mask) const {
    const View5 out = out_.target(w);
    const int64_t channels = this->channels();
    const int status = run_tasks(tasks(), threads_, "reference", [&](int64_t t) {
      const int64_t n = t / channels, c = t % channels;
      if (mask != nullptr && mask[c] == 0) return;
      double* scratch = w.at<double>(scratch_, thread_index());
      if (weight_) {
        loops_.weight_row(scratch, c, out);
      } else {
        loops_.gather_plane(forward_ ? RefLoops::Role::kForward : RefLoops::Role::kBackwardData, scratch, n, c, out);
      }
    });
    if (status == ACLNN_SUCCESS) out_.finish(w, threads_);
    return status;
  }

 private:
  bool weight_, forward_;
  RefLoops loops_;
  RefOutput out_;
  int threads_;
  WorkspaceLedger::Handle scratch_ = -1;  // per thread
};

template <ConvPass kPass>
class RefStep final : public ConvStep {
 public:
  RefStep(const ConvProblem& p, PlanBuilder& b) : ref_(kPass, p, b) {}
  int64_t tasks() const override { return ref_.tasks(); }
  int run(const Workspace& w, const StepInputs&) const override { return ref_.run(w, nullptr); }

 private:
  RefResult ref_;
};

// The non-finite repair (conv_ref.h): which channels of the result another entry computed may hold
// a NaN the reference would not, then those computed again as the reference does.
class NonFiniteRepair final : public ConvStep {
 public:
  NonFiniteRepair(ConvPass pass, const ConvProblem& p, PlanBuilder& b)
      : weight_(pass == ConvPass::kBackwardWeight),
        forward_(p.input_grad == InputGrad::kForward),
        g_(p.geometry),
        wei_(p.wei),
        dst_(p.dst),
        grad_weight_(p.grad_weight),
        math_(p.math),
        threads_(b.threads()),
        tested_(weight_ ? PlanBuilder::WeightsTested{} : b.weights_tested),
        source_tested_(weight_ ? PlanBuilder::SourceTested{} : b.source_tested),
        ref_(pass, p, b) {
    rows_ = b.book_scratch("repair.rows", static_cast<uint64_t>(g_.groups * g_.dst_channels_per_group), 1);
    marked_ = b.book_scratch("repair.channels", static_cast<uint64_t>(ref_.channels()), 1);
  }
  int64_t tasks() const override { return g_.groups * g_.dst_channels_per_group; }

  int run(const Workspace& w, const StepInputs&) const override {
    const auto all_one = [&w](WorkspaceLedger::Handle flags, int64_t count) {
      const unsigned char* f = w.at<unsigned char>(flags);
      return std::all_of(f, f + count, [](unsigned char x) { return x == 1; });
    };
    const auto recompute_all = [&] {
      unsigned char* marked = w.at<unsigned char>(marked_);
      std::fill(marked, marked + ref_.channels(), 1);
      return ref_.run(w, marked);
    };
    // (a source Inf or NaN may have reached every output)
    if (source_tested_.flags >= 0 && !all_one(source_tested_.flags, source_tested_.count)) return recompute_all();
    if (tested_.flags >= 0) {  // gradInput's step found W all finite as it packed it: nothing to repair
      if (all_one(tested_.flags, tested_.count)) return ACLNN_SUCCESS;
      if (tested_.transformed) return recompute_all();  // (W's own values cannot say where a 0 came from)
    }
    const int64_t rows = g_.groups * g_.dst_channels_per_group, cin = g_.src_channels_per_group;
    unsigned char* suspect = w.at<unsigned char>(rows_);  // per row co of W (gradInput) or of dW
    int status = run_tasks(rows, threads_, "non-finite repair", [&](int64_t co) { suspect[co] = !row_finite(co); });
    if (status != ACLNN_SUCCESS) return status;
    unsigned char* marked = w.at<unsigned char>(marked_);
    std::fill(marked, marked + ref_.channels(), 0);
    bool any = false;
    for (int64_t co = 0; co < rows; ++co) {
      if (suspect[co] == 0) continue;
      any = true;
      if (weight_ || forward_) {
        marked[co] = 1;  // dW's row co; a transposed layer's gradInput channel co
        continue;
      }
      const int64_t first = co / g_.dst_channels_per_group * cin;  // gradInput channels W's row co feeds
      for (int64_t ic = 0; ic < cin; ++ic) marked[first + ic] |= !all_finite(wei_, math_, co, ic, 1);
    }
    if (!any) return ACLNN_SUCCESS;
    if (ref_.staged()) std::fill(marked, marked + ref_.channels(), 1);
    return ref_.run(w, marked);
  }

 private:
  // Whether row co is free of Inf and NaN: W's row (gradInput), dW's (gradWeight), or, where dW's
  // view overlaps itself and cannot be read back, dY's channel co.
  bool row_finite(int64_t co) const {
    if (!weight_) return all_finite(wei_, math_, co, 0, g_.src_channels_per_group);
    if (!may_overlap(grad_weight_)) return all_finite(grad_weight_, MathMode::kFull, co, 0, g_.src_channels_per_group);
    for (int64_t n = 0; n < g_.batch; ++n) {
      if (!all_finite(dst_, math_, n, co, 1)) return false;
    }
    return true;
  }

  bool weight_, forward_;
  ConvGeometry g_;
  View5 wei_, dst_, grad_weight_;
  MathMode math_;
  int threads_;
  PlanBuilder::WeightsTested tested_;        // gradInput: what its step found of W as it packed it, where it tested
  PlanBuilder::SourceTested source_tested_;  // gradInput: what its step found of its source, where it tested
  RefResult ref_;
  WorkspaceLedger::Handle rows_ = -1, marked_ = -1;
};

// gradBias[c] = sum over n, then space, of gradOutput in double, in storage-independent order.
class RefBias final : public ConvStep {
 public:
  // A gradBias that may overlap itself is written by one thread, in channel order.
  RefBias(const ConvProblem& p, PlanBuilder& b)
      : dy_(p.bias_source), out_(p.grad_bias), threads_(may_overlap(p.grad_bias) ? 1 : b.threads()) {}
  int64_t tasks() const override { return dy_.shape[1]; }
  int run(const Workspace&, const StepInputs&) const override {
    (void)threads_;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t c = 0; c < dy_.shape[1]; ++c) {
      double sum = 0.0;
      for (int64_t n = 0; n < dy_.shape[0]; ++n) {
        for (int64_t d = 0; d < dy_.shape[2]; ++d) {
          for (int64_t h = 0; h < dy_.shape[3]; ++h) {
            for (int64_t w = 0; w < dy_.shape[4]; ++w)
              sum += load_element(dy_.data, dy_.dtype, dy_.element(n, c, d, h, w));
          }
        }
      }
      store_element(out_.data, out_.dtype, out_.element(0, c, 0, 0, 0), sum);
    }
    return ACLNN_SUCCESS;
  }

 private:
  View5 dy_, out_;
  int threads_;
};

Support supports_everything(const ConvProblem&, const CpuFeatures&) { return kSupported; }

template <typename Step>
std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<Step>(p, builder);
}

}  // namespace

std::unique_ptr<ConvStep> plan_non_finite_repair(ConvPass pass, const ConvProblem& problem, PlanBuilder& builder) {
  return std::make_unique<NonFiniteRepair>(pass, problem, builder);
}

// The reference computes no product with padding: it needs no repair.
namespace {
template <ConvPass kPass, typename Step>
constexpr ConvImpl reference_entry() {
  ConvImpl impl{"ref", "ref", kPass, supports_everything, plan<Step>};
  impl.multiplies_padding = false;
  return impl;
}
}  // namespace
extern const ConvImpl kReferenceForward = reference_entry<ConvPass::kForward, RefStep<ConvPass::kForward>>();
extern const ConvImpl kReferenceBackwardData =
    reference_entry<ConvPass::kBackwardData, RefStep<ConvPass::kBackwardData>>();
extern const ConvImpl kReferenceBackwardWeight =
    reference_entry<ConvPass::kBackwardWeight, RefStep<ConvPass::kBackwardWeight>>();
extern const ConvImpl kReferenceBias = reference_entry<ConvPass::kBias, RefBias>();

}  // namespace aclnn_cpu
