// The reference kernel set judged on its own terms, before it judges anyone: hand-computed
// cases, the adjoint identity <fwd(x,w), dy> = <x, dx> = <w, dw>, central finite differences,
// and bit-identical results for any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "acl/acl_base.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/plan.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace aclnn_cpu {
namespace {

// A dense double tensor seen as a View5 (N, C, D, H, W).
struct Dense {
  std::vector<double> values;
  View5 view;
  Dense(int64_t n, int64_t c, const int64_t (&spatial)[3], double fill = 0.0)
      : values(static_cast<size_t>(n * c * spatial[0] * spatial[1] * spatial[2]), fill) {
    view.data = values.data();
    view.dtype = ACL_DOUBLE;
    const int64_t shape[5] = {n, c, spatial[0], spatial[1], spatial[2]};
    int64_t stride = 1;
    for (int i = 4; i >= 0; --i) {
      view.shape[i] = shape[i];
      view.stride[i] = stride;
      stride *= shape[i];
    }
  }
};

// Plans `p` on the reference implementations and runs it.
void run(const ConvProblem& p) {
  const std::unique_ptr<ConvPlan> plan = ConvPlan::build(p, "ref", "test");
  ASSERT_NE(plan, nullptr);
  for (ConvPass pass : kConvPasses) {
    if (plan->chosen(pass) != nullptr) {
      ASSERT_STREQ(plan->chosen(pass)->name, "ref");
    }
  }
  std::vector<unsigned char> workspace(plan->workspace_bytes(), 0xFF);  // NaN: unwritten scratch shows
  ASSERT_EQ(plan->execute(workspace.data()), 0);
}

// y = forward(x, w)
void forward(const ConvGeometry& g, const Dense& x, const Dense& w, Dense& y) {
  ConvProblem p;
  p.geometry = g;
  p.src = x.view, p.wei = w.view, p.dst = y.view;
  p.input_grad = InputGrad::kForward;
  p.grad_input = y.view;
  run(p);
}

// dx = backward_data(dy, w), dw = backward_weight(x, dy), db = sum(dy)
void backward(const ConvGeometry& g, const Dense& x, const Dense& w, const Dense& dy, Dense& dx, Dense& dw, Dense& db) {
  ConvProblem p;
  p.geometry = g;
  p.src = x.view, p.wei = w.view, p.dst = dy.view;
  p.input_grad = InputGrad::kBackwardData;
  p.grad_input = dx.view;
  p.want_weight_grad = p.want_bias_grad = true;
  p.grad_weight = dw.view;
  p.grad_bias = db.view;
  p.bias_source = dy.view;
  run(p);
}

ConvGeometry geometry_1d(int64_t src, int64_t k, int64_t stride, int64_t pad, int64_t dst) {
  ConvGeometry g;
  g.batch = 1, g.groups = 1, g.src_channels_per_group = 1, g.dst_channels_per_group = 1;
  g.src_size[2] = src, g.kernel[2] = k, g.stride[2] = stride, g.pad[2] = pad, g.dst_size[2] = dst;
  return g;
}

TEST(ReferenceKernels, HandComputed1d) {
  const ConvGeometry g = geometry_1d(4, 2, 1, 0, 3);
  Dense x(1, 1, {1, 1, 4}), w(1, 1, {1, 1, 2}), dy(1, 1, {1, 1, 3}), y(1, 1, {1, 1, 3});
  x.values = {1, 2, 3, 4}, w.values = {1, -1}, dy.values = {1, 2, 3};
  forward(g, x, w, y);
  EXPECT_EQ(y.values, (std::vector<double>{-1, -1, -1}));
  Dense dx(1, 1, {1, 1, 4}), dw(1, 1, {1, 1, 2}), db(1, 1, {1, 1, 1});
  backward(g, x, w, dy, dx, dw, db);
  EXPECT_EQ(dx.values, (std::vector<double>{1, 1, 1, -3}));
  EXPECT_EQ(dw.values, (std::vector<double>{14, 20}));
  EXPECT_EQ(db.values, (std::vector<double>{6}));
}

TEST(ReferenceKernels, HandComputedStridedPadded1d) {
  const ConvGeometry g = geometry_1d(3, 3, 2, 1, 2);
  Dense x(1, 1, {1, 1, 3}), w(1, 1, {1, 1, 3}, 1.0), dy(1, 1, {1, 1, 2}, 1.0), y(1, 1, {1, 1, 2});
  x.values = {1, 2, 3};
  forward(g, x, w, y);
  EXPECT_EQ(y.values, (std::vector<double>{3, 5}));
  Dense dx(1, 1, {1, 1, 3}), dw(1, 1, {1, 1, 3}), db(1, 1, {1, 1, 1});
  backward(g, x, w, dy, dx, dw, db);
  EXPECT_EQ(dx.values, (std::vector<double>{1, 2, 1}));
  EXPECT_EQ(dw.values, (std::vector<double>{2, 4, 2}));
}

struct RandomCase {
  ConvGeometry g;
  Dense x, w, dy;
  RandomCase(const ConvGeometry& geometry, unsigned seed)
      : g(geometry),
        x(g.batch, g.groups * g.src_channels_per_group, g.src_size),
        w(g.groups * g.dst_channels_per_group, g.src_channels_per_group, g.kernel),
        dy(g.batch, g.groups * g.dst_channels_per_group, g.dst_size) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (Dense* t : {&x, &w, &dy}) {
      for (double& v : t->values) v = uniform(rng);
    }
  }
};

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

std::vector<ConvGeometry> random_geometries() {
  std::vector<ConvGeometry> out;
  std::mt19937 rng(7);
  auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 24; ++i) {
    ConvGeometry g;
    g.batch = pick(1, 2);
    g.groups = pick(1, 3);
    g.src_channels_per_group = pick(1, 3);
    g.dst_channels_per_group = pick(1, 3);
    const int first = static_cast<int>(pick(0, 2));  // 3-D, 2-D or 1-D
    for (int a = first; a < 3; ++a) {
      g.kernel[a] = pick(1, 3);
      g.stride[a] = pick(1, 3);
      g.dilation[a] = pick(1, 2);
      g.pad[a] = pick(0, 2);
      g.src_size[a] = pick(g.dilation[a] * (g.kernel[a] - 1) + 1, 7);
      // Any trailing padding from 0 to 2: the output size follows from it.
      const int64_t hi = pick(0, 2);
      g.dst_size[a] = (g.src_size[a] + g.pad[a] + hi - g.dilation[a] * (g.kernel[a] - 1) - 1) / g.stride[a] + 1;
    }
    out.push_back(g);
  }
  return out;
}

TEST(ReferenceKernels, AdjointIdentity) {
  unsigned seed = 1;
  for (const ConvGeometry& g : random_geometries()) {
    RandomCase c(g, seed++);
    Dense y(g.batch, g.groups * g.dst_channels_per_group, g.dst_size);
    Dense dx(g.batch, g.groups * g.src_channels_per_group, g.src_size);
    Dense dw(g.groups * g.dst_channels_per_group, g.src_channels_per_group, g.kernel);
    Dense db(1, g.groups * g.dst_channels_per_group, {1, 1, 1});
    forward(g, c.x, c.w, y);
    backward(g, c.x, c.w, c.dy, dx, dw, db);
    const double forward_side = dot(y.values, c.dy.values);
    const double scale = 1e-12 * (1.0 + std::abs(forward_side));
    EXPECT_NEAR(dot(c.x.values, dx.values), forward_side, scale) << "case " << seed;
    EXPECT_NEAR(dot(c.w.values, dw.values), forward_side, scale) << "case " << seed;
    // db = dL/d(bias) for L = <y + bias, dy>: the sum of dy per channel.
    const int64_t spatial = g.dst_size[0] * g.dst_size[1] * g.dst_size[2];
    for (int64_t c_out = 0; c_out < g.groups * g.dst_channels_per_group; ++c_out) {
      double sum = 0.0;
      for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t s = 0; s < spatial; ++s)
          sum += c.dy.values[(n * g.groups * g.dst_channels_per_group + c_out) * spatial + s];
      }
      EXPECT_NEAR(db.values[c_out], sum, 1e-12);
    }
  }
}

TEST(ReferenceKernels, CentralFiniteDifferences) {
  ConvGeometry g = random_geometries()[3];
  RandomCase c(g, 99);
  Dense y(g.batch, g.groups * g.dst_channels_per_group, g.dst_size);
  Dense dx(g.batch, g.groups * g.src_channels_per_group, g.src_size);
  Dense dw(g.groups * g.dst_channels_per_group, g.src_channels_per_group, g.kernel);
  Dense db(1, g.groups * g.dst_channels_per_group, {1, 1, 1});
  backward(g, c.x, c.w, c.dy, dx, dw, db);
  // L(x, w) = <forward(x, w), dy>
  auto loss = [&]() {
    forward(g, c.x, c.w, y);
    return dot(y.values, c.dy.values);
  };
  const double h = 1e-3;
  for (auto [tensor, grad] : {std::pair<Dense*, Dense*>{&c.x, &dx}, {&c.w, &dw}}) {
    for (size_t i = 0; i < tensor->values.size(); i += 1 + tensor->values.size() / 7) {
      const double saved = tensor->values[i];
      tensor->values[i] = saved + h;
      const double up = loss();
      tensor->values[i] = saved - h;
      const double down = loss();
      tensor->values[i] = saved;
      EXPECT_NEAR((up - down) / (2 * h), grad->values[i], 1e-9) << "element " << i;
    }
  }
}

#ifdef _OPENMP
TEST(ReferenceKernels, BitIdenticalForAnyThreadCount) {
  ConvGeometry g;
  g.batch = 3, g.groups = 2, g.src_channels_per_group = 5, g.dst_channels_per_group = 7;
  g.src_size[1] = 11, g.src_size[2] = 13, g.kernel[1] = 3, g.kernel[2] = 3, g.pad[1] = g.pad[2] = 1;
  g.dst_size[1] = 11, g.dst_size[2] = 13;
  RandomCase c(g, 5);
  std::vector<std::vector<double>> results;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    Dense dx(g.batch, 10, g.src_size), dw(14, 5, g.kernel), db(1, 14, {1, 1, 1});
    backward(g, c.x, c.w, c.dy, dx, dw, db);
    std::vector<double> all = dx.values;
    all.insert(all.end(), dw.values.begin(), dw.values.end());
    all.insert(all.end(), db.values.begin(), db.values.end());
    results.push_back(all);
  }
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(results[0].data(), results[2].data(), results[0].size() * sizeof(double)), 0);
}
#endif

}  // namespace
}  // namespace aclnn_cpu
