// Each output of aclnnQuantConvolution on its own: the products of its window summed in int64 in the
// formula's order (kernels/core/quant_problem.h), wrapped to int32, then the operator's float steps.
// It shares no code with the fast entries but those float steps (the operator's definition).
#include "kernels/ref/quant_ref.h"

#include <memory>

#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"

namespace aclnn_cpu {
namespace {

int8_t input_at(const QuantProblem& p, int64_t n, int64_t c, const int64_t (&at)[3]) {
  const ConvGeometry& g = p.geometry;
  for (int a = 0; a < 3; ++a) {
    if (at[a] < 0 || at[a] >= g.src_size[a]) return p.pad_value;
  }
  return static_cast<const int8_t*>(p.input.data)[p.input.element(n, c, at[0], at[1], at[2])];
}

// The int32 sum (modulo 2^32) of output channel o at (n, od, oh, ow).
int32_t window_sum(const QuantProblem& p, int64_t n, int64_t o, const int64_t (&out)[3]) {
  const ConvGeometry& g = p.geometry;
  const int64_t first = o / g.dst_channels_per_group * g.src_channels_per_group;
  const int8_t* weight = static_cast<const int8_t*>(p.weight.data);
  int64_t sum = 0;
  for (int64_t ci = 0; ci < g.src_channels_per_group; ++ci) {
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t k[3] = {kd, kh, kw};
          int64_t at[3];
          for (int a = 0; a < 3; ++a) at[a] = out[a] * g.stride[a] - g.pad[a] + k[a] * g.dilation[a];
          sum += int64_t{weight[p.weight.element(o, ci, kd, kh, kw)]} * input_at(p, n, first + ci, at);
        }
      }
    }
  }
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
}

class RefStep final : public OperatorStep {
 public:
  // (an output that overlaps itself is written by one thread in view order: the last write wins)
  explicit RefStep(const QuantProblem& p) : p_(p), threads_(may_overlap(p.output) ? 1 : p.max_threads) {}
  int run(const Workspace&) const override {
    const ConvGeometry& g = p_.geometry;
    const int64_t channels = g.groups * g.dst_channels_per_group;
    return run_tasks(g.batch * channels, threads_, "aclnnQuantConvolution", [&](int64_t t) {
      const int64_t n = t / channels, o = t % channels;
      const ChannelDequant d = channel_dequant(p_, o);
      for (int64_t od = 0; od < g.dst_size[0]; ++od) {
        for (int64_t oh = 0; oh < g.dst_size[1]; ++oh) {
          for (int64_t ow = 0; ow < g.dst_size[2]; ++ow) {
            const float value = dequantize(window_sum(p_, n, o, {od, oh, ow}), d);
            store_rounded(p_.output, p_.output.element(n, o, od, oh, ow), value);
          }
        }
      }
    });
  }
  int64_t tasks() const override { return p_.geometry.batch * p_.geometry.groups * p_.geometry.dst_channels_per_group; }

 private:
  QuantProblem p_;
  int threads_;
};

}  // namespace

extern const QuantImpl kQuantRef = {
    "ref", "ref", [](const QuantProblem&, const CpuFeatures&) { return kSupported; },
    [](const QuantProblem& p, StepBuilder&) { return std::unique_ptr<OperatorStep>(new RefStep(p)); }};

}  // namespace aclnn_cpu
