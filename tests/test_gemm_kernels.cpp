// The GEMM implementations against the reference implementations on random (inexact) data, on shapes that cut
// into several tiles, row blocks and channel blocks with remainders; and bit-identical results
// for any thread budget.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "acl/acl_base.h"
#include "kernels/conv_problem.h"
#include "kernels/plan.h"

namespace aclnn_cpu {
namespace {

struct Tensor {
  std::vector<float> values;
  View5 view;
  Tensor(int64_t n, int64_t c, const int64_t (&spatial)[3]) {
    const int64_t shape[5] = {n, c, spatial[0], spatial[1], spatial[2]};
    int64_t stride = 1;
    for (int i = 4; i >= 0; --i) {
      view.shape[i] = shape[i];
      view.stride[i] = stride;
      stride *= shape[i];
    }
    values.assign(static_cast<size_t>(stride), std::nanf(""));
    view.data = values.data();
    view.dtype = ACL_FLOAT;
  }
};

struct Case {
  const char* name;
  ConvGeometry g;
  bool transposed;  // gradInput by the forward kernel
};

ConvGeometry geometry(int64_t n, int64_t groups, int64_t cin, int64_t cout, std::vector<int64_t> src,
                      std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p, std::vector<int64_t> d) {
  ConvGeometry g;
  g.batch = n, g.groups = groups, g.src_channels_per_group = cin, g.dst_channels_per_group = cout;
  const size_t first = 3 - src.size();
  for (size_t i = 0; i < src.size(); ++i) {
    g.src_size[first + i] = src[i], g.kernel[first + i] = k[i], g.stride[first + i] = s[i];
    g.pad[first + i] = p[i], g.dilation[first + i] = d[i];
    g.dst_size[first + i] = (src[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  }
  return g;
}

std::vector<Case> cases() {
  return {
      {"tiled_3x3", geometry(1, 1, 64, 8, {64, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), false},
      {"grouped_strided", geometry(3, 2, 5, 7, {17, 19}, {3, 2}, {2, 1}, {1, 0}, {1, 2}), false},
      {"depthwise", geometry(2, 6, 1, 2, {13, 11}, {3, 3}, {1, 2}, {1, 1}, {2, 1}), true},
      {"conv1d_long", geometry(2, 1, 70, 3, {3000}, {5}, {1}, {2}, {1}), true},
      {"pointwise", geometry(2, 2, 70, 5, {40, 41}, {1, 1}, {1, 1}, {0, 0}, {1, 1}), false},
      {"pointwise_transposed", geometry(1, 1, 9, 4, {3000}, {1}, {1}, {0}, {1}), true},
      {"conv3d", geometry(1, 1, 3, 4, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}), false},
  };
}

struct Results {
  std::vector<float> grad_input, grad_weight, grad_bias;
  std::vector<double> bias_expected;  // sum of dy per channel, computed here
};

// Runs every gradient of case `c` on the implementations named `impl` (ACLNN_CONVBWD_KERNELS syntax).
Results run(const char* impl, const Case& c, unsigned seed, int threads) {
  const ConvGeometry& g = c.g;
  const int64_t csrc = g.groups * g.src_channels_per_group, cdst = g.groups * g.dst_channels_per_group;
  Tensor x(g.batch, csrc, g.src_size), w(cdst, g.src_channels_per_group, g.kernel), dy(g.batch, cdst, g.dst_size);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  for (Tensor* t : {&x, &w, &dy}) {
    for (float& v : t->values) v = normal(rng);
  }
  Tensor gx = c.transposed ? Tensor(g.batch, cdst, g.dst_size) : Tensor(g.batch, csrc, g.src_size);
  Tensor gw(cdst, g.src_channels_per_group, g.kernel), gb(1, cdst, {1, 1, 1});
  ConvProblem p;
  p.geometry = g;
  p.src = x.view, p.wei = w.view, p.dst = dy.view;
  p.input_grad = c.transposed ? InputGrad::kForward : InputGrad::kBackwardData;
  p.grad_input = gx.view;
  p.want_weight_grad = p.want_bias_grad = true;
  p.grad_weight = gw.view, p.grad_bias = gb.view, p.bias_source = dy.view;
  p.max_threads = threads;
  const std::unique_ptr<ConvPlan> plan = ConvPlan::build(p, impl, "test");
  std::vector<unsigned char> workspace(plan->workspace_bytes());
  EXPECT_EQ(plan->execute(workspace.data()), 0);
  std::vector<double> bias(static_cast<size_t>(cdst), 0.0);
  const int64_t plane = g.dst_size[0] * g.dst_size[1] * g.dst_size[2];
  for (size_t i = 0; i < dy.values.size(); ++i) bias[i / plane % cdst] += dy.values[i];
  return {gx.values, gw.values, gb.values, bias};
}

// Largest error relative to the largest reference magnitude.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0.0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return worst / scale;
}

TEST(GemmKernels, MatchReferenceOnRandomData) {
  for (const Case& c : cases()) {
    const Results want = run("ref", c, 11, 2);
    const Results got = run("gemm", c, 11, 2);
    EXPECT_LT(relative_error(got.grad_input, want.grad_input), 2e-6) << c.name;
    EXPECT_LT(relative_error(got.grad_weight, want.grad_weight), 2e-6) << c.name;
    for (size_t co = 0; co < got.grad_bias.size(); ++co) {
      EXPECT_EQ(got.grad_bias[co], static_cast<float>(got.bias_expected[co])) << c.name << " channel " << co;
    }
  }
}

TEST(GemmKernels, BitIdenticalForAnyThreadBudget) {
  for (const Case& c : cases()) {
    const Results one = run("gemm", c, 5, 1);
    for (int threads : {2, 3}) {
      const Results more = run("gemm", c, 5, threads);
      EXPECT_EQ(std::memcmp(one.grad_input.data(), more.grad_input.data(), one.grad_input.size() * 4), 0) << c.name;
      EXPECT_EQ(std::memcmp(one.grad_weight.data(), more.grad_weight.data(), one.grad_weight.size() * 4), 0) << c.name;
    }
  }
}

}  // namespace
}  // namespace aclnn_cpu
