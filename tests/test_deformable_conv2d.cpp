// aclnnDeformableConv2d and aclnnDeformableConv2dBackward against torchvision's deform_conv2d in float64
// (tests/data/deform_golden.txt, written by make_deform_golden.py), in FLOAT, FLOAT16 and BF16, contiguous
// and strided; a finite-difference check of gradOffset (dx, dy and the mask); the same bits for any
// thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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
  return {c.fields.at("x"),    c.fields.at("weight"),      c.fields.at("offset"),
          c.fields.at("bias"), c.fields.at("grad_output"), c.fields.at("deform_out")};
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
// result's largest magnitude (room for float sums).
void expect_near_truth(const std::vector<double>& got, const std::vector<double>& truth, aclDataType dtype,
                       const std::string& what) {
  ASSERT_EQ(got.size(), truth.size()) << what;
  double scale = 0;
  for (double v : truth) scale = std::max(scale, std::abs(v));
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
      // gradWeight comes from offsetOut, which holds deformOut rounded to the dtype: for 16-bit types
      // the truth is then the rounded columns' correlation, one rounding of each column away.
      if (v.dtype == ACL_FLOAT) expect_near_truth(r.grad_weight, c.fields.at("grad_weight"), v.dtype, "gradWeight");
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

TEST(DeformableConv2d, SameBitsForAnyThreadCount) {
#ifdef _OPENMP
  const GoldenCase c = golden_cases().at(1);
  const int threads = omp_get_max_threads();
  std::vector<DeformResult> runs;
  for (int t : {1, 3}) {
    omp_set_num_threads(t);
    runs.push_back(run_deformable_forward(spec_of(c), ACL_FLOAT, Layout::kContiguous, inputs_of(c)));
    runs.push_back(run_deformable_backward(spec_of(c), ACL_FLOAT, Layout::kContiguous, inputs_of(c)));
  }
  omp_set_num_threads(threads);
  for (size_t i = 0; i < 2; ++i) {
    const DeformResult &a = runs[i], &b = runs[i + 2];
    ASSERT_EQ(a.status, 0) << a.error;
    EXPECT_EQ(a.out, b.out);
    EXPECT_EQ(a.deform_out, b.deform_out);
    EXPECT_EQ(a.grad_input, b.grad_input);
    EXPECT_EQ(a.grad_weight, b.grad_weight);
    EXPECT_EQ(a.grad_offset, b.grad_offset);
    EXPECT_EQ(a.grad_bias, b.grad_bias);
  }
#else
  GTEST_SKIP() << "built without OpenMP";
#endif
}

}  // namespace
}  // namespace testing_support
