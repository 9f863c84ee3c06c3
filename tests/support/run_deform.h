// Test helper: runs aclnnDeformableConv2d and aclnnDeformableConv2dBackward through the public C API,
// on a poisoned workspace, with every tensor in one dtype and layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "support/device_tensor.h"

namespace testing_support {

struct DeformSpec {
  int64_t batch = 1, in_channels = 1, out_channels = 1, in_h = 1, in_w = 1, kh = 1, kw = 1;
  int64_t stride[2] = {1, 1};
  int64_t padding[4] = {0, 0, 0, 0};  // top, bottom, left, right
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1, deformable_groups = 1;

  int64_t out_h() const { return (in_h + padding[0] + padding[1] - (kh - 1) * dilation[0] - 1) / stride[0] + 1; }
  int64_t out_w() const { return (in_w + padding[2] + padding[3] - (kw - 1) * dilation[1] - 1) / stride[1] + 1; }
  std::vector<int64_t> x_shape() const { return {batch, in_channels, in_h, in_w}; }
  std::vector<int64_t> weight_shape() const { return {out_channels, in_channels / groups, kh, kw}; }
  std::vector<int64_t> offset_shape() const { return {batch, 3 * deformable_groups * kh * kw, out_h(), out_w()}; }
  std::vector<int64_t> out_shape() const { return {batch, out_channels, out_h(), out_w()}; }
  std::vector<int64_t> columns_shape() const { return {batch, in_channels, out_h() * kh, out_w() * kw}; }
};

// Inputs in CANN's layouts (row-major values); an empty bias is passed as nullptr.
struct DeformInputs {
  std::vector<double> x, weight, offset, bias;
  std::vector<double> grad_output, offset_out;  // the backward's
  // Explicit strides for out (forward) or gradOffset (backward), which may make the view overlap itself
  // (empty: the layout's).
  std::vector<int64_t> result_strides;
};

struct DeformResult {
  aclnnStatus status = 0;
  uint64_t workspace_size = 0;
  std::string error;
  std::vector<double> out, deform_out;                                  // the forward's
  std::vector<double> grad_input, grad_weight, grad_offset, grad_bias;  // the backward's
  std::vector<int64_t> result_offsets;  // out's or gradOffset's storage elements (for last_writes)
};

DeformResult run_deformable_forward(const DeformSpec& spec, aclDataType dtype, Layout layout, const DeformInputs& in,
                                    bool want_deform_out = true);
DeformResult run_deformable_backward(const DeformSpec& spec, aclDataType dtype, Layout layout, const DeformInputs& in);

}  // namespace testing_support
