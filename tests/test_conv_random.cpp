// Randomised calls, valid and invalid: aclnnConvolutionBackward never crashes, rejects every
// invalid call with 161002 and a message, and matches the oracle on every valid one.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "support/env.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

TEST(ConvRandom, ValidCallsMatchTheOracleInvalidOnesAreRejected) {
  std::mt19937 rng(2024);
  auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int valid = 0, invalid = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ConvSpec s;
    s.spatial = static_cast<int>(pick(1, 3));
    s.transposed = pick(0, 3) == 0;
    s.groups = pick(1, 3);
    s.batch = pick(1, 2);
    s.in_channels = s.groups * pick(1, 2);
    s.out_channels = s.groups * pick(1, 2);
    for (int d = 0; d < s.spatial; ++d) {
      s.kernel.push_back(pick(1, 3));
      s.stride.push_back(pick(1, 3));
      s.dilation.push_back(pick(1, 2));
      const int64_t span = s.dilation.back() * (s.kernel.back() - 1) + 1;
      s.pad_lo.push_back(pick(0, (span - 1) / 2));  // transposed sizes stay positive
      s.input_size.push_back(pick(s.transposed ? 1 : std::max<int64_t>(1, span - 2 * s.pad_lo.back()), 6));
      s.output_padding.push_back(s.transposed ? pick(0, s.stride.back() - 1) : 0);
    }
    s.pad_hi = s.pad_lo;
    RunOptions o;
    o.mask = {pick(0, 1) == 1, pick(0, 1) == 1, pick(0, 1) == 1};
    o.output_layout = pick(0, 1) ? Layout::kStrided : Layout::kContiguous;
    o.cube_math_type = static_cast<int8_t>(pick(0, 3));
    const int64_t corruption = pick(0, 5);
    if (corruption == 1) o.cube_math_type = static_cast<int8_t>(pick(0, 1) ? 4 : -1);
    if (corruption == 2) o.input_dtype = pick(0, 1) ? ACL_INT32 : ACL_DOUBLE;
    const std::vector<double> x = pattern(product(s.input_shape()), 1);
    const std::vector<double> w = pattern(product(s.weight_shape()), 2);
    const std::vector<double> gy = pattern(product(s.grad_output_shape()), 3);
    const RunResult r = run_convolution_backward(s, o, x, w, gy);
    if (corruption == 1 || corruption == 2) {
      EXPECT_EQ(r.status, 161002) << "trial " << trial;
      EXPECT_FALSE(r.error.empty());
      ++invalid;
      continue;
    }
    if (s.spatial == 3 && s.groups > 1 && o.mask[1] && o.cube_math_type == 2) {  // R17b
      EXPECT_EQ(r.status, 161002) << "trial " << trial;
      EXPECT_NE(r.error.find("USE_FP16"), std::string::npos) << r.error;
      ++invalid;
      continue;
    }
    ASSERT_EQ(r.status, 0) << "trial " << trial << ": " << r.error;
    const ConvGrads want = oracle_backward(s, x, w, gy);
    const ConvGrads expected = {o.mask[0] ? rounded(want.grad_input, ACL_FLOAT) : std::vector<double>{},
                                o.mask[1] ? rounded(want.grad_weight, ACL_FLOAT) : std::vector<double>{},
                                o.mask[2] ? rounded(want.grad_bias, ACL_FLOAT) : std::vector<double>{}};
    EXPECT_EQ(r.grads.grad_input, expected.grad_input) << "trial " << trial;
    EXPECT_EQ(r.grads.grad_weight, expected.grad_weight) << "trial " << trial;
    EXPECT_EQ(r.grads.grad_bias, expected.grad_bias) << "trial " << trial;
    ++valid;
  }
  EXPECT_GT(valid, 150);
  EXPECT_GT(invalid, 50);
}

// Random integers in [lo, hi] and float values of a standard normal distribution, from one seed.
struct Draws {
  std::mt19937 rng;
  std::normal_distribution<double> normal;
  explicit Draws(unsigned seed) : rng(seed) {}
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  std::vector<double> values(int64_t count) {
    std::vector<double> v(static_cast<size_t>(count));
    for (double& x : v) x = static_cast<float>(normal(rng));
    return v;
  }
};

// 2-D calls with four padding values, trailing padding up to past the kernel's reach, every mask,
// on inexact values: each gradient within a few float roundings of the oracle (the workspace is
// poisoned with NaN before phase 2, so a read of unwritten scratch cannot pass).
TEST(ConvRandom, AsymmetricPaddingMatchesTheOracle) {
  Draws draw(40);
  auto pick = [&draw](int64_t lo, int64_t hi) { return draw.pick(lo, hi); };
  auto values = [&draw](int64_t count) { return draw.values(count); };
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    ConvSpec s;
    s.spatial = 2;
    s.transposed = pick(0, 3) == 0;
    s.groups = pick(1, 2);
    s.batch = pick(1, 2);
    s.in_channels = s.groups * pick(1, 3);
    s.out_channels = s.groups * pick(1, 3);
    for (int d = 0; d < 2; ++d) {
      s.kernel.push_back(pick(1, 3));
      s.stride.push_back(pick(1, 2));
      s.dilation.push_back(pick(1, 2));
      const int64_t span = s.dilation.back() * (s.kernel.back() - 1) + 1;
      const int64_t lo = pick(0, s.transposed ? (span - 1) / 2 : span);
      const int64_t hi = pick(0, s.transposed ? (span - 1) / 2 : span + 1);
      s.pad_lo.push_back(lo);
      s.pad_hi.push_back(hi);
      s.input_size.push_back(pick(s.transposed ? 1 : std::max<int64_t>(1, span - lo - hi), 6));
      s.output_padding.push_back(s.transposed ? pick(0, s.stride.back() - 1) : 0);
    }
    if (s.pad_lo == s.pad_hi) continue;
    bool empty = false;
    for (int64_t size : s.output_size()) empty |= size <= 0;
    if (empty) continue;
    RunOptions o;
    o.mask = {pick(0, 1) == 1, pick(0, 1) == 1, pick(0, 1) == 1};
    const std::vector<double> x = values(product(s.input_shape()));
    const std::vector<double> w = values(product(s.weight_shape()));
    const std::vector<double> gy = values(product(s.grad_output_shape()));
    const RunResult r = run_convolution_backward(s, o, x, w, gy);
    ASSERT_EQ(r.status, 0) << "trial " << trial << ": " << r.error;
    const ConvGrads want = oracle_backward(s, x, w, gy);
    const std::vector<double>* got[3] = {&r.grads.grad_input, &r.grads.grad_weight, &r.grads.grad_bias};
    const std::vector<double>* truth[3] = {&want.grad_input, &want.grad_weight, &want.grad_bias};
    for (int i = 0; i < 3; ++i) {
      if (!o.mask[i]) continue;
      ASSERT_EQ(got[i]->size(), truth[i]->size());
      for (size_t e = 0; e < truth[i]->size(); ++e) {
        // At most 72 products per entry, each of magnitude below ~25: far inside this bound.
        EXPECT_NEAR((*got[i])[e], (*truth[i])[e], 1e-4) << "trial " << trial << " gradient " << i << " entry " << e;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

// Wide layers of 3x3 taps of stride 1 in H and W, the shapes `winograd` takes (kernels/winograd; the
// random calls above, of a few channels, never reach it): 64-70 channels each way, one group, 2-D and
// 3-D (depth taps of any stride and dilation), padding up to 2, direct and transposed, the forward
// operator with a bias and gradInput, each output within its float error of the double oracle.
TEST(ConvRandom, WideStrideOneLayersMatchTheOracle) {
  Draws draw(64);
  auto pick = [&draw](int64_t lo, int64_t hi) { return draw.pick(lo, hi); };
  auto values = [&draw](int64_t count) { return draw.values(count); };
  // (on a slow host 4 layers; none where a run forces an entry: the reference against the oracle again)
  if (entries_forced()) GTEST_SKIP() << "an entry forced";
  const int trials = slow_host() ? 4 : 8;
  int winograd = 0;  // results it computed
  for (int trial = 0; trial < trials; ++trial) {
    ConvSpec s;
    s.spatial = static_cast<int>(pick(2, 3));
    s.transposed = pick(0, 3) == 0;
    s.batch = pick(2, 3);
    s.in_channels = pick(64, 70);
    s.out_channels = pick(64, 70);
    for (int d = 0; d < s.spatial; ++d) {
      const bool depth = d + 2 < s.spatial;
      s.kernel.push_back(depth ? pick(1, 2) : 3);
      s.stride.push_back(depth && !s.transposed ? pick(1, 2) : 1);
      s.dilation.push_back(depth && !s.transposed ? pick(1, 2) : 1);
      const int64_t span = s.dilation.back() * (s.kernel.back() - 1) + 1;
      s.pad_lo.push_back(pick(0, s.transposed ? span - 1 : std::min<int64_t>(span, 2)));
      // (the padded depth at least the kernel's span)
      s.input_size.push_back(depth ? pick(std::max<int64_t>(2, span - 2 * s.pad_lo.back()), 3) : pick(6, 9));
      s.output_padding.push_back(0);
    }
    s.pad_hi = s.pad_lo;
    const std::vector<double> x = values(product(s.input_shape()));
    const std::vector<double> w = values(product(s.weight_shape()));
    const std::vector<double> gy = values(product(s.grad_output_shape()));
    const std::vector<double> bias = values(s.out_channels);
    // (the verbose lines say which entry computed each result: winograd where its rule on transformed
    // weights per output tile lets it)
    ForwardResult y;
    RunResult r;
    RunOptions o;
    o.mask = {true, false, false};
    const std::string lines = verbose_lines([&] {
      y = run_convolution_forward(s, {}, x, w, bias);
      r = run_convolution_backward(s, o, x, w, gy);
    });
    for (const char* entry : {"output=winograd", "gradInput=winograd"})
      winograd += lines.find(entry) != std::string::npos;
    ASSERT_EQ(y.status, 0) << "trial " << trial << ": " << y.error;
    ASSERT_EQ(r.status, 0) << "trial " << trial << ": " << r.error;
    const std::vector<double> want_y = oracle_forward(s, x, w, bias);
    const ConvGrads want = oracle_backward(s, x, w, gy);
    // (up to 2 000 products of magnitude about 1 per entry: float errors of order 1e-5)
    ASSERT_EQ(y.output.size(), want_y.size());
    for (size_t e = 0; e < want_y.size(); ++e)
      EXPECT_NEAR(y.output[e], want_y[e], 2e-4) << "trial " << trial << " y " << e;
    ASSERT_EQ(r.grads.grad_input.size(), want.grad_input.size());
    for (size_t e = 0; e < want.grad_input.size(); ++e)
      EXPECT_NEAR(r.grads.grad_input[e], want.grad_input[e], 2e-4) << "trial " << trial << " dx " << e;
  }
  EXPECT_GE(winograd, trials * 5 / 4);
}

}  // namespace
}  // namespace testing_support
