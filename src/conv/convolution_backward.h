// aclnnConvolutionBackward phase 1: arguments, their validation (CANN's check order R0-R18 of
// docs/convolution_backward.md), and the normalised problem they describe.
#pragma once

#include <cstdint>

#include "aclnn/acl_meta.h"
#include "conv/check.h"
#include "conv/phase2_refusal.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

struct ConvBackwardArgs {
  const aclTensor* grad_output;
  const aclTensor* input;
  const aclTensor* weight;
  const aclIntArray* bias_sizes;
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  bool transposed;
  const aclIntArray* output_padding;
  int groups;
  const aclBoolArray* output_mask;
  int8_t cube_math_type;
  const aclTensor* grad_input;
  const aclTensor* grad_weight;
  const aclTensor* grad_bias;
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

// Returns the first failing check (status and reported message), or a passed Check.
Check validate_convolution_backward(const ConvBackwardArgs& args);

// The tensors a run of validated arguments reads or writes, in check order.
std::vector<UsedTensor> used_tensors(const ConvBackwardArgs& args);

// The direct problem of validated arguments.
ConvProblem make_convolution_problem(const ConvBackwardArgs& args);

MathMode math_mode(int8_t cube_math_type);

}  // namespace aclnn_cpu
