// The forward operators' values through the public C API: aclnnConvolution (direct and transposed,
// 1-D/2-D/3-D), aclnnConvTbc and aclnnConvDepthwise2d against the double oracle, the adjoint
// identity with aclnnConvolutionBackward, and PyTorch's golden values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/env.h"
#include "support/golden.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

struct NamedSpec {
  const char* name;
  ConvSpec spec;
};

// Direct and transposed layers of every rank, with strides, dilations, groups, asymmetric padding
// and output paddings (one at least the stride where the dilation allows it).
std::vector<NamedSpec> specs() {
  return {
      {"conv1d", make_spec(1, 2, 3, 4, 1, {9}, {3}, {1}, {1}, {1}, {1})},
      {"conv1d_stride_dilation_pairs", make_spec(1, 2, 4, 6, 2, {13}, {3}, {2}, {2}, {1}, {2})},
      {"conv2d", make_spec(2, 2, 3, 5, 1, {7, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})},
      {"conv2d_asymmetric", make_spec(2, 1, 4, 4, 2, {6, 7}, {3, 2}, {2, 1}, {0, 1}, {2, 0}, {1, 2})},
      {"conv2d_1x1", make_spec(2, 2, 8, 16, 1, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1})},
      {"conv2d_depthwise", make_spec(2, 2, 6, 12, 6, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})},
      {"conv2d_wide", make_spec(2, 1, 40, 36, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})},
      {"conv3d", make_spec(3, 2, 3, 4, 1, {4, 5, 6}, {2, 3, 3}, {1, 2, 1}, {1, 1, 0}, {1, 1, 0}, {1, 1, 2})},
      {"transposed1d", make_spec(1, 2, 4, 3, 1, {6}, {3}, {2}, {1}, {1}, {1}, true, {1})},
      {"transposed2d", make_spec(2, 2, 4, 6, 2, {4, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, {1, 0})},
      {"transposed2d_asymmetric", make_spec(2, 1, 3, 4, 1, {5, 4}, {3, 2}, {1, 2}, {1, 0}, {0, 1}, {1, 1}, true)},
      {"transposed2d_output_padding_by_dilation",
       make_spec(2, 1, 2, 3, 1, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {3, 2}, true, {2, 1})},
      {"transposed3d",
       make_spec(3, 1, 4, 2, 2, {3, 3, 4}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, true, {1, 0, 1})},
  };
}

// The bound on a result's error: the blocked sums' (well within 1e-5 of the products' magnitudes)
// and the bias addition, then half a unit in the output dtype's last place.
double allowed(double magnitude, double value, aclDataType dtype) {
  const double unit = dtype == ACL_FLOAT16 ? std::ldexp(1.0, -11) : dtype == ACL_BF16 ? std::ldexp(1.0, -8) : 0.0;
  return 1e-5 * (magnitude + 1.0) + unit * std::abs(value);
}

std::vector<double> absolute(std::vector<double> values) {
  for (double& v : values) v = std::abs(v);
  return values;
}

// The values a FLOAT16/BF16 tensor holds.
std::vector<double> held(const std::vector<double>& values, aclDataType dtype) { return rounded(values, dtype); }

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::vector<double>& magnitude,
                  aclDataType dtype, const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), allowed(magnitude[i], want[i], dtype))
        << where << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

TEST(ConvForward, MatchesTheOracle) {
  struct Types {
    aclDataType input, weight, bias, output;
    Layout layout;
  };
  const Types types[] = {{ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, Layout::kContiguous},
                         {ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, Layout::kStrided},
                         {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, Layout::kContiguous},
                         {ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, Layout::kReversed},
                         {ACL_FLOAT16, ACL_FLOAT, ACL_BF16, ACL_FLOAT, Layout::kContiguous}};
  for (const NamedSpec& s : specs()) {
    const ConvSpec& c = s.spec;
    for (const Types& t : types) {
      for (bool with_bias : {false, true}) {
        const std::vector<double> x = held(pattern(product(c.input_shape()), 1), t.input);
        const std::vector<double> w = held(pattern(product(c.weight_shape()), 2), t.weight);
        const std::vector<double> b = with_bias ? held(pattern(c.out_channels, 4), t.bias) : std::vector<double>{};
        ForwardOptions o;
        o.input_dtype = t.input, o.weight_dtype = t.weight, o.bias_dtype = t.bias, o.output_dtype = t.output;
        o.input_layout = o.output_layout = t.layout;
        const ForwardResult r = run_convolution_forward(c, o, x, w, b);
        const std::string where = std::string(s.name) + " dtype " + std::to_string(t.input) + "/" +
                                  std::to_string(t.output) + (with_bias ? " with bias" : "");
        ASSERT_EQ(r.status, 0) << where << ": " << r.error;
        expect_close(r.output, oracle_forward(c, x, w, b), oracle_forward(c, absolute(x), absolute(w), {}), t.output,
                     where);
      }
    }
  }
}

// <conv(x, w), dy> = <x, dx> with dx from aclnnConvolutionBackward: the forward operator is the
// adjoint of the backward one's input gradient, direct and transposed.
TEST(ConvForward, AdjointOfTheInputGradient) {
  for (const NamedSpec& s : specs()) {
    const ConvSpec& c = s.spec;
    // (the backward operator takes neither a 1-D [left, right] padding nor an output padding past the stride)
    const std::string name = s.name;
    if (name == "conv1d_stride_dilation_pairs" || name == "transposed2d_output_padding_by_dilation") continue;
    const std::vector<double> x = pattern(product(c.input_shape()), 1), w = pattern(product(c.weight_shape()), 2);
    const std::vector<double> dy = pattern(product(c.grad_output_shape()), 3);
    const ForwardResult y = run_convolution_forward(c, ForwardOptions{}, x, w, {});
    ASSERT_EQ(y.status, 0) << s.name << ": " << y.error;
    RunOptions o;
    o.mask = {true, false, false};
    const RunResult dx = run_convolution_backward(c, o, x, w, dy);
    ASSERT_EQ(dx.status, 0) << s.name << ": " << dx.error;
    double left = 0.0, right = 0.0, scale = 0.0;
    for (size_t i = 0; i < dy.size(); ++i) left += y.output[i] * dy[i], scale += std::abs(y.output[i] * dy[i]);
    for (size_t i = 0; i < x.size(); ++i) right += x[i] * dx.grads.grad_input[i];
    EXPECT_NEAR(left, right, 1e-5 * scale) << s.name;
  }
}

// (N, C, D, H, W) values in row-major order, reordered as (N, D, H, W, C).
std::vector<double> channels_last(const std::vector<double>& values, const std::vector<int64_t>& shape) {
  const int64_t n = shape[0], c = shape[1], plane = shape[2] * shape[3] * shape[4];
  std::vector<double> out(values.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) out[(i * plane + p) * c + ch] = values[(i * c + ch) * plane + p];
  return out;
}
std::vector<int64_t> channels_last_shape(const std::vector<int64_t>& s) { return {s[0], s[2], s[3], s[4], s[1]}; }

// 3-D tensors in NDHWC (input, weight and output each), direct and transposed, with a bias.
TEST(ConvForward, ChannelsLast3d) {
  for (bool transposed : {false, true}) {
    const ConvSpec c = make_spec(3, 2, 4, 6, 2, {3, 4, 5}, {2, 3, 2}, {1, 2, 1}, {1, 1, 0}, {1, 1, 0}, {1, 1, 2},
                                 transposed, {0, 1, 0});
    const std::vector<double> x = pattern(product(c.input_shape()), 1), w = pattern(product(c.weight_shape()), 2);
    const std::vector<double> b = pattern(c.out_channels, 4);
    DeviceTensor tx(channels_last_shape(c.input_shape()), ACL_FLOAT, ACL_FORMAT_NDHWC);
    DeviceTensor tw(channels_last_shape(c.weight_shape()), ACL_FLOAT, ACL_FORMAT_NDHWC);
    DeviceTensor tb({c.out_channels}, ACL_FLOAT, ACL_FORMAT_ND);
    DeviceTensor ty(channels_last_shape(c.grad_output_shape()), ACL_FLOAT, ACL_FORMAT_NDHWC);
    tx.fill(channels_last(x, c.input_shape()));
    tw.fill(channels_last(w, c.weight_shape()));
    tb.fill(b);
    const std::vector<int64_t> padding = {1, 1, 0};
    aclIntArray* stride = aclCreateIntArray(c.stride.data(), 3);
    aclIntArray* pads = aclCreateIntArray(padding.data(), 3);
    aclIntArray* dilation = aclCreateIntArray(c.dilation.data(), 3);
    aclIntArray* out_pads = aclCreateIntArray(c.output_padding.data(), 3);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnConvolutionGetWorkspaceSize(tx.get(), tw.get(), tb.get(), stride, pads, dilation, transposed,
                                               out_pads, c.groups, ty.get(), 0, &size, &executor),
              0)
        << aclGetRecentErrMsg();
    void* workspace = nullptr;
    if (size > 0) {
      ASSERT_EQ(aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST), 0);
    }
    ASSERT_EQ(aclnnConvolution(workspace, size, executor, nullptr), 0);
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
    if (workspace != nullptr) aclrtFree(workspace);
    for (aclIntArray* a : {stride, pads, dilation, out_pads}) aclDestroyIntArray(a);
    expect_close(ty.read(), channels_last(oracle_forward(c, x, w, b), c.grad_output_shape()),
                 channels_last(oracle_forward(c, absolute(x), absolute(w), {}), c.grad_output_shape()), ACL_FLOAT,
                 transposed ? "NDHWC transposed" : "NDHWC");
  }
}

TEST(ConvForward, GoldenValuesFromPyTorch) {
  const std::vector<GoldenCase> cases = read_golden("forward_golden.txt");
  ASSERT_GE(cases.size(), 10u);
  for (const GoldenCase& g : cases) {
    const std::string op = g.name.substr(0, g.name.find('_'));
    const std::vector<double>&x = g.fields.at("input"), &w = g.fields.at("weight"), &want = g.fields.at("output");
    const std::vector<double> b = g.fields.count("bias") ? g.fields.at("bias") : std::vector<double>{};
    ForwardResult r;
    if (op == "tbc") {
      TbcSpec t;
      t.time = g.integer("time"), t.batch = g.integer("batch"), t.in_channels = g.integer("in_channels");
      t.out_channels = g.integer("out_channels"), t.kernel = g.integer("kernel"), t.pad = g.integer("pad");
      r = run_conv_tbc_forward(t, ForwardOptions{}, x, w, b);
    } else {
      ConvSpec c;
      c.spatial = static_cast<int>(g.integer("spatial"));
      c.batch = g.integer("batch"), c.in_channels = g.integer("in_channels");
      c.out_channels = g.integer("out_channels"), c.groups = g.integer("groups");
      c.input_size = g.ints("input_size"), c.kernel = g.ints("kernel"), c.stride = g.ints("stride");
      c.pad_lo = g.ints("pad_lo"), c.pad_hi = g.ints("pad_hi"), c.dilation = g.ints("dilation");
      c.transposed = g.integer("transposed") != 0, c.output_padding = g.ints("output_padding");
      r = op == "depthwise" ? run_conv_depthwise2d(c, ForwardOptions{}, x, w, b)
                            : run_convolution_forward(c, ForwardOptions{}, x, w, b);
    }
    ASSERT_EQ(r.status, 0) << g.name << ": " << r.error;
    ASSERT_EQ(r.output.size(), want.size()) << g.name;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(r.output[i], want[i], 2e-5 * (1 + std::abs(want[i]))) << g.name;
  }
}

// output[t, b, co] = bias[co] + sum_{k, ci} self[t + k - pad, b, ci] * weight[k, ci, co], in double.
std::vector<double> tbc_oracle(const TbcSpec& s, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& bias, bool magnitudes) {
  std::vector<double> y(static_cast<size_t>(s.out_time() * s.batch * s.out_channels));
  for (int64_t t = 0; t < s.out_time(); ++t) {
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t co = 0; co < s.out_channels; ++co) {
        double sum = magnitudes ? 0.0 : bias[co];
        for (int64_t k = 0; k < s.kernel; ++k) {
          const int64_t at = t + k - s.pad;
          if (at < 0 || at >= s.time) continue;
          for (int64_t ci = 0; ci < s.in_channels; ++ci) {
            const double p =
                x[(at * s.batch + b) * s.in_channels + ci] * w[(k * s.in_channels + ci) * s.out_channels + co];
            sum += magnitudes ? std::abs(p) : p;
          }
        }
        y[(t * s.batch + b) * s.out_channels + co] = sum;
      }
    }
  }
  return y;
}

TEST(ConvTbcForward, MatchesTheOracle) {
  const TbcSpec specs[] = {
      {9, 2, 3, 4, 3, 1}, {16, 3, 8, 5, 5, 2}, {4, 1, 2, 3, 4, 0}, {1, 2, 3, 2, 3, 1}, {40, 4, 33, 17, 3, 1}};
  for (const TbcSpec& s : specs) {
    for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
      const std::vector<double> x = held(pattern(s.time * s.batch * s.in_channels, 1), dtype);
      const std::vector<double> w = held(pattern(s.kernel * s.in_channels * s.out_channels, 2), dtype);
      const std::vector<double> b = pattern(s.out_channels, 4);
      ForwardOptions o;
      o.input_dtype = o.weight_dtype = o.output_dtype = dtype;  // (bias stays FLOAT: its dtype is free)
      const ForwardResult r = run_conv_tbc_forward(s, o, x, w, b);
      const std::string where =
          "T " + std::to_string(s.time) + " K " + std::to_string(s.kernel) + " dtype " + std::to_string(dtype);
      ASSERT_EQ(r.status, 0) << where << ": " << r.error;
      expect_close(r.output, tbc_oracle(s, x, w, b, false), tbc_oracle(s, x, w, b, true), dtype, where);
    }
  }
}

// An empty self with a non-empty output: the output is the bias, broadcast.
TEST(ConvTbcForward, EmptySelfGivesTheBias) {
  const TbcSpec s{0, 2, 3, 4, 3, 2};  // T 0, pad 2, K 3: T_out 2
  const std::vector<double> b = {0.5, -1.0, 2.0, 0.25};
  const ForwardResult r = run_conv_tbc_forward(s, ForwardOptions{}, {}, pattern(3 * 3 * 4, 2), b);
  ASSERT_EQ(r.status, 0) << r.error;
  ASSERT_EQ(r.output.size(), 2u * 2u * 4u);
  for (size_t i = 0; i < r.output.size(); ++i) EXPECT_EQ(r.output[i], b[i % 4]);
}

TEST(ConvDepthwise2dForward, MatchesTheOracle) {
  const ConvSpec specs[] = {make_spec(2, 2, 4, 4, 4, {9, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
                            make_spec(2, 1, 3, 6, 3, {11, 10}, {5, 3}, {2, 1}, {2, 0}, {2, 0}, {1, 2}),
                            make_spec(2, 2, 8, 8, 8, {16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1})};
  for (const ConvSpec& c : specs) {
    for (aclDataType dtype : {ACL_FLOAT, ACL_BF16}) {
      for (bool with_bias : {false, true}) {
        const std::vector<double> x = held(pattern(product(c.input_shape()), 1), dtype);
        const std::vector<double> w = held(pattern(product(c.weight_shape()), 2), dtype);
        const std::vector<double> b = with_bias ? held(pattern(c.out_channels, 4), dtype) : std::vector<double>{};
        ForwardOptions o;
        o.input_dtype = o.weight_dtype = o.bias_dtype = o.output_dtype = dtype;
        const ForwardResult r = run_conv_depthwise2d(c, o, x, w, b);
        ASSERT_EQ(r.status, 0) << r.error;
        expect_close(r.output, oracle_forward(c, x, w, b), oracle_forward(c, absolute(x), absolute(w), {}), dtype,
                     "depthwise Cin " + std::to_string(c.in_channels));
      }
    }
  }
}

// Finite weights whose Winograd transform overflows (three taps of 3e38 in a kernel row sum past
// FLT_MAX in G w) on a layer `winograd` takes: its step flags the transformed weights it found not
// finite, and the non-finite repair recomputes the result, which the double oracle finds finite.
TEST(ConvForward, WeightsOverflowingInTheWinogradTransformAreRepaired) {
  const ConvSpec s = make_spec(2, 2, 64, 64, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  const std::vector<double> x(static_cast<size_t>(product(s.input_shape())), 1e-6);
  std::vector<double> w(static_cast<size_t>(product(s.weight_shape())), 0.0);
  for (size_t i = 0; i < w.size(); i += 9 * 64) w[i] = w[i + 1] = w[i + 2] = 3e38;  // (co, ci 0)'s first row
  ForwardResult y;
  const std::string lines = verbose_lines([&] { y = run_convolution_forward(s, {}, x, w, {}); });
  ASSERT_EQ(y.status, 0) << y.error;
  if (!entries_forced()) {
    EXPECT_NE(lines.find("output=winograd"), std::string::npos) << lines;
  }
  const std::vector<double> want = oracle_forward(s, x, w, {});
  ASSERT_EQ(y.output.size(), want.size());
  for (size_t e = 0; e < want.size(); ++e) {
    ASSERT_TRUE(std::isfinite(want[e]));
    EXPECT_NEAR(y.output[e], want[e], 1e-5 * std::abs(want[e]) + 1e-30) << e;
  }
}

}  // namespace
}  // namespace testing_support
