// The forward operators' phase 1: aclnnConvolution, aclnnConvTbc and aclnnConvDepthwise2d. Their
// arguments, their validation in CANN's check order (F*, B*, D* of docs/convolution_forward.md),
// and the problem they describe. Each forward result is the input gradient of a direct problem
// with the roles swapped (forward_problem), so the three share the backward operators' core.
#pragma once

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"
#include "conv/check.h"
#include "conv/phase2_refusal.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

struct ConvolutionArgs {
  const aclTensor* input;
  const aclTensor* weight;
  const aclTensor* bias;  // may be nullptr
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  bool transposed;
  const aclIntArray* output_padding;  // read only when transposed
  int64_t groups;
  const aclTensor* output;
  int8_t cube_math_type;
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

struct ConvTbcArgs {
  const aclTensor* self;    // (T, B, Cin)
  const aclTensor* weight;  // (K, Cin, Cout)
  const aclTensor* bias;    // (Cout)
  int64_t pad;
  const aclTensor* output;  // (T + 2*pad + 1 - K, B, Cout)
  int8_t cube_math_type;
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

struct ConvDepthwise2dArgs {
  const aclTensor* self;    // (N, Cin, H, W)
  const aclTensor* weight;  // (Cout, 1, kH, kW)
  const aclIntArray* kernel_size;
  const aclTensor* bias;  // (Cout) or nullptr
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  const aclTensor* out;
  int8_t cube_math_type;
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

// Each returns the first failing check (status and reported message), or a passed Check.
Check validate_convolution(const ConvolutionArgs& args);
Check validate_conv_tbc(const ConvTbcArgs& args);
Check validate_conv_depthwise2d(const ConvDepthwise2dArgs& args);

// The tensors a run of validated arguments reads or writes.
std::vector<UsedTensor> used_tensors(const ConvolutionArgs& args);
std::vector<UsedTensor> used_tensors(const ConvTbcArgs& args);
std::vector<UsedTensor> used_tensors(const ConvDepthwise2dArgs& args);

// The problems of validated arguments.
ConvProblem make_convolution_problem(const ConvolutionArgs& args);
ConvProblem make_conv_tbc_problem(const ConvTbcArgs& args);
ConvProblem make_conv_depthwise2d_problem(const ConvDepthwise2dArgs& args);

// The role swap, in one place. `geometry` is the direct convolution from `input` to `output`
// (transposed = false), or, for a transposed convolution, the direct one from `output` to `input`
// whose adjoint it is. The forward result is then that problem's input gradient: the direct
// convolution's forward (InputGrad::kForward) or its backward-data (kBackwardData), written into
// `output` with `bias` (nullptr: none) added.
ConvProblem forward_problem(const ConvGeometry& geometry, bool transposed, const View5& input, const View5& weight,
                            const View5& output, const View5* bias, MathMode math);

}  // namespace aclnn_cpu
