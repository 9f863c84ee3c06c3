// Every status-code row of aclnnQuantConvolution's page, in CANN's check order: the code, a message
// naming the API, the parameter and the rule. Phase 1 never reads data, so the tensors have no memory,
// as CANN's own unit tests do; one case runs a refused call on real tensors to prove outputs untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_quant_convolution.h"
#include "support/device_tensor.h"
#include "support/phase1_cases.h"

namespace testing_support {
namespace {

constexpr aclnnStatus kNull = 161001, kInvalid = 161002;
constexpr const char* kApi = "aclnnQuantConvolutionGetWorkspaceSize";

// A valid call (the ops-nn example's A2 call, smaller), which each case changes in one place.
struct Call {
  Shape input{{2, 2, 6, 6, 6}, ACL_INT8, ACL_FORMAT_NCDHW}, weight{{2, 2, 3, 3, 3}, ACL_INT8, ACL_FORMAT_NCDHW},
      bias{{2}, ACL_FLOAT, ACL_FORMAT_ND}, scale{{2}, ACL_FLOAT, ACL_FORMAT_ND},
      output{{2, 2, 6, 6, 6}, ACL_BF16, ACL_FORMAT_NCDHW};
  std::vector<int64_t> stride{1, 1, 1}, padding{1, 1, 1}, dilation{1, 1, 1};
  bool null_stride = false, null_padding = false, null_dilation = false, null_workspace_size = false,
       null_executor = false;
  int64_t groups = 1;
  int32_t offsetx = 0;
  const char* round_mode = nullptr;

  // The 2-D call Ascend 950's examples make: NCHW, INT64 scale, INT32 bias, FLOAT16 output.
  void make_2d() {
    input = {{1, 2, 8, 8}, ACL_INT8, ACL_FORMAT_NCHW};
    weight = {{3, 2, 3, 3}, ACL_INT8, ACL_FORMAT_NCHW};
    bias = {{3}, ACL_INT32, ACL_FORMAT_ND};
    scale = {{3}, ACL_INT64, ACL_FORMAT_ND};
    output = {{1, 3, 8, 8}, ACL_FLOAT16, ACL_FORMAT_NCHW};
    stride = {1, 1}, padding = {1, 1}, dilation = {1, 1};
  }
};

aclIntArray* make_array(const std::vector<int64_t>& values, bool null) {
  return null ? nullptr : aclCreateIntArray(values.data(), values.size());
}

Outcome plan(const Call& c) {
  aclTensor *x = c.input.make(), *w = c.weight.make(), *b = c.bias.make(), *s = c.scale.make(), *y = c.output.make();
  aclIntArray *stride = make_array(c.stride, c.null_stride), *padding = make_array(c.padding, c.null_padding),
              *dilation = make_array(c.dilation, c.null_dilation);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = aclnnQuantConvolutionGetWorkspaceSize(
      x, w, b, s, nullptr, stride, padding, dilation, false, nullptr, c.groups, c.offsetx, c.round_mode, y,
      c.null_workspace_size ? nullptr : &size, c.null_executor ? nullptr : &executor);
  const Outcome outcome{status, recent_error()};
  for (aclTensor* t : {x, w, b, s, y}) aclDestroyTensor(t);
  for (aclIntArray* a : {stride, padding, dilation}) aclDestroyIntArray(a);
  if (status == 0) aclDestroyAclOpExecutor(executor);
  return outcome;
}

using Case = PlanCase<Call>;

void expect_cases(const std::vector<Case>& cases) { testing_support::expect_cases(cases, plan, kApi); }

TEST(QuantConvolutionValidation, TheValidCallsPass) {
  expect_cases({
      {"the A2 call", [](Call&) {}, 0, ""},
      {"FLOAT16 output, FLOAT16 bias", [](Call& c) { c.output.dtype = ACL_FLOAT16, c.bias.dtype = ACL_FLOAT16; }, 0,
       ""},
      {"BF16 output, BF16 bias", [](Call& c) { c.bias.dtype = ACL_BF16; }, 0, ""},
      {"A2 ignores offsetx and roundMode", [](Call& c) { c.offsetx = 1000, c.round_mode = "!"; }, 0, ""},
      {"the 950 2-D call", [](Call& c) { c.make_2d(); }, 0, ""},
      {"950: UINT64 scale, 6 paddings, groups",
       [](Call& c) {
         c.scale.dtype = ACL_UINT64, c.padding = {1, 1, 0, 3, 1, 1}, c.groups = 2;
         c.weight.dims = {2, 1, 3, 3, 3}, c.output.dims = {2, 2, 6, 7, 6};
       },
       0, ""},
      {"950: roundMode of letters", [](Call& c) { c.make_2d(), c.round_mode = "rint_2"; }, 0, ""},
      {"950: offsetx -128", [](Call& c) { c.make_2d(), c.offsetx = -128; }, 0, ""},
  });
}

TEST(QuantConvolutionValidation, NullPointersInCannsOrder) {
  expect_cases({
      {"bias first", [](Call& c) { c.bias.null = true, c.input.null = true; }, kNull, "bias is nullptr"},
      {"input",
       [](Call& c) {
         c.input.null = true, c.stride = {0, 1, 1};
       },
       kNull, "input is nullptr"},
      {"weight", [](Call& c) { c.weight.null = true; }, kNull, "weight is nullptr"},
      {"scale", [](Call& c) { c.scale.null = true; }, kNull, "scale is nullptr"},
      {"stride", [](Call& c) { c.null_stride = true; }, kNull, "stride is nullptr"},
      {"padding", [](Call& c) { c.null_padding = true; }, kNull, "padding is nullptr"},
      {"output", [](Call& c) { c.output.null = true; }, kNull, "output is nullptr"},
      {"workspaceSize", [](Call& c) { c.null_workspace_size = true; }, kNull, "workspaceSize is nullptr"},
      {"executor", [](Call& c) { c.null_executor = true; }, kNull, "executor is nullptr"},
      {"dilation (a length check, as CANN's)", [](Call& c) { c.null_dilation = true; }, kInvalid,
       "dilation is nullptr"},
  });
}

TEST(QuantConvolutionValidation, DtypesScaleFirst) {
  expect_cases({
      {"scale FLOAT16 (before a bad input)", [](Call& c) { c.scale.dtype = ACL_FLOAT16, c.input.dtype = ACL_FLOAT; },
       kInvalid, "scale dtype FLOAT16"},
      {"input FLOAT8_E4M3FN", [](Call& c) { c.input.dtype = c.weight.dtype = ACL_FLOAT8_E4M3FN; }, kInvalid,
       "input dtype FLOAT8_E4M3FN is not supported: only INT8"},
      {"input HIFLOAT8", [](Call& c) { c.input.dtype = c.weight.dtype = ACL_HIFLOAT8; }, kInvalid,
       "input dtype HIFLOAT8 is not supported"},
      {"input FLOAT", [](Call& c) { c.input.dtype = ACL_FLOAT; }, kInvalid, "input dtype FLOAT"},
      {"weight UINT8", [](Call& c) { c.weight.dtype = ACL_UINT8; }, kInvalid, "weight dtype UINT8"},
      {"output FLOAT", [](Call& c) { c.output.dtype = ACL_FLOAT; }, kInvalid, "output dtype FLOAT"},
      {"FLOAT16 bias with BF16 output", [](Call& c) { c.bias.dtype = ACL_FLOAT16; }, kInvalid,
       "bias dtype FLOAT16 with output dtype BF16"},
      {"BF16 bias with FLOAT16 output", [](Call& c) { c.bias.dtype = ACL_BF16, c.output.dtype = ACL_FLOAT16; },
       kInvalid, "bias dtype BF16 with output dtype FLOAT16"},
      {"INT32 bias with BF16 output", [](Call& c) { c.bias.dtype = ACL_INT32; }, kInvalid, "bias dtype INT32"},
  });
}

TEST(QuantConvolutionValidation, RanksAndArrayLengths) {
  expect_cases({
      {"scale 2-D",
       [](Call& c) {
         c.scale.dims = {2, 1};
       },
       kInvalid, "scale shape [2, 1] has 2 dims"},
      {"bias 2-D",
       [](Call& c) {
         c.bias.dims = {1, 2};
       },
       kInvalid, "bias shape"},
      {"input 3-D",
       [](Call& c) {
         c.input.dims = {2, 2, 6};
       },
       kInvalid, "expected 4 (NCHW) or 5 (NCDHW)"},
      {"weight 4-D beside a 5-D input",
       [](Call& c) {
         c.weight.dims = {2, 2, 3, 3};
       },
       kInvalid, "weight shape"},
      {"output 4-D beside a 5-D input",
       [](Call& c) {
         c.output.dims = {2, 2, 6, 6};
       },
       kInvalid, "output shape"},
      {"stride of 2 for 3-D",
       [](Call& c) {
         c.stride = {1, 1};
       },
       kInvalid, "stride [1, 1] has 2 values: expected 3"},
      {"dilation of 4 for 3-D",
       [](Call& c) {
         c.dilation = {1, 1, 1, 1};
       },
       kInvalid, "dilation"},
      {"padding of 2 for 3-D (the UT's attr dim case)",
       [](Call& c) {
         c.padding = {1, 1};
       },
       kInvalid, "padding [1, 1] has 2 values: expected 3 or 6"},
      {"padding of 3 for 2-D",
       [](Call& c) {
         c.make_2d(), c.padding = {1, 1, 1};
       },
       kInvalid, "expected 2 or 4"},
  });
}

TEST(QuantConvolutionValidation, Formats) {
  expect_cases({
      {"bias NCHW", [](Call& c) { c.bias.format = ACL_FORMAT_NCHW; }, kInvalid, "bias format"},
      {"scale NCDHW", [](Call& c) { c.scale.format = ACL_FORMAT_NCDHW; }, kInvalid, "scale format"},
      {"input NDHWC (the UT's data format case)", [](Call& c) { c.input.format = ACL_FORMAT_NDHWC; }, kInvalid,
       "input format NDHWC"},
      {"weight ND", [](Call& c) { c.weight.format = ACL_FORMAT_ND; }, kInvalid, "weight format"},
      {"output NCHW for 5-D", [](Call& c) { c.output.format = ACL_FORMAT_NCHW; }, kInvalid, "output format"},
      {"2-D input NCDHW", [](Call& c) { c.make_2d(), c.input.format = ACL_FORMAT_NCDHW; }, kInvalid, "expected NCHW"},
  });
}

TEST(QuantConvolutionValidation, Values) {
  expect_cases({
      {"input N = 0", [](Call& c) { c.input.dims[0] = 0, c.output.dims[0] = 0; }, kInvalid, "input shape"},
      {"weight KH = 0", [](Call& c) { c.weight.dims[3] = 0; }, kInvalid, "weight shape"},
      {"bias [3] (the UT's scale shape case, for bias)", [](Call& c) { c.bias.dims = {3}; }, kInvalid,
       "bias shape [3] must be [2]"},
      {"scale [1] (the UT's scale shape case)", [](Call& c) { c.scale.dims = {1}; }, kInvalid,
       "scale shape [1] must be [2]"},
      {"stride 0 (the UT's attr value case)",
       [](Call& c) {
         c.stride = {1, 1, 0};
       },
       kInvalid, "stride [1, 1, 0]: every value must be >= 1"},
      {"dilation 0",
       [](Call& c) {
         c.dilation = {0, 1, 1};
       },
       kInvalid, "dilation"},
      {"padding -1 (the UT's case)",
       [](Call& c) {
         c.padding = {1, 1, -1};
       },
       kInvalid, "padding [1, 1, -1]: every value must be >= 0"},
      {"groups 0", [](Call& c) { c.groups = 0; }, kInvalid, "groups 0 must be > 0"},
      {"weight C * groups != input C (the UT's cin case)", [](Call& c) { c.weight.dims[1] = 1; }, kInvalid,
       "weight.shape[1] 1 * groups 1 must equal input channels 2"},
      {"Cout not a multiple of groups",
       [](Call& c) {
         c.groups = 2, c.weight.dims = {3, 1, 3, 3, 3}, c.bias.dims = c.scale.dims = {3};
         c.output.dims[1] = 3;
       },
       kInvalid, "multiple of groups 2"},
      {"950: roundMode \"!\"", [](Call& c) { c.make_2d(), c.round_mode = "!"; }, kInvalid, "roundMode \"!\""},
      {"950: offsetx 128", [](Call& c) { c.make_2d(), c.offsetx = 128; }, kInvalid, "offsetx 128 must be in"},
      {"950 via the INT64 scale: offsetx -129", [](Call& c) { c.scale.dtype = ACL_INT64, c.offsetx = -129; }, kInvalid,
       "offsetx -129"},
      {"output shape 4 for 6 (the UT's output shape case)",
       [](Call& c) {
         c.output.dims = {2, 2, 4, 6, 6};
       },
       kInvalid, "output shape [2, 2, 4, 6, 6] must be [2, 2, 6, 6, 6]"},
      {"output dim 0", [](Call& c) { c.output.dims[4] = 0; }, kInvalid, "output shape"},
  });
}

TEST(QuantConvolutionValidation, OursAfterCanns) {
  expect_cases({
      {"the padded input shorter than the kernel (CANN's division infers 1)",
       [](Call& c) {
         c.input.dims = {2, 2, 6, 6, 2}, c.padding = {1, 1, 0}, c.stride = {1, 1, 3};
         c.output.dims = {2, 2, 6, 6, 1};
       },
       kInvalid, "shorter than the dilated kernel"},
      {"a stride past 2^31 - 1",
       [](Call& c) {
         c.stride = {int64_t{1} << 32, 1, 1}, c.output.dims[2] = 1;
       },
       kInvalid, "past 2^31 - 1"},
  });
}

// A refused call leaves its output's bytes as they were.
TEST(QuantConvolutionValidation, OutputsUntouchedOnError) {
  DeviceTensor x({1, 2, 4, 4}, ACL_INT8, ACL_FORMAT_NCHW), w({3, 2, 3, 3}, ACL_INT8, ACL_FORMAT_NCHW);
  DeviceTensor bias({3}, ACL_INT32, ACL_FORMAT_ND), scale({3}, ACL_INT64, ACL_FORMAT_ND);
  DeviceTensor out({1, 3, 4, 4}, ACL_FLOAT16, ACL_FORMAT_NCHW);
  out.poison(0x5A);
  const std::vector<uint8_t> before = out.bytes();
  const int64_t one[] = {1, 1};
  aclIntArray *stride = aclCreateIntArray(one, 2), *padding = aclCreateIntArray(one, 2),
              *dilation = aclCreateIntArray(one, 2);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  EXPECT_EQ(
      aclnnQuantConvolutionGetWorkspaceSize(x.get(), w.get(), bias.get(), scale.get(), nullptr, stride, padding,
                                            dilation, false, nullptr, 1, 300, nullptr, out.get(), &size, &executor),
      kInvalid);
  EXPECT_EQ(out.bytes(), before);
  for (aclIntArray* a : {stride, padding, dilation}) aclDestroyIntArray(a);
}

}  // namespace
}  // namespace testing_support
