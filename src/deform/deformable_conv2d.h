// The deformable convolution's phase 1 (aclnnDeformableConv2d and aclnnDeformableConv2dBackward):
// their arguments, their validation in CANN's check order (docs/deformable_conv2d.md), and the
// problem they describe (kernels/core/deform_problem.h).
#pragma once

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"
#include "conv/check.h"
#include "conv/phase2_refusal.h"
#include "kernels/core/deform_problem.h"

namespace aclnn_cpu {

struct DeformableConv2dArgs {
  const aclTensor* x;       // (N, inC, inH, inW)
  const aclTensor* weight;  // (outC, inC/groups, KH, KW)
  const aclTensor* offset;  // (N, 3*dg*KH*KW, outH, outW)
  const aclTensor* bias;    // (outC) or nullptr
  const aclIntArray* kernel_size;
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  int64_t groups;
  int64_t deformable_groups;
  bool modulated;
  const aclTensor* out;         // (N, outC, outH, outW)
  const aclTensor* deform_out;  // (N, inC, outH*KH, outW*KW) or nullptr
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

struct DeformableConv2dBackwardArgs {
  const aclTensor* input;
  const aclTensor* grad_output;
  const aclTensor* offset_out;  // the forward's deformOut
  const aclTensor* weight;
  const aclTensor* offset;
  const aclIntArray* kernel_size;
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  int64_t groups;
  int64_t deformable_groups;
  bool modulated;
  const aclTensor* grad_input;
  const aclTensor* grad_weight;
  const aclTensor* grad_offset;
  const aclTensor* grad_bias;
  const uint64_t* workspace_size;
  aclOpExecutor* const* executor;
};

// The attributes both operators share, in CANN's order: the arrays' lengths, the kernel size, stride
// and (backward: padding >= 0) dilation values, groups, deformableGroups, modulated.
struct DeformAttributes {
  const aclIntArray* kernel_size;
  const aclIntArray* stride;
  const aclIntArray* padding;
  const aclIntArray* dilation;
  int64_t groups;
  int64_t deformable_groups;
  bool modulated;
};
Check check_deform_attributes(const char* api, const DeformAttributes& a, bool padding_non_negative);

// The geometry the attributes give for an input (N, inC, inH, inW) and weight (outC, ...): output size
// by CANN's formula (C++ division: it truncates), in 128 bits.
struct DeformShapes {
  int64_t batch, in_channels, in_h, in_w, out_channels;
  Wide out_h, out_w;
};
DeformShapes deform_shapes(const aclTensor& input, const aclTensor& weight, const DeformAttributes& a);
// inC % deformableGroups, inC % groups and outC % groups, inH*inW <= 2^31 - 1, in CANN's order.
Check check_deform_divisible(const char* api, const char* input_name, const DeformShapes& s, const DeformAttributes& a);
// KH*KW*inC/groups <= 65535 (CANN's last shape check), then ours: every size and parameter within
// 2^31 - 1 (the kernels index with them).
Check check_deform_limits(const char* api, const DeformShapes& s, const DeformAttributes& a,
                          std::initializer_list<NamedTensor> tensors);

Check validate_deformable_conv2d(const DeformableConv2dArgs& args);
Check validate_deformable_conv2d_backward(const DeformableConv2dBackwardArgs& args);

std::vector<UsedTensor> used_tensors(const DeformableConv2dArgs& args);
std::vector<UsedTensor> used_tensors(const DeformableConv2dBackwardArgs& args);

DeformProblem make_deformable_problem(const DeformableConv2dArgs& args);
DeformProblem make_deformable_problem(const DeformableConv2dBackwardArgs& args);

}  // namespace aclnn_cpu
