// Reference kernel set: gather-form loops in double precision over dense copies of the inputs.
// Every output element is computed by one thread in a fixed order, so results are bit-identical
// for any thread count. Clarity over speed; the outer loops run in parallel with OpenMP.
#include <algorithm>
#include <vector>

#include "common/dtype.h"
#include "kernels/common/pack.h"
#include "kernels/conv_problem.h"

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
void forward(const ConvGeometry& g, const double* src, const double* wei, const View5& out) {
  const Sizes z(g);
  const TapTable td = forward_taps(g, 0), th = forward_taps(g, 1), tw = forward_taps(g, 2);
#pragma omp parallel for collapse(2) schedule(static)
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
void backward_data(const ConvGeometry& g, const double* dst, const double* wei, const View5& out) {
  const Sizes z(g);
  const TapTable td = backward_taps(g, 0), th = backward_taps(g, 1), tw = backward_taps(g, 2);
#pragma omp parallel for collapse(2) schedule(static)
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
void backward_weight(const ConvGeometry& g, const double* src, const double* dst, const View5& out) {
  const Sizes z(g);
  const TapTable td = forward_taps(g, 0), th = forward_taps(g, 1), tw = forward_taps(g, 2);
#pragma omp parallel
  {
    std::vector<double> sums(static_cast<size_t>(z.kernel_volume));  // one per thread
#pragma omp for collapse(2) schedule(static)
    for (int64_t co = 0; co < z.dst_channels; ++co) {
      for (int64_t ic = 0; ic < g.src_channels_per_group; ++ic) {
        const int64_t src_channel = co / g.dst_channels_per_group * g.src_channels_per_group + ic;
        std::fill(sums.begin(), sums.end(), 0.0);
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
                      sums[static_cast<size_t>((d.k * g.kernel[1] + h.k) * g.kernel[2] + t.k)] +=
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
                            sums[static_cast<size_t>((kd * g.kernel[1] + kh) * g.kernel[2] + kw)]);
            }
          }
        }
      }
    }
  }
}

uint64_t dense_bytes(const View5& view) {
  constexpr uint64_t kAlign = 64;
  return (static_cast<uint64_t>(view.numel()) * sizeof(double) + kAlign - 1) / kAlign * kAlign;
}

class ReferenceKernels final : public ConvKernelSet {
 public:
  const char* name() const override { return "ref"; }

  // Workspace: dense double copies of the inputs the requested gradients read.
  uint64_t workspace_bytes(const ConvProblem& p) const override {
    return (p.reads_src() ? dense_bytes(p.src) : 0) + (p.reads_wei() ? dense_bytes(p.wei) : 0) +
           (p.reads_dst() ? dense_bytes(p.dst) : 0);
  }

  void run(const ConvProblem& p, void* workspace) const override {
    auto* cursor = static_cast<unsigned char*>(workspace);
    auto take = [&cursor](bool needed, const View5& view) -> double* {
      if (!needed) return nullptr;
      auto* buffer = reinterpret_cast<double*>(cursor);
      cursor += dense_bytes(view);
      return buffer;
    };
    double* src = take(p.reads_src(), p.src);
    double* wei = take(p.reads_wei(), p.wei);
    double* dst = take(p.reads_dst(), p.dst);
    if (src != nullptr) pack_dense(p.src, p.math, src);
    if (wei != nullptr) pack_dense(p.wei, p.math, wei);
    if (dst != nullptr) pack_dense(p.dst, p.math, dst);
    if (p.input_grad == InputGrad::kBackwardData) backward_data(p.geometry, dst, wei, p.grad_input);
    if (p.input_grad == InputGrad::kForward) forward(p.geometry, src, wei, p.grad_input);
    if (p.want_weight_grad) backward_weight(p.geometry, src, dst, p.grad_weight);
    if (p.want_bias_grad) reduce_bias(p.bias_source, p.grad_bias);
  }
};

}  // namespace

const ConvKernelSet& reference_kernels() {
  static const ReferenceKernels kernels;
  return kernels;
}

}  // namespace aclnn_cpu
