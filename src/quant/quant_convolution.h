// aclnnQuantConvolution's phase 1: its arguments, their validation in CANN's check order
// (docs/quant_convolution.md, "Check order"), and the problem they describe (kernels/core/quant_problem.h).
#pragma once

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"
#include "conv/check.h"
#include "conv/phase2_refusal.h"
#include "kernels/core/quant_problem.h"

namespace aclnn_cpu {

struct QuantConvolutionArgs {
  const aclTensor* input;   // INT8 (N, Cin, [D,] H, W)
  const aclTensor* weight;  // INT8 (Cout, Cin/groups, [KD,] KH, KW)
  const aclTensor* bias;    // (Cout)
  const aclTensor* scale;   // (Cout)
  const aclTensor* offset;  // reserved
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  bool transposed;                    // reserved
  const aclIntArray* output_padding;  // reserved
  int64_t groups;
  int32_t offsetx;
  const char* round_mode;
  const aclTensor* output;  // FLOAT16 or BF16 (N, Cout, [OD,] OH, OW)
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

// Whether a call takes Ascend 950's quantized path (QuantConv3D, ExtendConv2D): an INT64 or UINT64 scale,
// or a 2-D input. There offsetx is the pad value (checked in [-128, 127]) and roundMode is checked; on
// Atlas A2's path (a 3-D input with a FLOAT scale) both are ignored.
bool takes_950_path(const QuantConvolutionArgs& args);

Check validate_quant_convolution(const QuantConvolutionArgs& args);
std::vector<UsedTensor> used_tensors(const QuantConvolutionArgs& args);
QuantProblem make_quant_problem(const QuantConvolutionArgs& args);

}  // namespace aclnn_cpu
