// The reference implementations: gather-form loops in double precision over dense copies of the
// inputs. They are last in every implementation list and the oracle of every other entry.
// Every output element is computed by one thread in a fixed order, so results are bit-identical
// for any thread count. Clarity over speed; the outer loops run in parallel with OpenMP.
#include <algorithm>
#include <memory>
#include <vector>

#include "common/dtype.h"
#include "kernels/common/pack.h"
#include "kernels/conv_problem.h"
#include "kernels/gemm/tasks.h"
#include "kernels/plan.h"

namespace aclnn_cpu {
namespace {

// Along one spatial axis, kernel tap `k` connects a position of one tensor with `pos` of the other.
struct Tap {
  int64_t k;
  int64_t pos;
};
using TapTable = std::vector<std::vector<Tap>>;  // indexed by position

// For each dst position o: the taps (k, i) with i = o*s - p + k*d inside [0, src).
TapTable forward_taps(const ConvGeometry& g, int axis) {
  TapTable table(static_cast<size_t>(g.dst_size[axis]));
  for (int64_t o = 0; o < g.dst_size[axis]; ++o) {
    for (int64_t k = 0; k < g.kernel[axis]; ++k) {
      const int64_t i = o * g.stride[axis] - g.pad[axis] + k * g.dilation[axis];
      if (i >= 0 && i < g.src_size[axis]) table[static_cast<size_t>(o)].push_back({k, i});
    }
  }
  return table;
}

// For each src position i: the taps (k, o) with o*s - p + k*d = i, o inside [0, dst).
TapTable backward_taps(const ConvGeometry& g, int axis) {
  TapTable table(static_cast<size_t>(g.src_size[axis]));
  const TapTable forward = forward_taps(g, axis);
  for (int64_t o = 0; o < g.dst_size[axis]; ++o) {
    for (const Tap& tap : forward[static_cast<size_t>(o)]) {
      table[static_cast<size_t>(tap.pos)].push_back({tap.k, o});
    }
  }
  return table;
}

// The tap tables of the three axes, built at phase 1.
struct Taps {
  TapTable d, h, w;
};

struct Sizes {
  int64_t src_channels, dst_channels, src_spatial, dst_spatial, kernel_volume;
  explicit Sizes(const ConvGeometry& g)
      : src_channels(g.groups * g.src_channels_per_group),
        dst_channels(g.groups * g.dst_channels_per_group),
        src_spatial(g.src_plane()),
        dst_spatial(g.dst_plane()),
        kernel_volume(g.kernel_volume()) {}
};

// out[n, co, o] = sum_{ic, k} src[n, g*Cin_g + ic, i(o, k)] * wei[co, ic, k]
void forward(const ConvGeometry& g, const Taps& taps, const double* src, const double* wei, const View5& out,
             int threads) {
  (void)threads;  // used by OpenMP only
  const Sizes z(g);
  const TapTable &td = taps.d, &th = taps.h, &tw = taps.w;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < z.dst_channels; ++co) {
      const int64_t first_src_channel = co / g.dst_channels_per_group * g.src_channels_per_group;
      for (int64_t od = 0; od < g.dst_size[0]; ++od) {
        for (int64_t oh = 0; oh < g.dst_size[1]; ++oh) {
          for (int64_t ow = 0; ow < g.dst_size[2]; ++ow) {
            double sum = 0.0;
            for (int64_t ic = 0; ic < g.src_channels_per_group; ++ic) {
              const double* x = src + (n * z.src_channels + first_src_channel + ic) * z.src_spatial;
              const double* w = wei + (co * g.src_channels_per_group + ic) * z.kernel_volume;
              for (const Tap& d : td[od]) {
                for (const Tap& h : th[oh]) {
                  for (const Tap& t : tw[ow]) {
                    sum += x[(d.pos * g.src_size[1] + h.pos) * g.src_size[2] + t.pos] *
                           w[(d.k * g.kernel[1] + h.k) * g.kernel[2] + t.k];
                  }
                }
              }
            }
            store_element(out.data, out.dtype, out.element(n, co, od, oh, ow), sum);
          }
        }
      }
    }
  }
}

// out[n, ci, i] = sum_{oc, k: o(i, k) valid} dst[n, g*Cout_g + oc, o] * wei[g*Cout_g + oc, ci - g*Cin_g, k]
void backward_data(const ConvGeometry& g, const Taps& taps, const double* dst, const double* wei, const View5& out,
                   int threads) {
  (void)threads;  // used by OpenMP only
  const Sizes z(g);
  const TapTable &td = taps.d, &th = taps.h, &tw = taps.w;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ci = 0; ci < z.src_channels; ++ci) {
      const int64_t group = ci / g.src_channels_per_group;
      const int64_t ic = ci % g.src_channels_per_group;
      for (int64_t id = 0; id < g.src_size[0]; ++id) {
        for (int64_t ih = 0; ih < g.src_size[1]; ++ih) {
          for (int64_t iw = 0; iw < g.src_size[2]; ++iw) {
            double sum = 0.0;
            for (int64_t oc = 0; oc < g.dst_channels_per_group; ++oc) {
              const int64_t co = group * g.dst_channels_per_group + oc;
              const double* y = dst + (n * z.dst_channels + co) * z.dst_spatial;
              const double* w = wei + (co * g.src_channels_per_group + ic) * z.kernel_volume;
              for (const Tap& d : td[id]) {
                for (const Tap& h : th[ih]) {
                  for (const Tap& t : tw[iw]) {
                    sum += y[(d.pos * g.dst_size[1] + h.pos) * g.dst_size[2] + t.pos] *
                           w[(d.k * g.kernel[1] + h.k) * g.kernel[2] + t.k];
                  }
                }
              }
            }
            store_element(out.data, out.dtype, out.element(n, ci, id, ih, iw), sum);
          }
        }
      }
    }
  }
}

// out[co, ic, k] = sum_{n, o: i(o, k) valid} dst[n, co, o] * src[n, g*Cin_g + ic, i(o, k)]
// `sums_of(thread)`: kernel_volume doubles of scratch for that thread.
template <typename Scratch>
void backward_weight(const ConvGeometry& g, const Taps& taps, const double* src, const double* dst, const View5& out,
                     int threads, Scratch sums_of) {
  (void)threads;
  const Sizes z(g);
  const TapTable &td = taps.d, &th = taps.h, &tw = taps.w;
#pragma omp parallel num_threads(threads)
  {
    double* sums = sums_of(thread_index());
#pragma omp for collapse(2) schedule(static)
    for (int64_t co = 0; co < z.dst_channels; ++co) {
      for (int64_t ic = 0; ic < g.src_channels_per_group; ++ic) {
        const int64_t src_channel = co / g.dst_channels_per_group * g.src_channels_per_group + ic;
        std::fill(sums, sums + z.kernel_volume, 0.0);
        for (int64_t n = 0; n < g.batch; ++n) {
          const double* y = dst + (n * z.dst_channels + co) * z.dst_spatial;
          const double* x = src + (n * z.src_channels + src_channel) * z.src_spatial;
          for (int64_t od = 0; od < g.dst_size[0]; ++od) {
            for (int64_t oh = 0; oh < g.dst_size[1]; ++oh) {
              for (int64_t ow = 0; ow < g.dst_size[2]; ++ow) {
                const double dy = y[(od * g.dst_size[1] + oh) * g.dst_size[2] + ow];
                for (const Tap& d : td[od]) {
                  for (const Tap& h : th[oh]) {
                    for (const Tap& t : tw[ow]) {
                      sums[((d.k * g.kernel[1] + h.k) * g.kernel[2] + t.k)] +=
                          dy * x[(d.pos * g.src_size[1] + h.pos) * g.src_size[2] + t.pos];
                    }
                  }
                }
              }
            }
          }
        }
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
              store_element(out.data, out.dtype, out.element(co, ic, kd, kh, kw),
                            sums[((kd * g.kernel[1] + kh) * g.kernel[2] + kw)]);
            }
          }
        }
      }
    }
  }
}

// --- The reference steps: inputs as dense doubles, tap tables built at phase 1 ---------------

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
    if (staged_ >= 0) store_dense(w.at<double>(staged_), view_, threads);
  }

 private:
  View5 view_;
  WorkspaceLedger::Handle staged_ = -1;
};

class RefInputGrad final : public ConvStep {
 public:
  RefInputGrad(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry),
        forward_(p.input_grad == InputGrad::kForward),
        out_(p.grad_input, b, "ref.grad_input"),
        threads_(b.threads()) {
    for (int axis = 0; axis < 3; ++axis) {
      (axis == 0   ? taps_.d
       : axis == 1 ? taps_.h
                   : taps_.w) = forward_ ? forward_taps(g_, axis) : backward_taps(g_, axis);
    }
    b.need_double_inputs(forward_, true, !forward_);
  }
  int64_t tasks() const override {
    return g_.batch * g_.groups * (forward_ ? g_.dst_channels_per_group : g_.src_channels_per_group);
  }
  int run(const Workspace& w, const StepInputs& in) const override {
    if (forward_) {
      forward(g_, taps_, in.f64.src, in.f64.wei, out_.target(w), threads_);
    } else {
      backward_data(g_, taps_, in.f64.dst, in.f64.wei, out_.target(w), threads_);
    }
    out_.finish(w, threads_);
    return ACLNN_SUCCESS;
  }

 private:
  ConvGeometry g_;
  bool forward_;
  Taps taps_;
  RefOutput out_;
  int threads_;
};

class RefWeightGrad final : public ConvStep {
 public:
  RefWeightGrad(const ConvProblem& p, PlanBuilder& b)
      : g_(p.geometry), out_(p.grad_weight, b, "ref.grad_weight"), threads_(b.threads()) {
    taps_ = {forward_taps(g_, 0), forward_taps(g_, 1), forward_taps(g_, 2)};
    sums_ = b.book_scratch("ref.sums", static_cast<uint64_t>(g_.kernel_volume()), sizeof(double), threads_);
    b.need_double_inputs(true, false, true);
  }
  int64_t tasks() const override { return g_.groups * g_.dst_channels_per_group * g_.src_channels_per_group; }
  int run(const Workspace& w, const StepInputs& in) const override {
    backward_weight(g_, taps_, in.f64.src, in.f64.dst, out_.target(w), threads_,
                    [&](int thread) { return w.at<double>(sums_, thread); });
    out_.finish(w, threads_);
    return ACLNN_SUCCESS;
  }

 private:
  ConvGeometry g_;
  Taps taps_;
  RefOutput out_;
  int threads_;
  WorkspaceLedger::Handle sums_ = -1;
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

bool supports_everything(const ConvProblem&) { return true; }

template <typename Step>
std::unique_ptr<ConvStep> plan(const ConvProblem& p, PlanBuilder& builder) {
  return std::make_unique<Step>(p, builder);
}

}  // namespace

extern const ConvImpl kReferenceInputGrad = {"ref", Gradient::kInput, supports_everything, plan<RefInputGrad>};
extern const ConvImpl kReferenceWeightGrad = {"ref", Gradient::kWeight, supports_everything, plan<RefWeightGrad>};
extern const ConvImpl kReferenceBias = {"ref", Gradient::kBias, supports_everything, plan<RefBias>};

}  // namespace aclnn_cpu
