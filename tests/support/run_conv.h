// Test helper: runs aclnnConvolutionBackward / aclnnConvTbcBackward through the public C API.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "support/conv_oracle.h"
#include "support/device_tensor.h"

namespace testing_support {

struct RunOptions {
  aclDataType grad_output_dtype = ACL_FLOAT, input_dtype = ACL_FLOAT, weight_dtype = ACL_FLOAT;
  aclDataType grad_input_dtype = ACL_FLOAT, grad_weight_dtype = ACL_FLOAT, grad_bias_dtype = ACL_FLOAT;
  Layout input_layout = Layout::kContiguous;   // gradOutput, input, weight
  Layout output_layout = Layout::kContiguous;  // gradInput, gradWeight, gradBias
  // Explicit strides for gradInput / gradWeight / gradBias (empty: output_layout); they may alias.
  std::vector<int64_t> grad_input_strides, grad_weight_strides, grad_bias_strides;
  std::array<bool, 3> mask = {true, true, true};
  int8_t cube_math_type = 0;
  bool nd_format = false;  // 3-D tensors as ND instead of NCL
  aclrtStream stream = nullptr;
  // Called with true just before phase 2 (aclnn*Backward) and with false once the stream is synchronised.
  std::function<void(bool)> phase2_observer;
};

struct RunResult {
  aclnnStatus status = 0;
  uint64_t workspace_size = 0;
  ConvGrads grads;  // only the requested ones (read through the output views)
  // gradInput, gradWeight, gradBias: each view's storage elements (for last_writes).
  std::array<std::vector<int64_t>, 3> output_offsets;
  std::string error;
};

// Padding is passed as one value per dim when pad_lo == pad_hi, else (2-D only) as
// [top, bottom, left, right].
RunResult run_convolution_backward(const ConvSpec& spec, const RunOptions& options, const std::vector<double>& input,
                                   const std::vector<double>& weight, const std::vector<double>& grad_output);

struct TbcSpec {
  int64_t time = 1, batch = 1, in_channels = 1, out_channels = 1, kernel = 1, pad = 0;
  int64_t out_time() const { return time + 2 * pad + 1 - kernel; }
};

RunResult run_conv_tbc_backward(const TbcSpec& spec, const RunOptions& options, const std::vector<double>& input,
                                const std::vector<double>& weight, const std::vector<double>& self);

// Oracle for TBC: gradients from the conv_tbc definition, in double.
ConvGrads oracle_tbc_backward(const TbcSpec& spec, const std::vector<double>& input, const std::vector<double>& weight,
                              const std::vector<double>& self);

// The forward operators' results (output), status and workspace.
struct ForwardResult {
  aclnnStatus status = 0;
  uint64_t workspace_size = 0;
  std::vector<double> output;
  std::string error;
};
struct ForwardOptions {
  aclDataType input_dtype = ACL_FLOAT, weight_dtype = ACL_FLOAT, bias_dtype = ACL_FLOAT, output_dtype = ACL_FLOAT;
  Layout input_layout = Layout::kContiguous, output_layout = Layout::kContiguous;
  int8_t cube_math_type = 0;
  aclrtStream stream = nullptr;
  std::function<void(bool)> phase2_observer;  // as RunOptions'
};

// aclnnConvolution of `spec` (bias empty: nullptr); padding passed as run_convolution_backward does.
ForwardResult run_convolution_forward(const ConvSpec& spec, const ForwardOptions& options,
                                      const std::vector<double>& input, const std::vector<double>& weight,
                                      const std::vector<double>& bias);
// aclnnConvTbc: self (T, B, Cin), weight (K, Cin, Cout), bias (Cout).
ForwardResult run_conv_tbc_forward(const TbcSpec& spec, const ForwardOptions& options, const std::vector<double>& self,
                                   const std::vector<double>& weight, const std::vector<double>& bias);
// aclnnConvDepthwise2d of a 2-D `spec` whose groups are its input channels (bias empty: nullptr).
ForwardResult run_conv_depthwise2d(const ConvSpec& spec, const ForwardOptions& options, const std::vector<double>& self,
                                   const std::vector<double>& weight, const std::vector<double>& bias);

// Rounds every value once into `dtype`, as an output of that dtype holds it.
std::vector<double> rounded(const std::vector<double>& values, aclDataType dtype);

}  // namespace testing_support
