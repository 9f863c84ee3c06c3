// The forward operators' phase-1 checks (F*, B*, D* of docs/convolution_forward.md): each case
// breaks one part of a valid call and asserts the status code, a message naming the API and the
// parameter, and an output left untouched; cases that break two parts assert which check comes first.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "aclnn/opdev/op_errno.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

using Shape = std::vector<int64_t>;

// The arguments of one call of any of the three operators.
struct Call {
  Shape x = {2, 4, 5, 5}, w = {4, 2, 3, 3}, b = {4}, y = {2, 4, 5, 5};
  aclDataType x_dtype = ACL_FLOAT, w_dtype = ACL_FLOAT, b_dtype = ACL_FLOAT, y_dtype = ACL_FLOAT;
  aclFormat x_format = ACL_FORMAT_NCHW, w_format = ACL_FORMAT_NCHW, b_format = ACL_FORMAT_ND,
            y_format = ACL_FORMAT_NCHW;
  Shape stride = {1, 1}, padding = {1, 1}, dilation = {1, 1}, output_padding = {0, 0}, kernel_size = {3, 3};
  bool transposed = false, with_bias = true, null_input = false, null_stride = false, null_output_padding = false;
  bool null_workspace_size = false, null_executor = false, null_kernel_size = false;
  int64_t groups = 2, pad = 1;
  int8_t cube_math_type = 0;
};

struct Outcome {
  aclnnStatus status;
  std::string message;
};

enum class Op { kConvolution, kTbc, kDepthwise };
const char* api_name(Op op) {
  return op == Op::kConvolution ? "aclnnConvolutionGetWorkspaceSize"
         : op == Op::kTbc       ? "aclnnConvTbcGetWorkspaceSize"
                                : "aclnnConvDepthwise2dGetWorkspaceSize";
}

// Phase 1 of `op` with the call's arguments; on failure the output must be untouched.
Outcome run(Op op, const Call& c) {
  DeviceTensor x(c.x, c.x_dtype, c.x_format), w(c.w, c.w_dtype, c.w_format), b(c.b, c.b_dtype, c.b_format);
  DeviceTensor y(c.y, c.y_dtype, c.y_format);
  x.fill(pattern(x.numel(), 1));
  w.fill(pattern(w.numel(), 2));
  const std::vector<uint8_t> before = y.bytes();
  auto array = [](const Shape& values) {
    return std::shared_ptr<aclIntArray>(aclCreateIntArray(values.data(), values.size()), aclDestroyIntArray);
  };
  auto stride = array(c.stride), padding = array(c.padding), dilation = array(c.dilation);
  auto output_padding = array(c.output_padding), kernel_size = array(c.kernel_size);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  uint64_t* size_out = c.null_workspace_size ? nullptr : &size;
  aclOpExecutor** executor_out = c.null_executor ? nullptr : &executor;
  aclTensor* input = c.null_input ? nullptr : x.get();
  aclTensor* bias = c.with_bias ? b.get() : nullptr;
  aclnnStatus status = 0;
  switch (op) {
    case Op::kConvolution:
      status = aclnnConvolutionGetWorkspaceSize(input, w.get(), bias, c.null_stride ? nullptr : stride.get(),
                                                padding.get(), dilation.get(), c.transposed,
                                                c.null_output_padding ? nullptr : output_padding.get(), c.groups,
                                                y.get(), c.cube_math_type, size_out, executor_out);
      break;
    case Op::kTbc:
      status =
          aclnnConvTbcGetWorkspaceSize(input, w.get(), bias, c.pad, y.get(), c.cube_math_type, size_out, executor_out);
      break;
    case Op::kDepthwise:
      status = aclnnConvDepthwise2dGetWorkspaceSize(input, w.get(), c.null_kernel_size ? nullptr : kernel_size.get(),
                                                    bias, c.null_stride ? nullptr : stride.get(), padding.get(),
                                                    dilation.get(), y.get(), c.cube_math_type, size_out, executor_out);
      break;
  }
  if (status == 0) {
    aclDestroyAclOpExecutor(executor);
    return {0, ""};
  }
  EXPECT_EQ(y.bytes(), before) << "output written by a failed " << api_name(op);
  const char* message = aclGetRecentErrMsg();
  return {status, message == nullptr ? "" : message};
}

struct Case {
  const char* name;
  Op op;
  std::function<void(Call&)> change;
  aclnnStatus status;
  const char* says;  // a part of the message (after the API's name)
};

constexpr aclnnStatus kNull = ACLNN_ERR_PARAM_NULLPTR, kInvalid = ACLNN_ERR_PARAM_INVALID;

// A valid TBC call: self (T 6, B 2, Cin 3), weight (K 3, 3, Cout 4), pad 1: output (6, 2, 4).
void tbc(Call& c) {
  c.x = {6, 2, 3}, c.w = {3, 3, 4}, c.b = {4}, c.y = {6, 2, 4};
  c.x_format = c.w_format = c.y_format = ACL_FORMAT_NCL;
}
// A valid depthwise call: self (2, 3, 6, 6), weight (6, 1, 3, 3), stride 1, padding 1: out (2, 6, 6, 6).
void depthwise(Call& c) { c.x = {2, 3, 6, 6}, c.w = {6, 1, 3, 3}, c.b = {6}, c.y = {2, 6, 6, 6}; }
// A valid transposed call: input (2, 4, 3, 3), weight (4, 3, 3, 3), groups 1, stride 2, padding 1,
// outputPadding 1: output (2, 3, 6, 6).
void transposed(Call& c) {
  c.transposed = true, c.groups = 1, c.x = {2, 4, 3, 3}, c.w = {4, 3, 3, 3}, c.b = {3}, c.y = {2, 3, 6, 6};
  c.stride = {2, 2}, c.output_padding = {1, 1};
}

const Case kCases[] = {
    // aclnnConvolution
    {"valid", Op::kConvolution, [](Call&) {}, 0, ""},
    {"valid_without_bias", Op::kConvolution, [](Call& c) { c.with_bias = false; }, 0, ""},
    {"valid_mixed_dtypes", Op::kConvolution,
     [](Call& c) { c.x_dtype = ACL_FLOAT16, c.w_dtype = ACL_BF16, c.y_dtype = ACL_FLOAT16; }, 0, ""},
    {"valid_four_paddings", Op::kConvolution,
     [](Call& c) {
       c.padding = {1, 1, 0, 2}, c.y = {2, 4, 5, 5};
     },
     0, ""},
    {"valid_cube_math_type_4", Op::kConvolution, [](Call& c) { c.cube_math_type = 4; }, 0, ""},
    {"valid_transposed", Op::kConvolution, transposed, 0, ""},
    {"valid_direct_ignores_output_padding", Op::kConvolution, [](Call& c) { c.null_output_padding = true; }, 0, ""},
    // 1-D weights NCL or ND, read by position (an ND weight's channels are its dim 1)
    {"valid_1d_nd_weight", Op::kConvolution,
     [](Call& c) {
       c.x = {1, 2, 5}, c.w = {4, 2, 3}, c.y = {1, 4, 3}, c.b = {4}, c.groups = 1;
       c.x_format = c.y_format = ACL_FORMAT_NCL, c.w_format = ACL_FORMAT_ND;
       c.stride = {1}, c.padding = {0}, c.dilation = {1}, c.output_padding = {0};
     },
     0, ""},
    {"1d_nd_weight_channels_by_position", Op::kConvolution,
     [](Call& c) {
       c.x = {1, 2, 5}, c.w = {4, 2, 3}, c.y = {1, 4, 3}, c.b = {4}, c.groups = 2;
       c.x_format = c.y_format = ACL_FORMAT_NCL, c.w_format = ACL_FORMAT_ND;
       c.stride = {1}, c.padding = {0}, c.dilation = {1}, c.output_padding = {0};
     },
     kInvalid, "input channels 2"},
    {"1d_weight_format", Op::kConvolution,
     [](Call& c) {
       c.x = {1, 2, 5}, c.w = {4, 3, 1}, c.y = {1, 4, 3}, c.b = {4}, c.groups = 2;
       c.x_format = c.y_format = ACL_FORMAT_NCL, c.w_format = ACL_FORMAT_NDHWC;
       c.stride = {1}, c.padding = {0}, c.dilation = {1}, c.output_padding = {0};
     },
     kInvalid, "weight format NDHWC"},
    {"null_input", Op::kConvolution, [](Call& c) { c.null_input = true; }, kNull, "input is nullptr"},
    // (FRACTAL_Z, the device's blocked weight layout, which CANN accepts for a direct 2-D weight: refused here)
    {"fractal_z_weight", Op::kConvolution, [](Call& c) { c.w_format = ACL_FORMAT_FRACTAL_Z; }, kInvalid,
     "weight format FRACTAL_Z"},
    {"null_stride_before_workspace", Op::kConvolution, [](Call& c) { c.null_stride = c.null_workspace_size = true; },
     kNull, "stride is nullptr"},
    {"null_output_padding_transposed", Op::kConvolution, [](Call& c) { transposed(c), c.null_output_padding = true; },
     kNull, "outputPadding is nullptr"},
    {"bias_dtype_before_input_dtype", Op::kConvolution, [](Call& c) { c.b_dtype = ACL_DOUBLE, c.x_dtype = ACL_INT32; },
     kInvalid, "bias dtype"},
    {"input_dtype", Op::kConvolution, [](Call& c) { c.x_dtype = ACL_INT32; }, kInvalid, "input dtype"},
    {"input_dims", Op::kConvolution,
     [](Call& c) {
       c.x = {8, 25};
     },
     kInvalid, "input has 2 dims"},
    {"weight_dims", Op::kConvolution,
     [](Call& c) {
       c.x = {2, 4, 25};
     },
     kInvalid, "weight has 4 dims but input has 3"},
    {"bias_shape", Op::kConvolution,
     [](Call& c) {
       c.b = {1, 4};
     },
     kInvalid, "bias shape"},
    {"padding_length", Op::kConvolution,
     [](Call& c) {
       c.padding = {1, 1, 1};
     },
     kInvalid, "padding [1, 1, 1]"},
    {"format_before_values", Op::kConvolution,
     [](Call& c) {
       c.x_format = ACL_FORMAT_NHWC, c.stride = {0, 1};
     },
     kInvalid, "input format"},
    {"stride_zero", Op::kConvolution,
     [](Call& c) {
       c.stride = {0, 1};
     },
     kInvalid, "stride [0, 1]"},
    {"padding_negative", Op::kConvolution,
     [](Call& c) {
       c.padding = {-1, 1};
     },
     kInvalid, "padding [-1, 1]"},
    {"kernel_past_padded_input", Op::kConvolution,
     [](Call& c) {
       c.x = {2, 4, 1, 5}, c.padding = {0, 1};
     },
     kInvalid, "smaller than the kernel"},
    {"groups_zero", Op::kConvolution, [](Call& c) { c.groups = 0; }, kInvalid, "groups 0"},
    {"channels_and_groups", Op::kConvolution, [](Call& c) { c.groups = 1; }, kInvalid, "input channels 4"},
    {"output_padding_past_stride_and_dilation", Op::kConvolution,
     [](Call& c) {
       transposed(c), c.output_padding = {2, 1};
     },
     kInvalid, "outputPadding [2, 1]"},
    // CANN's limit on a transposed layer's implied padding: (kernel - 1) * dilation - padding <= 255 (H: 2 * 129 - 1)
    {"transposed_implied_padding", Op::kConvolution,
     [](Call& c) {
       transposed(c), c.dilation = {129, 1};
     },
     kInvalid, "(kernel - 1) * dilation - padding along H and W is 257 and 1"},
    {"output_shape_before_cube_math_type", Op::kConvolution,
     [](Call& c) {
       c.y = {2, 4, 5, 4}, c.cube_math_type = 9;
     },
     kInvalid, "output shape [2, 4, 5, 4]"},
    {"cube_math_type", Op::kConvolution, [](Call& c) { c.cube_math_type = 5; }, kInvalid, "cubeMathType 5"},
    {"empty_input_with_output", Op::kConvolution,
     [](Call& c) {
       c.x = {2, 4, 0, 5}, c.y = {2, 4, 0, 5};
     },
     0, ""},
    // aclnnConvTbc
    {"tbc_valid", Op::kTbc, tbc, 0, ""},
    {"tbc_null_bias", Op::kTbc, [](Call& c) { tbc(c), c.with_bias = false; }, kNull, "bias is nullptr"},
    {"tbc_bias_dtype_free", Op::kTbc, [](Call& c) { tbc(c), c.b_dtype = ACL_FLOAT16; }, 0, ""},
    {"tbc_weight_dtype", Op::kTbc, [](Call& c) { tbc(c), c.w_dtype = ACL_FLOAT16; }, kInvalid, "weight dtype"},
    {"tbc_format", Op::kTbc, [](Call& c) { tbc(c), c.x_format = ACL_FORMAT_NCHW; }, kInvalid, "self format"},
    {"tbc_channels", Op::kTbc,
     [](Call& c) {
       tbc(c), c.w = {3, 2, 4};
     },
     kInvalid, "self channels 3"},
    {"tbc_null_workspace_size", Op::kTbc, [](Call& c) { tbc(c), c.null_workspace_size = true; }, kNull,
     "workspaceSize is nullptr"},
    {"tbc_null_executor", Op::kTbc, [](Call& c) { tbc(c), c.null_executor = true; }, kNull, "executor is nullptr"},
    {"tbc_pad_negative", Op::kTbc, [](Call& c) { tbc(c), c.pad = -1; }, kInvalid, "pad -1"},
    {"tbc_output_before_cube_math_type", Op::kTbc,
     [](Call& c) {
       tbc(c), c.y = {5, 2, 4}, c.cube_math_type = 7;
     },
     kInvalid, "output shape [5, 2, 4]"},
    // aclnnConvDepthwise2d
    {"depthwise_valid", Op::kDepthwise, depthwise, 0, ""},
    {"depthwise_kernel_size_before_nulls", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.kernel_size = {3, 2}, c.null_input = true;
     },
     kInvalid, "kernelSize [3, 2]"},
    {"depthwise_null_kernel_size", Op::kDepthwise, [](Call& c) { depthwise(c), c.null_kernel_size = true; }, kNull,
     "kernelSize is nullptr"},
    {"depthwise_kernel_size_length", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.kernel_size = {3, 3, 1};
     },
     kInvalid, "kernelSize [3, 3, 1] has 3 values"},
    // (an NCL weight's kernel is not compared with kernelSize, as in CANN: the format check refuses it next)
    {"depthwise_ncl_weight_skips_kernel_size", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.w_format = ACL_FORMAT_NCL, c.kernel_size = {5, 5};
     },
     kInvalid, "weight format NCL"},
    {"depthwise_null_self", Op::kDepthwise, [](Call& c) { depthwise(c), c.null_input = true; }, kNull,
     "self is nullptr"},
    {"depthwise_bias_dtype", Op::kDepthwise, [](Call& c) { depthwise(c), c.b_dtype = ACL_FLOAT16; }, kInvalid,
     "bias dtype"},
    {"depthwise_four_paddings", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.padding = {1, 1, 1, 1};
     },
     kInvalid, "padding [1, 1, 1, 1]"},
    {"depthwise_weight_channels", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.w = {6, 2, 3, 3};
     },
     kInvalid, "weight.shape[1] = 2"},
    {"depthwise_multiplier", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.w = {4, 1, 3, 3}, c.b = {4};
     },
     kInvalid, "multiple of the self channels 3"},
    {"depthwise_out_shape", Op::kDepthwise,
     [](Call& c) {
       depthwise(c), c.y = {2, 6, 6, 5};
     },
     kInvalid, "out shape [2, 6, 6, 5]"},
};

TEST(ConvForwardValidation, EachCheckInOrder) {
  for (const Case& k : kCases) {
    Call call;
    k.change(call);
    const Outcome got = run(k.op, call);
    EXPECT_EQ(got.status, k.status) << k.name << ": " << got.message;
    if (k.status == 0) continue;
    EXPECT_EQ(got.message.rfind(std::string(api_name(k.op)) + ": ", 0), 0u) << k.name << ": " << got.message;
    EXPECT_NE(got.message.find(k.says), std::string::npos) << k.name << ": " << got.message;
  }
}

}  // namespace
}  // namespace testing_support
