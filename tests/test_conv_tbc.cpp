// aclnnConvTbcBackward: checks T0-T12 with their codes, and numerics against PyTorch golden
// values and the oracle across pads, K = 1..7, dtypes, layouts and empty tensors.
#include <gtest/gtest.h>

#include <memory>

#include "aclnn/opdev/op_errno.h"
#include "support/golden.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

using Shape = std::vector<int64_t>;

// ---- validation ------------------------------------------------------------------------------

// A valid call: T 5, B 2, Cin 3, Cout 4, K 3, pad 1 (self T = 5).
class TbcValidation : public ::testing::Test {
 protected:
  void SetUp() override { build(); }
  void build(Shape self_shape = {5, 2, 4}, Shape input_shape = {5, 2, 3}, Shape weight_shape = {3, 3, 4},
             Shape bias_shape = {4}) {
    self = make(self_shape, ACL_FLOAT, ACL_FORMAT_ND);
    input = make(input_shape, ACL_FLOAT, ACL_FORMAT_ND);
    weight = make(weight_shape, ACL_FLOAT, ACL_FORMAT_ND);
    bias = make(bias_shape, ACL_FLOAT, ACL_FORMAT_ND);
    grad_input = make(input_shape, ACL_FLOAT, ACL_FORMAT_ND);
    grad_weight = make(weight_shape, ACL_FLOAT, ACL_FORMAT_ND);
    grad_bias = make(bias_shape, ACL_FLOAT, ACL_FORMAT_ND);
  }
  static std::unique_ptr<DeviceTensor> make(const Shape& shape, aclDataType dtype, aclFormat format) {
    return std::make_unique<DeviceTensor>(shape, dtype, format);
  }
  aclnnStatus call() {
    const std::vector<std::vector<uint8_t>> before = {grad_input->bytes(), grad_weight->bytes(), grad_bias->bytes()};
    uint64_t size = 777;
    aclOpExecutor* executor = nullptr;
    auto get = [this](const std::unique_ptr<DeviceTensor>& t) { return t.get() == nulled ? nullptr : t->get(); };
    const aclnnStatus status = aclnnConvTbcBackwardGetWorkspaceSize(
        get(self), get(input), get(weight), get(bias), pad, cube_math_type, get(grad_input), get(grad_weight),
        get(grad_bias), null_size ? nullptr : &size, null_executor ? nullptr : &executor);
    const char* recent = aclGetRecentErrMsg();
    message = recent == nullptr ? "" : recent;
    if (status == 0) {
      EXPECT_EQ(aclDestroyAclOpExecutor(executor), 0);
    } else {
      EXPECT_EQ(size, 777u);
      EXPECT_EQ(executor, nullptr);
      EXPECT_EQ(before,
                (std::vector<std::vector<uint8_t>>{grad_input->bytes(), grad_weight->bytes(), grad_bias->bytes()}));
    }
    return status;
  }
  void expect_rejected(aclnnStatus status, const std::string& words) {
    EXPECT_EQ(call(), status) << message;
    EXPECT_NE(message.find("aclnnConvTbcBackwardGetWorkspaceSize"), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << "message: " << message;
  }

  std::unique_ptr<DeviceTensor> self, input, weight, bias, grad_input, grad_weight, grad_bias;
  const DeviceTensor* nulled = nullptr;
  int64_t pad = 1;
  int8_t cube_math_type = 1;
  bool null_size = false, null_executor = false;
  std::string message;
};

TEST_F(TbcValidation, BaselineIsValid) { EXPECT_EQ(call(), 0) << message; }

TEST_F(TbcValidation, T0_WorkspaceSizeAndExecutor) {
  null_size = true;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "workspaceSize");
  null_size = false;
  null_executor = true;
  expect_rejected(ACLNN_ERR_PARAM_NULLPTR, "executor");
}

TEST_F(TbcValidation, T1_EveryTensorIsMandatory) {
  const std::pair<std::unique_ptr<DeviceTensor>*, const char*> all[] = {
      {&self, "self"},         {&input, "input"},          {&weight, "weight"},
      {&bias, "bias"},         {&grad_input, "gradInput"}, {&grad_weight, "gradWeight"},
      {&grad_bias, "gradBias"}};
  for (const auto& [tensor, name] : all) {
    nulled = tensor->get();
    expect_rejected(ACLNN_ERR_PARAM_NULLPTR, std::string(name) + " is nullptr");
  }
}

TEST_F(TbcValidation, T2_Dtypes) {
  bias = make({4}, ACL_INT32, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "bias dtype INT32");
  build();
  grad_weight = make({3, 3, 4}, ACL_FLOAT8_E4M3FN, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradWeight dtype FLOAT8_E4M3FN");
  build();
  input = make({5, 2, 3}, ACL_BF16, ACL_FORMAT_NCL);  // mixed float dtypes and NCL are fine
  grad_bias = make({4}, ACL_FLOAT16, ACL_FORMAT_ND);
  EXPECT_EQ(call(), 0) << message;
}

TEST_F(TbcValidation, T3_Formats) {
  bias = make({4}, ACL_FLOAT, ACL_FORMAT_NCL);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "bias format NCL");
  build();
  weight = make({3, 3, 4}, ACL_FLOAT, ACL_FORMAT_NCHW);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "weight format NCHW");
}

TEST_F(TbcValidation, T4_SelfMustNotBeEmpty) {
  build({5, 0, 4}, {5, 0, 3});  // B = 0 always fails here
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "self shape [5, 0, 4] must not be empty");
}

TEST_F(TbcValidation, T5_Ranks) {
  build({5, 2, 4}, {5, 2, 3, 1});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "input has 4 dims: expected 3");
  build();
  grad_bias = make({4, 1}, ACL_FLOAT, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradBias has 2 dims: expected 1");
}

TEST_F(TbcValidation, T6_T7_Channels) {
  build({5, 2, 4}, {5, 2, 2}, {3, 3, 4});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "input channels 2");
  build({5, 2, 4}, {5, 2, 3}, {3, 3, 4}, {5});
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "bias length 5");
}

TEST_F(TbcValidation, T8_Pad) {
  pad = -1;
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "pad -1");
}

TEST_F(TbcValidation, T9_SelfShape) {
  pad = 0;  // self should then be (3, 2, 4)
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "must be (T + 2*pad + 1 - K, B, Cout) = [3, 2, 4]");
}

TEST_F(TbcValidation, T9_HugePadIsRejectedWithoutOverflow) {
  pad = INT64_MAX;  // T + 2*pad + 1 - K overflows 64 bits
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "exceeds int64");
  pad = INT64_MAX / 2 - 2;  // fits, but is not self's length
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "must be (T + 2*pad + 1 - K, B, Cout)");
}

TEST_F(TbcValidation, Ours_MissingDataIsPlannedThenRefusedAtRun) {
  for (std::unique_ptr<DeviceTensor>* tensor : {&self, &weight, &grad_bias}) {
    build();
    aclSetRawTensorAddr((*tensor)->get(), nullptr);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(
        aclnnConvTbcBackwardGetWorkspaceSize(self->get(), input->get(), weight->get(), bias->get(), pad, cube_math_type,
                                             grad_input->get(), grad_weight->get(), grad_bias->get(), &size, &executor),
        0);
    const std::vector<uint8_t> before = grad_input->bytes();
    void* workspace = nullptr;
    if (size > 0) {
      ASSERT_EQ(aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST), 0);
    }
    EXPECT_EQ(aclnnConvTbcBackward(workspace, size, executor, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclnnConvTbcBackward: "), std::string::npos);
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
    EXPECT_EQ(grad_input->bytes(), before);
    if (workspace != nullptr) aclrtFree(workspace);
  }
  build();
  aclSetRawTensorAddr(bias->get(), nullptr);  // bias is never read: it needs no data
  EXPECT_EQ(call(), 0) << message;
}

TEST_F(TbcValidation, T10_GradientShapes) {
  grad_input = make({5, 2, 4}, ACL_FLOAT, ACL_FORMAT_ND);
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "gradInput shape [5, 2, 4] must equal input shape [5, 2, 3]");
}

TEST_F(TbcValidation, T11_CubeMathTypeAfterShapes) {
  cube_math_type = 4;
  pad = 0;  // T9 fails first: ConvTbc checks cubeMathType last
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "self shape");
  pad = 1;
  expect_rejected(ACLNN_ERR_PARAM_INVALID, "cubeMathType 4");
}

// ---- numerics ----------------------------------------------------------------------------------

struct TbcInputs {
  std::vector<double> x, w, gy;
  explicit TbcInputs(const TbcSpec& s)
      : x(pattern(s.time * s.batch * s.in_channels, 1)),
        w(pattern(s.kernel * s.in_channels * s.out_channels, 2)),
        gy(pattern(s.out_time() * s.batch * s.out_channels, 3)) {}
};

void expect_equal(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << what << " element " << i;
}

TEST(TbcNumerics, GoldenValuesFromPyTorch) {
  const struct {
    aclDataType dtype;
    Layout in, out;
  } variants[] = {{ACL_FLOAT, Layout::kContiguous, Layout::kContiguous},
                  {ACL_FLOAT, Layout::kStrided, Layout::kReversed},
                  {ACL_FLOAT16, Layout::kReversed, Layout::kStrided},
                  {ACL_BF16, Layout::kContiguous, Layout::kStrided}};
  for (const GoldenCase& c : read_golden("tbc_golden.txt")) {
    const std::vector<int64_t> p = c.ints("tbc");
    const TbcSpec s{p[0], p[1], p[2], p[3], p[4], p[5]};
    const TbcInputs in(s);
    const ConvGrads oracle = oracle_tbc_backward(s, in.x, in.w, in.gy);
    expect_equal(oracle.grad_input, c.fields.at("grad_input"), c.name + " oracle gradInput");
    expect_equal(oracle.grad_weight, c.fields.at("grad_weight"), c.name + " oracle gradWeight");
    expect_equal(oracle.grad_bias, c.fields.at("grad_bias"), c.name + " oracle gradBias");
    for (const auto& v : variants) {
      RunOptions o;
      o.grad_output_dtype = o.input_dtype = o.weight_dtype = v.dtype;
      o.grad_input_dtype = o.grad_weight_dtype = o.grad_bias_dtype = v.dtype;
      o.input_layout = v.in, o.output_layout = v.out;
      const RunResult r = run_conv_tbc_backward(s, o, in.x, in.w, in.gy);
      ASSERT_EQ(r.status, 0) << c.name << ": " << r.error;
      expect_equal(r.grads.grad_input, rounded(c.fields.at("grad_input"), v.dtype), c.name + " gradInput");
      expect_equal(r.grads.grad_weight, rounded(c.fields.at("grad_weight"), v.dtype), c.name + " gradWeight");
      expect_equal(r.grads.grad_bias, rounded(c.fields.at("grad_bias"), v.dtype), c.name + " gradBias");
    }
  }
}

TEST(TbcNumerics, EveryKernelSizeAndPadAgainstTheOracleWithMixedDtypes) {
  for (int64_t k = 1; k <= 7; ++k) {
    for (int64_t pad = 0; pad <= 3; ++pad) {
      const TbcSpec s{6, 2, 3, 2, k, pad};
      if (s.out_time() <= 0) continue;
      const TbcInputs in(s);
      const ConvGrads want = oracle_tbc_backward(s, in.x, in.w, in.gy);
      RunOptions o;
      o.grad_output_dtype = ACL_BF16, o.input_dtype = ACL_FLOAT16, o.weight_dtype = ACL_FLOAT;
      o.grad_input_dtype = ACL_FLOAT, o.grad_weight_dtype = ACL_BF16, o.grad_bias_dtype = ACL_FLOAT16;
      o.output_layout = Layout::kStrided;
      o.nd_format = true;
      const RunResult r = run_conv_tbc_backward(s, o, in.x, in.w, in.gy);
      ASSERT_EQ(r.status, 0) << r.error;
      const std::string what = "K " + std::to_string(k) + " pad " + std::to_string(pad);
      expect_equal(r.grads.grad_input, want.grad_input, what);
      expect_equal(r.grads.grad_weight, rounded(want.grad_weight, ACL_BF16), what);
      expect_equal(r.grads.grad_bias, rounded(want.grad_bias, ACL_FLOAT16), what);
    }
  }
}

// More than 16 channels (the channels-last GEMMs read T x B x C tensors in place, or convert FLOAT16/BF16
// ones as they pack them, and round a float gradWeight into (K, Cin, Cout) in one run when it is
// stored as ConvTbc's own), with padding up to wider than the kernel; exact sums (the
// pattern's values are exact in every dtype, its products multiples of 1/64), rounded once.
TEST(TbcNumerics, WideLayersAgainstTheOracle) {
  for (const TbcSpec& s : {TbcSpec{20, 3, 24, 20, 3, 1}, TbcSpec{9, 2, 17, 33, 4, 0}, TbcSpec{5, 2, 18, 17, 2, 4}}) {
    const TbcInputs in(s);
    const ConvGrads want = oracle_tbc_backward(s, in.x, in.w, in.gy);
    for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
      for (Layout layout : {Layout::kContiguous, Layout::kStrided}) {
        RunOptions o;
        o.grad_output_dtype = o.input_dtype = o.weight_dtype = dtype;
        o.grad_input_dtype = o.grad_weight_dtype = o.grad_bias_dtype = dtype;
        o.input_layout = o.output_layout = layout;
        const RunResult r = run_conv_tbc_backward(s, o, in.x, in.w, in.gy);
        ASSERT_EQ(r.status, 0) << r.error;
        const std::string what = "T " + std::to_string(s.time) + " C " + std::to_string(s.in_channels) + " dtype " +
                                 std::to_string(dtype) + " layout " + std::to_string(static_cast<int>(layout));
        expect_equal(r.grads.grad_input, rounded(want.grad_input, dtype), what + " gradInput");
        expect_equal(r.grads.grad_weight, rounded(want.grad_weight, dtype), what + " gradWeight");
        expect_equal(r.grads.grad_bias, rounded(want.grad_bias, dtype), what + " gradBias");
      }
    }
  }
}

TEST(TbcNumerics, EmptyTensorsGiveTheTrueGradients) {
  // T = 0 (with 2*pad + 1 >= K), K = 0 and Cin = 0 all pass validation; with few channels and with
  // more than 16 (empty tensors: no implementation may divide by a zero size or offset a null pointer).
  for (const TbcSpec& s : {TbcSpec{0, 2, 3, 2, 1, 1}, TbcSpec{4, 2, 3, 2, 0, 0}, TbcSpec{4, 2, 0, 2, 2, 1},
                           TbcSpec{0, 2, 20, 18, 1, 1}, TbcSpec{4, 2, 20, 18, 0, 0}, TbcSpec{4, 2, 0, 18, 2, 1}}) {
    const TbcInputs in(s);
    const ConvGrads want = oracle_tbc_backward(s, in.x, in.w, in.gy);
    const RunResult r = run_conv_tbc_backward(s, RunOptions{}, in.x, in.w, in.gy);
    ASSERT_EQ(r.status, 0) << r.error;
    expect_equal(r.grads.grad_input, want.grad_input, "gradInput");
    expect_equal(r.grads.grad_weight, want.grad_weight, "gradWeight");
    // gradBias is the sum of self (CANN writes the constant B * Tout instead).
    expect_equal(r.grads.grad_bias, want.grad_bias, "gradBias");
  }
}

}  // namespace
}  // namespace testing_support
