// aclnnConvTbcBackward phase 1: arguments, validation in CANN's order (T0-T12), and the direct
// 1-D problem they describe (TBC tensors seen through permuted views, no copies).
#pragma once

#include <cstdint>

#include "aclnn/acl_meta.h"
#include "conv/check.h"
#include "conv/phase2_refusal.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

struct ConvTbcBackwardArgs {
  const aclTensor* self;    // gradient of the conv_tbc output: (T + 2*pad + 1 - K, B, Cout)
  const aclTensor* input;   // (T, B, Cin)
  const aclTensor* weight;  // (K, Cin, Cout)
  const aclTensor* bias;    // (Cout)
  int64_t pad;
  int8_t cube_math_type;
  const aclTensor* grad_input;
  const aclTensor* grad_weight;
  const aclTensor* grad_bias;
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

Check validate_conv_tbc_backward(const ConvTbcBackwardArgs& args);
// The tensors a run reads or writes (all but bias), in check order.
std::vector<UsedTensor> used_tensors(const ConvTbcBackwardArgs& args);

ConvProblem make_conv_tbc_problem(const ConvTbcBackwardArgs& args);

}  // namespace aclnn_cpu
