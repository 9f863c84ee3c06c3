// aclnnConvolutionBackward numerics through the public C API: against PyTorch golden values,
// and against the double-precision oracle over a table of cases (every dim count, groups,
// depthwise, dilation, stride > kernel, asymmetric padding, transposed with outputPadding,
// N = 1, every dtype mix, strided and reversed layouts, every outputMask).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "support/golden.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

ConvSpec spec_from_golden(const GoldenCase& c) {
  ConvSpec s;
  s.spatial = static_cast<int>(c.integer("spatial"));
  s.batch = c.integer("batch");
  s.in_channels = c.integer("in_channels");
  s.out_channels = c.integer("out_channels");
  s.groups = c.integer("groups");
  s.transposed = c.integer("transposed") != 0;
  s.input_size = c.ints("input_size");
  s.kernel = c.ints("kernel");
  s.stride = c.ints("stride");
  s.pad_lo = s.pad_hi = c.ints("padding");
  s.dilation = c.ints("dilation");
  s.output_padding = c.ints("output_padding");
  return s;
}

struct Inputs {
  std::vector<double> x, w, gy;
  explicit Inputs(const ConvSpec& s)
      : x(pattern(product(s.input_shape()), 1)),
        w(pattern(product(s.weight_shape()), 2)),
        gy(pattern(product(s.grad_output_shape()), 3)) {}
};

void expect_equal(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << what << " element " << i;
  }
}

TEST(ConvGolden, OracleMatchesPyTorch) {
  for (const GoldenCase& c : read_golden("conv_golden.txt")) {
    const ConvSpec s = spec_from_golden(c);
    const Inputs in(s);
    const ConvGrads g = oracle_backward(s, in.x, in.w, in.gy);
    expect_equal(g.grad_input, c.fields.at("grad_input"), c.name + " gradInput");
    expect_equal(g.grad_weight, c.fields.at("grad_weight"), c.name + " gradWeight");
    expect_equal(g.grad_bias, c.fields.at("grad_bias"), c.name + " gradBias");
  }
}

TEST(ConvGolden, LibraryMatchesPyTorchInEveryDtypeAndLayout) {
  const struct {
    aclDataType dtype;
    Layout layout;
  } variants[] = {{ACL_FLOAT, Layout::kContiguous},
                  {ACL_FLOAT, Layout::kStrided},
                  {ACL_FLOAT16, Layout::kReversed},
                  {ACL_BF16, Layout::kStrided}};
  for (const GoldenCase& c : read_golden("conv_golden.txt")) {
    const ConvSpec s = spec_from_golden(c);
    const Inputs in(s);
    for (const auto& v : variants) {
      RunOptions o;
      o.grad_output_dtype = o.input_dtype = o.weight_dtype = v.dtype;
      o.grad_input_dtype = o.grad_weight_dtype = o.grad_bias_dtype = v.dtype;
      o.input_layout = o.output_layout = v.layout;
      const RunResult r = run_convolution_backward(s, o, in.x, in.w, in.gy);
      ASSERT_EQ(r.status, 0) << c.name << ": " << r.error;
      const std::string what = c.name + " dtype " + std::to_string(v.dtype);
      expect_equal(r.grads.grad_input, rounded(c.fields.at("grad_input"), v.dtype), what + " gradInput");
      expect_equal(r.grads.grad_weight, rounded(c.fields.at("grad_weight"), v.dtype), what + " gradWeight");
      expect_equal(r.grads.grad_bias, rounded(c.fields.at("grad_bias"), v.dtype), what + " gradBias");
    }
  }
}

// ---- the case table ---------------------------------------------------------------------------

struct NamedSpec {
  const char* name;
  ConvSpec spec;
};

std::vector<NamedSpec> base_specs() {
  return {
      {"conv1d", make_spec(1, 2, 3, 4, 1, {8}, {3}, {1}, {1}, {1}, {1})},
      {"conv1d_stride_gt_kernel", make_spec(1, 1, 2, 2, 1, {13}, {2}, {4}, {1}, {1}, {1})},
      {"conv1d_depthwise_dilated", make_spec(1, 2, 3, 6, 3, {9}, {3}, {2}, {2}, {2}, {3})},
      {"conv2d_groups_dilation", make_spec(2, 2, 4, 6, 2, {7, 6}, {3, 2}, {2, 1}, {1, 0}, {1, 0}, {2, 2})},
      {"conv2d_depthwise", make_spec(2, 1, 5, 5, 5, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})},
      {"conv2d_channel_multiplier", make_spec(2, 2, 2, 6, 2, {5, 4}, {2, 2}, {1, 2}, {0, 1}, {0, 1}, {1, 1})},
      {"conv2d_asymmetric_padding", make_spec(2, 2, 3, 4, 1, {6, 5}, {3, 2}, {2, 1}, {2, 0}, {1, 3}, {1, 2})},
      // Trailing padding beyond the kernel's reach: the last rows / columns of gradOutput meet no input.
      {"conv2d_bottom_padding_beyond_kernel", make_spec(2, 1, 1, 1, 1, {1, 4}, {1, 3}, {1, 1}, {0, 1}, {2, 1}, {1, 1})},
      {"conv2d_right_padding_beyond_kernel", make_spec(2, 2, 3, 2, 1, {5, 4}, {2, 3}, {1, 1}, {1, 0}, {0, 3}, {1, 1})},
      {"conv2d_1x1_n1", make_spec(2, 1, 6, 3, 1, {4, 5}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1})},
      {"tconv2d_1x1_groups", make_spec(2, 2, 4, 6, 2, {3, 4}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, true)},
      {"conv3d_groups", make_spec(3, 1, 4, 4, 2, {4, 5, 3}, {2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 0, 1}, {1, 1, 1})},
      {"tconv1d_output_padding", make_spec(1, 2, 3, 2, 1, {5}, {3}, {3}, {1}, {1}, {1}, true, {2})},
      {"tconv2d_groups", make_spec(2, 1, 4, 6, 2, {3, 4}, {3, 2}, {2, 2}, {1, 0}, {1, 0}, {1, 2}, true, {1, 1})},
      {"tconv2d_asymmetric", make_spec(2, 2, 2, 3, 1, {3, 3}, {3, 3}, {2, 1}, {1, 0}, {0, 2}, {1, 1}, true, {1, 0})},
      {"tconv2d_depthwise", make_spec(2, 1, 3, 3, 3, {4, 3}, {2, 3}, {1, 2}, {0, 1}, {0, 1}, {2, 1}, true, {0, 1})},
      {"tconv3d",
       make_spec(3, 1, 2, 4, 2, {2, 3, 2}, {2, 2, 2}, {2, 1, 2}, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, true, {1, 0, 0})},
  };
}

struct TableCase {
  std::string name;
  ConvSpec spec;
  RunOptions options;
};

std::vector<TableCase> table() {
  std::vector<TableCase> cases;
  const struct {
    const char* name;
    aclDataType gy, x, w, gx, gw, gb;
  } dtypes[] = {{"f32", ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT},
                {"f16", ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16},
                {"bf16", ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16},
                {"mixed", ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_BF16, ACL_FLOAT16, ACL_FLOAT}};
  const struct {
    const char* name;
    std::array<bool, 3> mask;
  } masks[] = {{"dx", {true, false, false}},
               {"dw", {false, true, false}},
               {"db", {false, false, true}},
               {"dx_db", {true, false, true}},
               {"none", {false, false, false}}};
  for (const NamedSpec& base : base_specs()) {
    for (const auto& d : dtypes) {
      RunOptions o;
      o.grad_output_dtype = d.gy, o.input_dtype = d.x, o.weight_dtype = d.w;
      o.grad_input_dtype = d.gx, o.grad_weight_dtype = d.gw, o.grad_bias_dtype = d.gb;
      cases.push_back({std::string(base.name) + "_" + d.name, base.spec, o});
    }
    for (Layout layout : {Layout::kStrided, Layout::kReversed}) {
      RunOptions o;
      o.input_layout = o.output_layout = layout;
      o.nd_format = layout == Layout::kReversed;  // 3-D tensors also as ND
      cases.push_back(
          {std::string(base.name) + (layout == Layout::kStrided ? "_strided" : "_reversed_nd"), base.spec, o});
    }
    for (const auto& m : masks) {
      RunOptions o;
      o.mask = m.mask;
      o.output_layout = Layout::kStrided;
      cases.push_back({std::string(base.name) + "_mask_" + m.name, base.spec, o});
    }
    RunOptions fp16_math;
    fp16_math.cube_math_type = 2;
    // R17b: a grouped 3-D weight gradient under USE_FP16 must not go into a FLOAT gradWeight.
    if (base.spec.spatial == 3 && base.spec.groups > 1) fp16_math.grad_weight_dtype = ACL_FLOAT16;
    cases.push_back({std::string(base.name) + "_cube_math_fp16", base.spec, fp16_math});
  }
  return cases;
}

void PrintTo(const TableCase& c, std::ostream* os) { *os << c.name; }

class ConvTable : public ::testing::TestWithParam<TableCase> {};

TEST_P(ConvTable, MatchesOracle) {
  const TableCase& c = GetParam();
  const Inputs in(c.spec);
  const ConvGrads want = oracle_backward(c.spec, in.x, in.w, in.gy);
  const RunResult r = run_convolution_backward(c.spec, c.options, in.x, in.w, in.gy);
  ASSERT_EQ(r.status, 0) << r.error;
  const RunOptions& o = c.options;
  if (o.mask[0]) expect_equal(r.grads.grad_input, rounded(want.grad_input, o.grad_input_dtype), "gradInput");
  if (o.mask[1]) expect_equal(r.grads.grad_weight, rounded(want.grad_weight, o.grad_weight_dtype), "gradWeight");
  if (o.mask[2]) expect_equal(r.grads.grad_bias, rounded(want.grad_bias, o.grad_bias_dtype), "gradBias");
  EXPECT_EQ(r.grads.grad_input.empty(), !o.mask[0]);
  EXPECT_EQ(r.grads.grad_weight.empty(), !o.mask[1]);
  EXPECT_EQ(r.grads.grad_bias.empty(), !o.mask[2]);
}

TEST(ConvCubeMath, UseFp16RoundsInputsToHalfOthersKeepThem) {
  const ConvSpec s = make_spec(1, 1, 1, 1, 1, {3}, {1}, {1}, {0}, {0}, {1});
  // 1 + 2^-12 is exact in FLOAT but rounds to 1 in FLOAT16.
  const double fine = 1.0 + 1.0 / 4096.0;
  const std::vector<double> x = {fine, fine, fine}, w = {fine}, gy = {1.0, 1.0, 1.0};
  for (int8_t type = 0; type <= 3; ++type) {
    RunOptions o;
    o.cube_math_type = type;
    const RunResult r = run_convolution_backward(s, o, x, w, gy);
    ASSERT_EQ(r.status, 0) << r.error;
    const double input_value = type == 2 ? 1.0 : fine;
    EXPECT_EQ(r.grads.grad_weight, std::vector<double>{static_cast<float>(3 * input_value)}) << int(type);
    EXPECT_EQ(r.grads.grad_input, std::vector<double>(3, static_cast<float>(input_value))) << int(type);
    EXPECT_EQ(r.grads.grad_bias, std::vector<double>{3.0});
  }
}

// Padding is absent, not zero: an infinite weight or a NaN in gradOutput next to padding reaches
// only the gradients that have a term with it (1-D, L 8, k 3, pad 1; this file also runs on the
// reference kernels and on the generic instruction set).
TEST(ConvNonFinite, PaddingIsAbsentNotZero) {
  const ConvSpec s = make_spec(1, 1, 1, 1, 1, {8}, {3}, {1}, {1}, {1}, {1});
  const std::vector<double> x(8, 1.0), ones(8, 1.0);
  // w[0] = -Inf: gradInput[i] = dy[i + 1] * w[0] + dy[i] * w[1] + dy[i - 1] * w[2], where those exist.
  const std::vector<double> w = {-INFINITY, 1.0, 1.0};
  RunResult r = run_convolution_backward(s, RunOptions{}, x, w, ones);
  ASSERT_EQ(r.status, 0) << r.error;
  std::vector<double> want(7, -INFINITY);
  want.push_back(2.0);  // gradInput[7]: dy[8] lies in the padding, so w[0] meets nothing
  EXPECT_EQ(r.grads.grad_input, want);
  EXPECT_EQ(r.grads.grad_weight, (std::vector<double>{7.0, 8.0, 7.0}));
  // A NaN in gradOutput's first entry: gradWeight[k] = sum_o dy[o] x[o - 1 + k]; o = 0 meets x[-1] (padding)
  // for k = 0 only, so gradWeight[0] stays finite.
  std::vector<double> dy = ones;
  dy[0] = NAN;
  r = run_convolution_backward(s, RunOptions{}, x, {1.0, 1.0, 1.0}, dy);
  ASSERT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(r.grads.grad_weight[0], 7.0);
  EXPECT_TRUE(std::isnan(r.grads.grad_weight[1]) && std::isnan(r.grads.grad_weight[2]));
  EXPECT_TRUE(std::isnan(r.grads.grad_input[0]) && std::isnan(r.grads.grad_input[1]));
  for (size_t i = 2; i < 8; ++i) EXPECT_EQ(r.grads.grad_input[i], i == 7 ? 2.0 : 3.0) << i;
  const ConvGrads oracle = oracle_backward(s, x, {1.0, 1.0, 1.0}, dy);
  EXPECT_EQ(oracle.grad_weight[0], 7.0);  // (the oracle agrees)
}

// Accuracy by design: long reductions keep the error of the blocked sums (kernels/common/blocked_sum.h),
// well below one chain's. gradInput sums Cout x taps products per entry (4608 through `direct`, 4096
// through a GEMM, 5120 in 1-D); from random inputs, one chain per entry gives max|error| / max|exact|
// about 2e-6 there, the blocked sums about 2e-7 (the reference kernels about 6e-8, one rounding).
TEST(ConvAccuracy, LongReductionsKeepTheBlockedSumsError) {
  const struct {
    const char* name;
    ConvSpec spec;
  } layers[] = {
      {"3x3 over 512 channels", make_spec(2, 1, 16, 512, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})},
      {"1x1 over 4096 channels", make_spec(2, 1, 16, 4096, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1})},
      {"1-D k5 over 1024 channels", make_spec(1, 1, 16, 1024, 1, {12}, {5}, {1}, {2}, {2}, {1})},
  };
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random_values = [&](int64_t count) {  // (floats: the tensors hold exactly what the oracle reads)
    std::vector<double> v(static_cast<size_t>(count));
    for (double& x : v) x = uniform(rng);
    return v;
  };
  for (const auto& layer : layers) {
    const ConvSpec& s = layer.spec;
    const std::vector<double> x = random_values(product(s.input_shape())), w = random_values(product(s.weight_shape())),
                              gy = random_values(product(s.grad_output_shape()));
    const ConvGrads want = oracle_backward(s, x, w, gy);
    RunOptions o;
    o.mask = {true, false, false};
    const RunResult r = run_convolution_backward(s, o, x, w, gy);
    ASSERT_EQ(r.status, 0) << r.error;
    double error = 0, scale = 0;
    for (size_t i = 0; i < want.grad_input.size(); ++i) {
      error = std::max(error, std::abs(r.grads.grad_input[i] - want.grad_input[i]));
      scale = std::max(scale, std::abs(want.grad_input[i]));
    }
    EXPECT_LT(error / scale, 5e-7) << layer.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvTable, ::testing::ValuesIn(table()),
                         [](const ::testing::TestParamInfo<TableCase>& param) { return param.param.name; });

}  // namespace
}  // namespace testing_support
