// aclnnDeformableConv2d and aclnnDeformableConv2dBackward against torchvision's deform_conv2d in float64
// (tests/data/deform_golden.txt, written by make_deform_golden.py), in FLOAT, FLOAT16 and BF16, contiguous
// and strided; a finite-difference check of gradOffset (dx, dy and the mask); the same bits for any
// thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/env.h"
#include "support/golden.h"
#include "support/run_deform.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace testing_support {
namespace {

DeformSpec spec_of(const GoldenCase& c) {
  DeformSpec s;
  s.batch = c.integer("batch");
  s.in_channels = c.integer("in_channels");
  s.out_channels = c.integer("out_channels");
  s.in_h = c.ints("in_size")[0], s.in_w = c.ints("in_size")[1];
  s.kh = c.ints("kernel")[0], s.kw = c.ints("kernel")[1];
  for (int i = 0; i < 2; ++i) {
    s.stride[i] = c.ints("stride")[static_cast<size_t>(i)];
    s.dilation[i] = c.ints("dilation")[static_cast<size_t>(i)];
  }
  for (int i = 0; i < 4; ++i) s.padding[i] = c.ints("padding")[static_cast<size_t>(i)];
  s.groups = c.integer("groups");
  s.deformable_groups = c.integer("deformable_groups");
  return s;
}

DeformInputs inputs_of(const GoldenCase& c) {
  DeformInputs in;
  in.x = c.fields.at("x"), in.weight = c.fields.at("weight"), in.offset = c.fields.at("offset");
  in.bias = c.fields.at("bias"), in.grad_output = c.fields.at("grad_output"), in.offset_out = c.fields.at("deform_out");
  return in;
}

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  for (const GoldenCase& c : read_golden("deform_golden.txt")) {
    if (c.fields.count("batch") != 0) cases.push_back(c);
  }
  return cases;
}

// The dtype's unit roundoff.
double roundoff(aclDataType dtype) {
  return dtype == ACL_FLOAT16 ? std::ldexp(1.0, -11) : dtype == ACL_BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
}

// Each value within one rounding into the dtype of the float64 truth, plus 64 float roundoffs of the
// result's largest magnitude times `growth` (room for float sums; a sum of n products, n large, rounds
// about sqrt(n) times more).
void expect_near_truth(const std::vector<double>& got, const std::vector<double>& truth, aclDataType dtype,
                       const std::string& what, double growth = 1) {
  ASSERT_EQ(got.size(), truth.size()) << what;
  double scale = 0;
  for (double v : truth) scale = std::max(scale, std::abs(v) * growth);
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = roundoff(dtype) * std::abs(truth[i]) + 64 * std::ldexp(1.0, -24) * scale;
    if (!(std::abs(got[i] - truth[i]) <= allowed) && shown++ < 5) {
      ADD_FAILURE() << what << " [" << i << "]: " << got[i] << " vs " << truth[i] << " (allowed " << allowed << ")";
    }
  }
}

const char* dtype_text(aclDataType dtype) {
  return dtype == ACL_FLOAT16 ? "FLOAT16" : dtype == ACL_BF16 ? "BF16" : "FLOAT";
}

// `values` rounded to `dtype` (as a tensor of it holds them).
std::vector<double> rounded(const std::vector<double>& values, aclDataType dtype) {
  DeviceTensor t({static_cast<int64_t>(values.size())}, dtype, ACL_FORMAT_ND);
  t.fill(values);
  return t.read();
}

// gradWeight[o, ci, kh, kw] = sum over n, oh, ow of gradOutput[n, o, oh, ow] * columns[n, group(o)*Cg + ci,
// oh*KH + kh, ow*KW + kw], in double.
std::vector<double> weight_gradient(const DeformSpec& s, const std::vector<double>& grad_output,
                                    const std::vector<double>& columns) {
  const int64_t cg = s.in_channels / s.groups, og = s.out_channels / s.groups, oh_n = s.out_h(), ow_n = s.out_w();
  std::vector<double> result;
  for (int64_t o = 0; o < s.out_channels; ++o) {
    for (int64_t ci = 0; ci < cg; ++ci) {
      for (int64_t kh = 0; kh < s.kh; ++kh) {
        for (int64_t kw = 0; kw < s.kw; ++kw) {
          double sum = 0;
          for (int64_t n = 0; n < s.batch; ++n) {
            for (int64_t oh = 0; oh < oh_n; ++oh) {
              for (int64_t ow = 0; ow < ow_n; ++ow) {
                const int64_t c = o / og * cg + ci;
                sum += grad_output[static_cast<size_t>(((n * s.out_channels + o) * oh_n + oh) * ow_n + ow)] *
                       columns[static_cast<size_t>(
                           ((n * s.in_channels + c) * oh_n * s.kh + oh * s.kh + kh) * ow_n * s.kw + ow * s.kw + kw)];
              }
            }
          }
          result.push_back(sum);
        }
      }
    }
  }
  return result;
}

struct Variant {
  aclDataType dtype;
  Layout layout;
};
const Variant kVariants[] = {{ACL_FLOAT, Layout::kContiguous},
                             {ACL_FLOAT, Layout::kStrided},
                             {ACL_FLOAT16, Layout::kContiguous},
                             {ACL_BF16, Layout::kReversed}};

TEST(DeformableConv2d, ForwardMatchesTorchvision) {
  for (const GoldenCase& c : golden_cases()) {
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(c.name + " " + dtype_text(v.dtype));
      const DeformResult r = run_deformable_forward(spec_of(c), v.dtype, v.layout, inputs_of(c));
      ASSERT_EQ(r.status, 0) << r.error;
      expect_near_truth(r.out, c.fields.at("out"), v.dtype, "out");
      expect_near_truth(r.deform_out, c.fields.at("deform_out"), v.dtype, "deformOut");
    }
  }
}

TEST(DeformableConv2d, ForwardWithoutBiasOrDeformOut) {
  const GoldenCase c = golden_cases().at(1);
  DeformInputs in = inputs_of(c);
  const DeformResult with_bias = run_deformable_forward(spec_of(c), ACL_FLOAT, Layout::kContiguous, in, false);
  ASSERT_EQ(with_bias.status, 0) << with_bias.error;
  EXPECT_TRUE(with_bias.deform_out.empty());
  expect_near_truth(with_bias.out, c.fields.at("out"), ACL_FLOAT, "out");
  in.bias.clear();
  const DeformResult r = run_deformable_forward(spec_of(c), ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(r.status, 0) << r.error;
  const DeformSpec s = spec_of(c);
  std::vector<double> truth = c.fields.at("out");
  const int64_t plane = s.out_h() * s.out_w();
  for (size_t i = 0; i < truth.size(); ++i)
    truth[i] -= c.fields.at("bias")[static_cast<size_t>(static_cast<int64_t>(i) / plane % s.out_channels)];
  expect_near_truth(r.out, truth, ACL_FLOAT, "out without bias");
}

TEST(DeformableConv2d, BackwardMatchesTorchvision) {
  for (const GoldenCase& c : golden_cases()) {
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(c.name + " " + dtype_text(v.dtype));
      const DeformResult r = run_deformable_backward(spec_of(c), v.dtype, v.layout, inputs_of(c));
      ASSERT_EQ(r.status, 0) << r.error;
      expect_near_truth(r.grad_input, c.fields.at("grad_input"), v.dtype, "gradInput");
      // gradWeight comes from offsetOut, which holds deformOut rounded to the dtype: the truth is the
      // correlation of gradOutput with the rounded columns.
      expect_near_truth(
          r.grad_weight,
          weight_gradient(spec_of(c), c.fields.at("grad_output"), rounded(c.fields.at("deform_out"), v.dtype)), v.dtype,
          "gradWeight");
      expect_near_truth(r.grad_offset, c.fields.at("grad_offset"), v.dtype, "gradOffset");
      expect_near_truth(r.grad_bias, c.fields.at("grad_bias"), v.dtype, "gradBias");
    }
  }
}

// The doc samples' call (every input 1: integer sampling points, shifted by (1, 1)): out, gradInput and
// gradOffset as torchvision gives them (the backward sample prints no gradOffset).
TEST(DeformableConv2d, DocSampleCallMatchesTorchvision) {
  GoldenCase golden;
  for (const GoldenCase& c : read_golden("deform_golden.txt")) {
    if (c.name == "doc_sample_ones") golden = c;
  }
  ASSERT_EQ(golden.name, "doc_sample_ones");
  DeformSpec s;
  s.in_channels = 6, s.out_channels = 4, s.in_h = 2, s.in_w = 4, s.kh = s.kw = 5, s.groups = 2;
  for (int64_t& p : s.padding) p = 2;
  DeformInputs in;
  in.x.assign(48, 1.0), in.weight.assign(300, 1.0), in.offset.assign(600, 1.0), in.bias.assign(4, 0.0);
  in.grad_output.assign(32, 1.0), in.offset_out.assign(1200, 1.0);
  const DeformResult forward = run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(forward.status, 0) << forward.error;
  EXPECT_EQ(forward.out, golden.fields.at("out"));
  const DeformResult backward = run_deformable_backward(s, ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(backward.status, 0) << backward.error;
  EXPECT_EQ(backward.grad_input, golden.fields.at("grad_input"));
  // gradOffset: torchvision's, except at a sampling point on the line h = -1 or w = -1 (the shifts are all
  // 1), where the bilinear value has no derivative: CANN's backward takes no point outside -1 < h, w and
  // gives 0, torchvision the derivative from inside.
  const std::vector<double>& truth = golden.fields.at("grad_offset");
  ASSERT_EQ(backward.grad_offset.size(), truth.size());
  int on_border = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    const int64_t ow = static_cast<int64_t>(i) % 4, oh = static_cast<int64_t>(i) / 4 % 2,
                  k = static_cast<int64_t>(i) / 8 % 25;
    const int64_t h = oh - 2 + k / 5 + 1, w = ow - 2 + k % 5 + 1;
    if (h == -1 || w == -1) {
      ++on_border;
      EXPECT_EQ(backward.grad_offset[i], 0.0) << i;
    } else {
      EXPECT_EQ(backward.grad_offset[i], truth[i]) << i;
    }
  }
  EXPECT_GT(on_border, 0);
  EXPECT_EQ(backward.grad_weight, std::vector<double>(300, 8.0));  // offsetOut all 1: gradOutput's sum
  EXPECT_EQ(backward.grad_bias, std::vector<double>(4, 8.0));
}

// L = <gradOutput, out(offset)> is linear in the mask and, away from integer sampling points, linear in
// each shift within a cell: the central difference with a step that stays inside the cell (the goldens'
// shifts are odd multiples of 1/32, the step 1/64) is exact up to the float rounding of out.
TEST(DeformableConv2d, GradOffsetIsTheFiniteDifference) {
  const GoldenCase c = golden_cases().at(2);
  const DeformSpec s = spec_of(c);
  const DeformInputs in = inputs_of(c);
  const DeformResult backward = run_deformable_backward(s, ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(backward.status, 0) << backward.error;
  const auto loss = [&](const std::vector<double>& offset) {
    DeformInputs shifted = in;
    shifted.offset = offset;
    const DeformResult r = run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, shifted, false);
    EXPECT_EQ(r.status, 0) << r.error;
    double sum = 0;
    for (size_t i = 0; i < r.out.size(); ++i) sum += r.out[i] * in.grad_output[i];
    return sum;
  };
  const double step = 1.0 / 64;
  for (size_t j = 0; j < in.offset.size(); j += 7) {
    std::vector<double> up = in.offset, down = in.offset;
    up[j] += step, down[j] -= step;
    const double difference = (loss(up) - loss(down)) / (2 * step);
    EXPECT_NEAR(backward.grad_offset[j], difference, 1e-4 * (1 + std::abs(difference))) << "offset element " << j;
  }
}

// body() at 1 thread and at 3 (one run where OpenMP is off).
template <typename Body>
std::vector<DeformResult> at_1_and_3_threads(Body body) {
  std::vector<DeformResult> runs;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
  for (int t : {1, 3}) {
    omp_set_num_threads(t);
    runs.push_back(body());
  }
  omp_set_num_threads(threads);
#else
  runs.push_back(body());
#endif
  return runs;
}

void expect_same_bits(const DeformResult& a, const DeformResult& b) {
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.deform_out, b.deform_out);
  EXPECT_EQ(a.grad_input, b.grad_input);
  EXPECT_EQ(a.grad_weight, b.grad_weight);
  EXPECT_EQ(a.grad_offset, b.grad_offset);
  EXPECT_EQ(a.grad_bias, b.grad_bias);
}

// Runs `body` with ACLNN_CONVBWD_KERNELS set to `kernels` (read at phase 1), then restores the setting.
template <typename Body>
auto with_kernels(const char* kernels, Body body) {
  const ScopedEnv setting("ACLNN_CONVBWD_KERNELS", kernels);
  return body();
}

// Deterministic values that are not dyadic (so that float rounding happens), in [-scale, scale].
std::vector<double> irregular(int64_t count, int seed, double scale) {
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<size_t>(i)] = scale * std::sin(0.7 * static_cast<double>(i) + seed);
  return values;
}

DeformInputs irregular_inputs(const DeformSpec& s) {
  DeformInputs in;
  in.x = irregular(s.batch * s.in_channels * s.in_h * s.in_w, 1, 1.0);
  in.weight = irregular(s.out_channels * (s.in_channels / s.groups) * s.kh * s.kw, 2, 1.0);
  const int64_t block = s.deformable_groups * s.kh * s.kw * s.out_h() * s.out_w();
  for (int64_t n = 0; n < s.batch; ++n) {
    const std::vector<double> shifts = irregular(2 * block, 3 + static_cast<int>(n), 2.5),
                              masks = irregular(block, 5 + static_cast<int>(n), 1.0);
    in.offset.insert(in.offset.end(), shifts.begin(), shifts.end());
    for (double m : masks) in.offset.push_back(std::abs(m));
  }
  in.bias = irregular(s.out_channels, 6, 1.0);
  in.grad_output = irregular(s.batch * s.out_channels * s.out_h() * s.out_w(), 7, 1.0);
  return in;
}

// Larger layers than the goldens' (several GEMM blocks of positions, deformOut rows past one store's
// chunk, negative padding, groups and deformable groups apart): every forward entry against the
// reference (float roundings: the tolerance of expect_near_truth), the same bits at 1 and 3 threads.
TEST(DeformableConv2d, ForwardEntriesMatchTheReferenceOnLargerLayers) {
  DeformSpec wide;
  wide.batch = 2, wide.in_channels = 4, wide.out_channels = 6, wide.in_h = 5, wide.in_w = 700, wide.kh = wide.kw = 3;
  for (int64_t& p : wide.padding) p = 1;
  wide.groups = 2, wide.deformable_groups = 2;
  DeformSpec cropped;  // negative padding: CANN's forward takes it
  cropped.in_channels = 3, cropped.out_channels = 2, cropped.in_h = 9, cropped.in_w = 11, cropped.kh = 2,
  cropped.kw = 3;
  cropped.padding[0] = -1, cropped.padding[1] = 2, cropped.padding[2] = 0, cropped.padding[3] = -2;
  cropped.stride[1] = 2, cropped.dilation[0] = 2, cropped.deformable_groups = 3;
  for (const DeformSpec& s : {wide, cropped}) {
    const DeformInputs in = irregular_inputs(s);
    const DeformResult truth =
        with_kernels("ref", [&] { return run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in); });
    ASSERT_EQ(truth.status, 0) << truth.error;
    const std::vector<DeformResult> runs =
        at_1_and_3_threads([&] { return run_deformable_forward(s, ACL_FLOAT, Layout::kStrided, in); });
    ASSERT_EQ(runs[0].status, 0) << runs[0].error;
    expect_near_truth(runs[0].out, truth.out, ACL_FLOAT, "out");
    expect_near_truth(runs[0].deform_out, truth.deform_out, ACL_FLOAT, "deformOut");
    for (const DeformResult& r : runs) expect_same_bits(r, runs[0]);
  }
}

// The backward's entries against the reference on the same larger layers (several chunks' worth of
// positions in the wide one), at 1 and 3 threads with the same bits.
TEST(DeformableConv2d, BackwardEntriesMatchTheReferenceOnLargerLayers) {
  DeformSpec wide;
  wide.batch = 2, wide.in_channels = 4, wide.out_channels = 6, wide.in_h = 5, wide.in_w = 700, wide.kh = wide.kw = 3;
  for (int64_t& p : wide.padding) p = 1;
  wide.groups = 2, wide.deformable_groups = 2;
  DeformSpec strided;
  strided.in_channels = 3, strided.out_channels = 2, strided.in_h = 9, strided.in_w = 11, strided.kh = 2;
  strided.kw = 3, strided.padding[0] = 1, strided.padding[3] = 2, strided.stride[1] = 2, strided.dilation[0] = 2;
  strided.deformable_groups = 3;
  for (const DeformSpec& s : {wide, strided}) {
    DeformInputs in = irregular_inputs(s);
    in.offset_out = irregular(s.batch * s.in_channels * s.out_h() * s.kh * s.out_w() * s.kw, 8, 1.0);
    const DeformResult truth =
        with_kernels("ref", [&] { return run_deformable_backward(s, ACL_FLOAT, Layout::kContiguous, in); });
    ASSERT_EQ(truth.status, 0) << truth.error;
    const std::vector<DeformResult> runs =
        at_1_and_3_threads([&] { return run_deformable_backward(s, ACL_FLOAT, Layout::kStrided, in); });
    ASSERT_EQ(runs[0].status, 0) << runs[0].error;
    expect_near_truth(runs[0].grad_input, truth.grad_input, ACL_FLOAT, "gradInput");
    // (gradWeight sums N*outH*outW products, the portable path's without fused multiply-adds)
    expect_near_truth(runs[0].grad_weight, truth.grad_weight, ACL_FLOAT, "gradWeight",
                      std::sqrt(static_cast<double>(s.batch * s.out_h() * s.out_w())) / 4);
    expect_near_truth(runs[0].grad_offset, truth.grad_offset, ACL_FLOAT, "gradOffset");
    expect_near_truth(runs[0].grad_bias, truth.grad_bias, ACL_FLOAT, "gradBias");
    for (const DeformResult& r : runs) expect_same_bits(r, runs[0]);
  }
}

// Shifts that are NaN, infinite or far outside: the point reads nothing (every neighbour outside), in
// every entry alike.
TEST(DeformableConv2d, NonFiniteAndHugeShiftsReadNothing) {
  const GoldenCase c = golden_cases().at(0);
  const DeformSpec s = spec_of(c);
  DeformInputs in = inputs_of(c);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), 1e10, -1e10};
  const size_t shifts = in.offset.size() / 3 * 2;
  for (size_t i = 0; i < shifts; i += 5) in.offset[i] = specials[i / 5 % 5];
  const DeformResult truth =
      with_kernels("ref", [&] { return run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in); });
  const DeformResult fast = run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(truth.status, 0) << truth.error;
  ASSERT_EQ(fast.status, 0) << fast.error;
  for (double v : truth.out) EXPECT_TRUE(std::isfinite(v));
  expect_near_truth(fast.out, truth.out, ACL_FLOAT, "out");
  expect_near_truth(fast.deform_out, truth.deform_out, ACL_FLOAT, "deformOut");
  const DeformResult backward = run_deformable_backward(s, ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(backward.status, 0) << backward.error;
  for (double v : backward.grad_offset) EXPECT_TRUE(std::isfinite(v));
}

// Sums over nothing are the true results: out = bias without input channels; a batch of none gives
// gradWeight and gradBias zero.
TEST(DeformableConv2d, EmptyInputsGiveTheTrueResults) {
  DeformSpec s;
  s.in_channels = 0, s.out_channels = 3, s.in_h = 4, s.in_w = 5, s.kh = s.kw = 3;
  for (int64_t& p : s.padding) p = 1;
  DeformInputs in;
  in.offset = irregular(3 * 9 * s.out_h() * s.out_w(), 1, 1.0);
  in.bias = {0.5, -1.25, 2.0};
  for (const char* kernels : {"gemm", "ref"}) {
    const DeformResult r =
        with_kernels(kernels, [&] { return run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in); });
    ASSERT_EQ(r.status, 0) << r.error;
    for (size_t i = 0; i < r.out.size(); ++i) EXPECT_EQ(r.out[i], in.bias[i / 20]) << kernels << " " << i;
  }
  DeformSpec none;
  none.batch = 0, none.in_channels = 2, none.out_channels = 2, none.in_h = 3, none.in_w = 3, none.kh = none.kw = 1;
  DeformInputs nothing;
  nothing.weight = {1, 2, 3, 4};
  const DeformResult r = run_deformable_backward(none, ACL_FLOAT, Layout::kContiguous, nothing);
  ASSERT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(r.grad_weight, std::vector<double>(4, 0.0));
  EXPECT_EQ(r.grad_bias, std::vector<double>(2, 0.0));
}

// Outputs whose views overlap themselves are written in view order, last write wins (docs/runtime.md).
TEST(DeformableConv2d, SelfOverlappingOutputsAreWrittenInViewOrder) {
  const GoldenCase c = golden_cases().at(1);
  const DeformSpec s = spec_of(c);
  DeformInputs in = inputs_of(c);
  const DeformResult plain_forward = run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in, false);
  const DeformResult plain_backward = run_deformable_backward(s, ACL_FLOAT, Layout::kContiguous, in);
  in.result_strides = {5, 1, 1, 1};  // every dim stride 1 or so: many elements share storage
  const DeformResult forward = run_deformable_forward(s, ACL_FLOAT, Layout::kContiguous, in, false);
  const DeformResult backward = run_deformable_backward(s, ACL_FLOAT, Layout::kContiguous, in);
  ASSERT_EQ(forward.status, 0) << forward.error;
  ASSERT_EQ(backward.status, 0) << backward.error;
  EXPECT_EQ(forward.out, last_writes(plain_forward.out, forward.result_offsets));
  EXPECT_EQ(backward.grad_offset, last_writes(plain_backward.grad_offset, backward.result_offsets));
}

// The fast entries are the ones the tests above reach by default (the reference runs them again under
// ACLNN_CONVBWD_KERNELS=ref): the verbose line names each result's entry.
TEST(DeformableConv2d, FastEntriesAreChosenByDefault) {
  if (std::getenv("ACLNN_CONVBWD_KERNELS") != nullptr) GTEST_SKIP() << "entries named by ACLNN_CONVBWD_KERNELS";
  const GoldenCase c = golden_cases().at(1);
  setenv("ACLNN_CONVBWD_VERBOSE", "1", 1);
  testing::internal::CaptureStdout();
  const DeformResult forward = run_deformable_forward(spec_of(c), ACL_FLOAT, Layout::kContiguous, inputs_of(c));
  const DeformResult backward = run_deformable_backward(spec_of(c), ACL_FLOAT, Layout::kContiguous, inputs_of(c));
  const std::string lines = testing::internal::GetCapturedStdout();
  unsetenv("ACLNN_CONVBWD_VERBOSE");
  ASSERT_EQ(forward.status, 0) << forward.error;
  ASSERT_EQ(backward.status, 0) << backward.error;
  for (const char* chosen : {",out=gemm:", " gradWeight=gemm:", ",gradInput+gradOffset=gemm:", " gradBias=lanes:"})
    EXPECT_NE(lines.find(chosen), std::string::npos) << chosen << " in " << lines;
}

}  // namespace
}  // namespace testing_support
