// aclnnConvolutionBackwardGetWorkspaceSize: one test per check (R0-R17 of
// docs/convolution_backward.md, then ours), each asserting the exact status code, a message that
// names the API and the parameter, and that no output was written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "aclnn/opdev/op_errno.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

using Shape = std::vector<int64_t>;

// A valid 2-D call (groups 2, 3x3, stride 1, padding 1) whose parts each test breaks in turn.
class ConvValidation : public ::testing::Test {
 protected:
  void SetUp() override { build(); }

  void build(Shape gy = {2, 4, 5, 5}, Shape x = {2, 4, 5, 5}, Shape w = {4, 2, 3, 3}, int dims_format = -1) {
    auto format = [dims_format](const Shape& s) {
      if (dims_format >= 0) return static_cast<aclFormat>(dims_format);
      return s.size() == 3 ? ACL_FORMAT_NCL : s.size() == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_NCDHW;
    };
    grad_output = std::make_unique<DeviceTensor>(gy, ACL_FLOAT, format(gy));
    input = std::make_unique<DeviceTensor>(x, ACL_FLOAT, format(x));
    weight = std::make_unique<DeviceTensor>(w, ACL_FLOAT, format(w));
    grad_input = std::make_unique<DeviceTensor>(x, ACL_FLOAT, format(x));
    grad_weight = std::make_unique<DeviceTensor>(w, ACL_FLOAT, format(w));
    grad_bias = std::make_unique<DeviceTensor>(Shape{gy.at(1)}, ACL_FLOAT, ACL_FORMAT_ND);
    grad_output->fill(pattern(grad_output->numel(), 3));
    input->fill(pattern(input->numel(), 1));
    weight->fill(pattern(weight->numel(), 2));
    const size_t p = x.size() - 2;
    set(stride, Shape(p, 1));
    set(padding, Shape(p, 1));
    set(dilation, Shape(p, 1));
    set(output_padding, Shape(p, 0));
    set(bias_sizes, Shape{gy.at(1)});
    set_mask({true, true, true});
  }

  void set(std::shared_ptr<aclIntArray>& array, const Shape& values) {
    array.reset(aclCreateIntArray(values.data(), values.size()), aclDestroyIntArray);
  }
  void set_mask(std::vector<bool> values) {
    mask_values = values;
    bool raw[8] = {};
    for (size_t i = 0; i < values.size(); ++i) raw[i] = values[i];
    mask.reset(aclCreateBoolArray(raw, values.size()), aclDestroyBoolArray);
  }
  void replace(std::unique_ptr<DeviceTensor>& tensor, const Shape& shape, aclDataType dtype, aclFormat format) {
    tensor = std::make_unique<DeviceTensor>(shape, dtype, format);
  }

  // Calls phase 1 with the current arguments; records the outputs' bytes first.
  aclnnStatus call() {
    before = {grad_input->bytes(), grad_weight->bytes(), grad_bias->bytes()};
    workspace_size = 12345;
    executor = reinterpret_cast<aclOpExecutor*>(0x1);
    const aclnnStatus status = aclnnConvolutionBackwardGetWorkspaceSize(
        null_gy ? nullptr : grad_output->get(), null_x ? nullptr : input->get(), null_w ? nullptr : weight->get(),
        bias_sizes.get(), stride.get(), padding.get(), dilation.get(), transposed, output_padding.get(), groups,
        mask.get(), cube_math_type, use_gx ? grad_input->get() : nullptr, use_gw ? grad_weight->get() : nullptr,
        use_gb ? grad_bias->get() : nullptr, null_size ? nullptr : &workspace_size,
        null_executor ? nullptr : &executor);
    const char* recent = aclGetRecentErrMsg();
    message = recent == nullptr ? "" : recent;
    if (status == 0) {
      EXPECT_EQ(aclDestroyAclOpExecutor(executor), 0);
    } else {
      EXPECT_EQ(workspace_size, 12345u) << "workspaceSize written on failure";
      EXPECT_EQ(executor, reinterpret_cast<aclOpExecutor*>(0x1)) << "executor written on failure";
    }
    return status;
  }

  // The status, a message naming the API and `words`, and untouched outputs.
  void expect_rejected(aclnnStatus status, const std::string& words) {
    EXPECT_EQ(call(), status) << message;
    EXPECT_NE(message.find("aclnnConvolutionBackwardGetWorkspaceSize"), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << "message: " << message;
    EXPECT_EQ(grad_input->bytes(), before[0]);
    EXPECT_EQ(grad_weight->bytes(), before[1]);
    EXPECT_EQ(grad_bias->bytes(), before[2]);
  }
  void expect_accepted() { EXPECT_EQ(call(), 0) << message; }

  std::unique_ptr<DeviceTensor> grad_output, input, weight, grad_input, grad_weight, grad_bias;
  std::shared_ptr<aclIntArray> stride, padding, dilation, output_padding, bias_sizes;
  std::shared_ptr<aclBoolArray> mask;
  std::vector<bool> mask_values;
  bool transposed = false;
  int groups = 2;
  int8_t cube_math_type = 0;
  bool null_gy = false, null_x = false, null_w = false, null_size = false, null_executor = false;
  bool use_gx = true, use_gw = true, use_gb = true;
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  std::string message;
  std::vector<std::vector<uint8_t>> before;
};

TEST_F(ConvValidation, BaselineIsValid) { expect_accepted(); }

TEST_F(ConvValidation, R0_WorkspaceSizeAndExecutorPointers) {
  null_size = true;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "workspaceSize");
  null_size = false;
  null_executor = true;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "executor");
}

TEST_F(ConvValidation, R1_MandatoryArgumentsInOrder) {
  null_gy = null_x = true;  // both null: the first in CANN's order is named
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "gradOutput");
  null_gy = null_x = false;
  null_w = true;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "weight");
  null_w = false;
  for (auto* array : {&stride, &padding, &dilation, &output_padding}) {
    auto saved = *array;
    array->reset();
    EXPECT_EQ(call(), ACLNN_ERR_PARAM_NULLPTR);
    *array = saved;
  }
  mask.reset();
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "outputMask");
}

TEST_F(ConvValidation, R1_BiasSizesMayBeNullInTheNonEmptyPath) {
  bias_sizes.reset();
  expect_accepted();
}

TEST_F(ConvValidation, R2_OutputMaskLengthIsANullPointerError) {
  set_mask({true, true});
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "outputMask has 2 values");
  set_mask({true, true, true, true});
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "outputMask has 4 values");
}

TEST_F(ConvValidation, R3_RequestedOutputsMustExist) {
  use_gx = false;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "gradInput");
  use_gx = true;
  use_gw = false;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "gradWeight");
  use_gw = true;
  use_gb = false;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "gradBias");
  set_mask({true, true, false});  // not requested: may be null
  expect_accepted();
}

TEST_F(ConvValidation, R4_DtypesOfInputsAndOfEveryNonNullOutput) {
  replace(input, {2, 4, 5, 5}, ACL_INT32, ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "input dtype INT32");
  build();
  replace(weight, {4, 2, 3, 3}, ACL_DOUBLE, ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "weight dtype DOUBLE");
  build();
  replace(grad_output, {2, 4, 5, 5}, static_cast<aclDataType>(50), ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradOutput dtype");
  build();
  set_mask({true, true, false});  // gradBias not requested but present: still checked
  replace(grad_bias, {4}, ACL_HIFLOAT8, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradBias dtype HIFLOAT8");
}

TEST_F(ConvValidation, R4_MixedFloatDtypesAreAccepted) {
  replace(input, {2, 4, 5, 5}, ACL_BF16, ACL_FORMAT_NCHW);
  replace(weight, {4, 2, 3, 3}, ACL_FLOAT16, ACL_FORMAT_NCHW);
  replace(grad_weight, {4, 2, 3, 3}, ACL_BF16, ACL_FORMAT_NCHW);
  input->fill(pattern(input->numel(), 1));
  weight->fill(pattern(weight->numel(), 2));
  expect_accepted();
}

TEST_F(ConvValidation, R5_FormatsFollowEachTensorsDimCount) {
  replace(input, {2, 4, 5, 5}, ACL_FLOAT, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "input format ND");
  build();
  replace(grad_weight, {4, 2, 3, 3}, ACL_FLOAT, ACL_FORMAT_NHWC);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradWeight format NHWC");
  build({2, 4, 5}, {2, 4, 5}, {4, 2, 3}, ACL_FORMAT_ND);  // 3-D ND is fine
  expect_accepted();
  build({1, 2, 4, 5, 5, 5}, {1, 2, 4, 5, 5, 5}, {4, 2, 3, 3, 3, 3}, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "with 6 dims");
}

TEST_F(ConvValidation, R6_GradBiasMustBeNdForDirectConvolution) {
  replace(grad_bias, {4}, ACL_FLOAT, ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradBias format NCHW");
}

TEST_F(ConvValidation, R7_StridePaddingDilationRanges) {
  set(stride, {1, 0});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "stride [1, 0]");
  set(stride, {1, 1});
  set(padding, {-1, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "padding [-1, 1]");
  set(padding, {1, 1});
  set(dilation, {0, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "dilation [0, 1]");
}

TEST_F(ConvValidation, R8_OutputPadding) {
  set(output_padding, {0, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "outputPadding [0, 1] must be all 0");
  // Transposed 3-D: outputPadding must be < stride.
  build({1, 2, 5, 5, 5}, {1, 4, 5, 5, 5}, {4, 1, 3, 3, 3});
  transposed = true;
  set(output_padding, {0, 1, 0});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "smaller than stride");
  set(output_padding, {0, -1, 0});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "outputPadding [0, -1, 0]");
}

TEST_F(ConvValidation, R9_Groups) {
  groups = 0;
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "groups 0");
}

TEST_F(ConvValidation, R10_CubeMathTypeBeforeShapes) {
  cube_math_type = 4;
  set(stride, {1, 1, 1});  // a later (R12) failure too: R10 is reported first
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "cubeMathType 4");
  cube_math_type = -1;
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "cubeMathType -1");
  set(stride, {1, 1});
  for (int8_t t = 0; t <= 3; ++t) {
    cube_math_type = t;
    expect_accepted();
  }
}

TEST_F(ConvValidation, R12_RanksOutputShapesAndParameterLengths) {
  build({2, 4, 5, 5}, {2, 4, 5, 5, 1}, {4, 2, 3, 3, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradOutput has 4 dims but input has 5");
  build();
  replace(grad_input, {2, 4, 5, 6}, ACL_FLOAT, ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradInput shape [2, 4, 5, 6]");
  build();
  replace(grad_weight, {4, 2, 3, 2}, ACL_FLOAT, ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradWeight shape");
  build();
  replace(grad_bias, {5}, ACL_FLOAT, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradBias shape [5]");
  build();
  set(stride, {1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "stride [1] has 1 values: expected 2");
  set(stride, {1, 1});
  set(padding, {1, 1, 1, 1});  // 4 values are allowed for 2-D
  expect_accepted();
  set(dilation, {1, 1, 1, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "dilation");
}

TEST_F(ConvValidation, R13_ChannelsAndGroups) {
  build({2, 6, 5, 5}, {2, 4, 5, 5}, {4, 2, 3, 3});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "C(gradOutput) = 6 must equal weight.shape[0] = 4");
  build({2, 4, 5, 5}, {2, 6, 5, 5}, {4, 2, 3, 3});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "C(input) = 6 must equal weight.shape[1] (2) * groups (2)");
  build({2, 3, 5, 5}, {2, 2, 5, 5}, {3, 1, 3, 3});  // depthwise: C(out) must be a multiple of groups
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "depthwise");
  build({2, 6, 5, 5}, {2, 4, 5, 5}, {6, 1, 3, 3});
  groups = 4;  // weight[0] = 6 is not a multiple of groups (ours)
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "multiple of groups");
}

TEST_F(ConvValidation, R14_SpatialSizesForEveryRank) {
  build({2, 4, 4, 5}, {2, 4, 5, 5}, {4, 2, 3, 3});  // 2-D mismatch: rejected (CANN leaves it to the device)
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 0");
  build({2, 4, 5, 5, 6}, {2, 4, 5, 5, 5}, {4, 2, 3, 3, 3});
  set(stride, {1, 1, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 2");
  build({2, 4, 3}, {2, 4, 1}, {4, 2, 5});
  set(padding, {0});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 0");
}

TEST_F(ConvValidation, Ours_TransposedGradOutputSizeFollowsOutputPadding) {
  // Transposed 2-D, input 5x5, k3, s2, p1, outputPadding 1: gradOutput is (5-1)*2 - 2 + 3 + 1 = 10.
  build({1, 2, 10, 10}, {1, 4, 5, 5}, {4, 1, 3, 3});
  transposed = true;
  set(stride, {2, 2});
  set(output_padding, {1, 1});
  set(bias_sizes, {2});
  expect_accepted();
  build({1, 2, 10, 9}, {1, 4, 5, 5}, {4, 1, 3, 3});  // 10x9 passes R14's floor relation, not this one
  transposed = true;
  set(stride, {2, 2});
  set(output_padding, {1, 1});
  set(bias_sizes, {2});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 1: gradOutput size 9 must be (input size 5 - 1) * stride 2");
  set(output_padding, {1, 0});  // ... and with outputPadding (1, 0) it is right
  expect_accepted();
  // 1-D likewise.
  build({1, 2, 12}, {1, 4, 6}, {4, 1, 2});
  transposed = true;
  set(stride, {2});
  set(padding, {0});
  set(bias_sizes, {2});
  expect_accepted();
  set(output_padding, {1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradOutput size 12 must be");
}

TEST_F(ConvValidation, Ours_HugeParametersAreRejectedWithoutOverflow) {
  const int64_t huge = INT64_MAX;
  set(dilation, {huge, 1});  // dilation * (kernel - 1) overflows 64 bits
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 0");
  build();
  set(padding, {huge, huge});  // in + 2 * padding overflows 64 bits
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 0");
  build();
  set(stride, {huge, huge});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 0");
  // Empty path: the padded-size check with a huge dilation.
  build({0, 4, 5, 5}, {0, 4, 5, 5}, {4, 2, 3, 3});
  set(dilation, {huge, 1});
  set_mask({false, true, false});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "smaller than the kernel 3 dilated by");
  // Transposed: the exact size formula with huge values.
  build({1, 2, 5, 5}, {1, 4, 5, 5}, {4, 1, 3, 3});
  transposed = true;
  set(stride, {huge, huge});
  set(bias_sizes, {2});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "spatial dim 0");
}

TEST_F(ConvValidation, Ours_SizesAndParametersBeyondInt32AreRejected) {
  // One output row: any stride along H gives it, so only our bound rejects these.
  build({2, 4, 1, 5});
  set(stride, {int64_t{1} << 31, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "stride [2147483648, 1]: value 2147483648 exceeds 2^31 - 1");
  set(stride, {INT32_MAX, 1});
  expect_accepted();
  set(stride, {INT64_MAX, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "value 9223372036854775807 exceeds 2^31 - 1");
  // A problem with nothing to compute keeps CANN's empty path (zeros, or nothing, are written).
  build({0, 4, 1, 5}, {0, 4, 5, 5});
  set(stride, {INT64_MAX, 1});
  expect_accepted();
}

TEST_F(ConvValidation, R17b_GroupedConv3dWeightGradIntoFloatNeedsFloatMath) {
  build({1, 4, 3, 3, 3}, {1, 4, 3, 3, 3}, {4, 2, 3, 3, 3});  // groups 2, FLOAT gradWeight requested
  expect_accepted();
  cube_math_type = 2;
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "cubeMathType 2 (USE_FP16)");
  set_mask({true, false, true});  // no weight gradient: the rule does not apply
  expect_accepted();
  set_mask({true, true, true});
  replace(grad_weight, {4, 2, 3, 3, 3}, ACL_FLOAT16, ACL_FORMAT_NCDHW);  // gradWeight not FLOAT
  expect_accepted();
  build({1, 4, 3, 3, 3}, {1, 4, 3, 3, 3}, {4, 2, 3, 3, 3});
  cube_math_type = 0;
  for (aclDataType low : {ACL_FLOAT16, ACL_BF16}) {
    replace(input, {1, 4, 3, 3, 3}, low, ACL_FORMAT_NCDHW);
    replace(grad_output, {1, 4, 3, 3, 3}, low, ACL_FORMAT_NCDHW);
    replace(weight, {4, 2, 3, 3, 3}, low, ACL_FORMAT_NCDHW);
    expect_rejected(ACLNN_ERR_PARAM_INVALID, low == ACL_FLOAT16 ? "promote to FLOAT16" : "promote to BF16");
  }
  replace(weight, {4, 2, 3, 3, 3}, ACL_FLOAT16, ACL_FORMAT_NCDHW);  // BF16 with FLOAT16 promotes to FLOAT
  expect_accepted();
  groups = 1;  // ungrouped: the rule does not apply
  build({1, 4, 3, 3, 3}, {1, 4, 3, 3, 3}, {4, 4, 3, 3, 3});
  cube_math_type = 2;
  expect_accepted();
  groups = 2;
  build({2, 4, 5, 5}, {2, 4, 5, 5}, {4, 2, 3, 3});  // 2-D: the rule does not apply
  expect_accepted();
}

TEST_F(ConvValidation, R16_DeterministicGroupedConv3dIsAcceptedOn910B) {
  build({1, 4, 3, 3, 3}, {1, 4, 3, 3, 3}, {4, 2, 3, 3, 3});  // groups 2, gradWeight requested
  ASSERT_EQ(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), ACL_SUCCESS);
  expect_accepted();  // the groups == 1 rule applies to other SoCs only; our kernels are deterministic anyway
  ASSERT_EQ(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0), ACL_SUCCESS);
}

TEST_F(ConvValidation, Ours_BatchSizesAgree) {
  build({3, 4, 5, 5}, {2, 4, 5, 5}, {4, 2, 3, 3});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "batch");
}

TEST_F(ConvValidation, Ours_TensorStorage) {
  aclSetRawTensorAddr(input->get(), nullptr);
  expect_accepted();  // phase 1 never looks at data addresses (phase 2 does: test_conv_execution)
  build();
  const int64_t shape[] = {2, 4, 5, 5}, small_storage[] = {10};
  void* data = nullptr;
  aclGetRawTensorAddr(grad_input->get(), &data);
  aclInitTensor(grad_input->get(), shape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, small_storage, 1, data);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "outside its storage");
  build();
  aclInitTensor(grad_input->get(), shape, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, nullptr, 0, data);
  expect_accepted();  // no storage shape: its extent is unknown, only the lower bound is checked
  const int64_t backwards[] = {-1, 25, 5, 1};
  aclInitTensor(grad_input->get(), shape, 4, ACL_FLOAT, backwards, 0, ACL_FORMAT_NCHW, nullptr, 0, data);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "outside its storage");  // reaches before the data address
  build();
  const int64_t negative[] = {2, -4, 5, 5};
  aclInitTensor(grad_input->get(), negative, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, shape, 4, data);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "non-negative");
}

TEST_F(ConvValidation, R17_EmptyPath) {
  build({0, 4, 5, 5}, {0, 4, 5, 5}, {4, 2, 3, 3});
  bias_sizes.reset();
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "biasSizes is nullptr");  // 161002 here, as in CANN
  set(bias_sizes, {5});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "biasSizes [5] must be [4]");
  set(bias_sizes, {4});
  expect_accepted();
  build({2, 4, 5, 0}, {2, 4, 5, 0}, {4, 2, 3, 1});  // empty in a spatial dim only, with gradInput requested
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "N = 0 or C = 0");
  set_mask({false, true, true});
  expect_accepted();
  build({2, 4, 5, 5}, {2, 0, 5, 5}, {4, 0, 3, 3});
  groups = 1;
  expect_accepted();
  build({2, 4, 5, 5}, {2, 0, 5, 5}, {6, 0, 3, 3});  // gradOutput channels disagree with weight (ours)
  groups = 1;
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "disagree");
}

TEST_F(ConvValidation, MessageGoesToStderrAtErrorLevelOnly) {
  groups = 0;
  ::testing::internal::CaptureStderr();
  call();
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("[ERROR]"), std::string::npos);
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
  ::testing::internal::CaptureStderr();
  call();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
  EXPECT_NE(message.find("groups 0 must be >= 1"), std::string::npos);  // still recorded
}

}  // namespace
}  // namespace testing_support
