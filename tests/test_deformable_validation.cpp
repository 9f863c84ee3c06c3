// Every status-code row of aclnnDeformableConv2d's and aclnnDeformableConv2dBackward's pages: the code,
// a message naming the API, the parameter and the rule, and outputs untouched. Phase 1 never reads data,
// so most cases use tensors without memory, as CANN's own unit tests do.
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_deformable_conv2d.h"
#include "support/phase1_cases.h"
#include "support/run_deform.h"

namespace testing_support {
namespace {

constexpr aclnnStatus kNull = 161001, kInvalid = 161002;

// A valid call (the doc samples' geometry: x {1,6,2,4}, weight {4,3,5,5}, groups 2), which each case
// changes in one place.
struct Call {
  Shape x{{1, 6, 2, 4}}, weight{{4, 3, 5, 5}}, offset{{1, 75, 2, 4}}, bias{{4}, ACL_FLOAT, ACL_FORMAT_ND},
      out{{1, 4, 2, 4}}, columns{{1, 6, 10, 20}};
  Shape grad_output{{1, 4, 2, 4}}, grad_input{{1, 6, 2, 4}}, grad_weight{{4, 3, 5, 5}}, grad_offset{{1, 75, 2, 4}},
      grad_bias{{4}, ACL_FLOAT, ACL_FORMAT_ND};
  std::vector<int64_t> kernel{5, 5}, stride{1, 1, 1, 1}, padding{2, 2, 2, 2}, dilation{1, 1, 1, 1};
  bool null_kernel = false, null_stride = false, null_padding = false, null_dilation = false;
  bool null_workspace_size = false;
  int64_t groups = 2, deformable_groups = 1;
  bool modulated = true;
};

// The call's four int arrays (nullptr where the call leaves one out), destroyed with it.
struct Arrays {
  aclIntArray *kernel, *stride, *padding, *dilation;
  explicit Arrays(const Call& c)
      : kernel(make(c.kernel, c.null_kernel)),
        stride(make(c.stride, c.null_stride)),
        padding(make(c.padding, c.null_padding)),
        dilation(make(c.dilation, c.null_dilation)) {}
  ~Arrays() {
    for (aclIntArray* a : {kernel, stride, padding, dilation}) aclDestroyIntArray(a);
  }
  static aclIntArray* make(const std::vector<int64_t>& values, bool null) {
    return null ? nullptr : aclCreateIntArray(values.data(), values.size());
  }
};

// Phase 1's outcome; the tensors and the executor released.
Outcome outcome_of(aclnnStatus status, std::initializer_list<aclTensor*> tensors, aclOpExecutor* executor) {
  const Outcome outcome{status, recent_error()};
  for (aclTensor* t : tensors) aclDestroyTensor(t);
  if (status == 0) aclDestroyAclOpExecutor(executor);
  return outcome;
}

Outcome plan_forward(const Call& c) {
  aclTensor *x = c.x.make(), *w = c.weight.make(), *o = c.offset.make(), *b = c.bias.make(), *y = c.out.make(),
            *cols = c.columns.make();
  const Arrays a(c);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = aclnnDeformableConv2dGetWorkspaceSize(
      x, w, o, b, a.kernel, a.stride, a.padding, a.dilation, c.groups, c.deformable_groups, c.modulated, y, cols,
      c.null_workspace_size ? nullptr : &size, &executor);
  return outcome_of(status, {x, w, o, b, y, cols}, executor);
}

Outcome plan_backward(const Call& c) {
  aclTensor *x = c.x.make(), *dy = c.grad_output.make(), *cols = c.columns.make(), *w = c.weight.make(),
            *o = c.offset.make(), *dx = c.grad_input.make(), *dw = c.grad_weight.make(), *doff = c.grad_offset.make(),
            *db = c.grad_bias.make();
  const Arrays a(c);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = aclnnDeformableConv2dBackwardGetWorkspaceSize(
      x, dy, cols, w, o, a.kernel, a.stride, a.padding, a.dilation, c.groups, c.deformable_groups, c.modulated, dx, dw,
      doff, db, c.null_workspace_size ? nullptr : &size, &executor);
  return outcome_of(status, {x, dy, cols, w, o, dx, dw, doff, db}, executor);
}

using Case = PlanCase<Call>;

// The rows both pages share (their second table's 161002 rows), for either operator.
std::vector<Case> shared_cases() {
  return {
      {"kernelSize not 2 values",
       [](Call& c) {
         c.kernel = {5, 5, 1};
       },
       kInvalid, "kernelSize"},
      {"stride not 4 values",
       [](Call& c) {
         c.stride = {1, 1};
       },
       kInvalid, "stride"},
      {"padding not 4 values",
       [](Call& c) {
         c.padding = {2, 2};
       },
       kInvalid, "padding"},
      {"dilation not 4 values",
       [](Call& c) {
         c.dilation = {1, 1, 1};
       },
       kInvalid, "dilation"},
      {"kernel value 0",
       [](Call& c) {
         c.kernel = {0, 5};
       },
       kInvalid, "kernelSize"},
      {"KH*KW > 2048",
       [](Call& c) {
         c.kernel = {64, 33};
       },
       kInvalid, "2048"},
      {"stride N not 1",
       [](Call& c) {
         c.stride = {2, 1, 1, 1};
       },
       kInvalid, "stride"},
      {"stride H 0",
       [](Call& c) {
         c.stride = {1, 1, 0, 1};
       },
       kInvalid, "stride"},
      {"dilation C not 1",
       [](Call& c) {
         c.dilation = {1, 2, 1, 1};
       },
       kInvalid, "dilation"},
      {"dilation W negative",
       [](Call& c) {
         c.dilation = {1, 1, 1, -1};
       },
       kInvalid, "dilation"},
      {"groups 0", [](Call& c) { c.groups = 0; }, kInvalid, "groups"},
      {"deformableGroups 0", [](Call& c) { c.deformable_groups = 0; }, kInvalid, "deformableGroups"},
      {"modulated false", [](Call& c) { c.modulated = false; }, kInvalid, "modulated"},
      {"weight 3-D",
       [](Call& c) {
         c.weight.dims = {4, 3, 25};
       },
       kInvalid, "weight"},
      {"inC not a multiple of deformableGroups", [](Call& c) { c.deformable_groups = 4; }, kInvalid,
       "deformableGroups"},
      {"outC not a multiple of groups",
       [](Call& c) {
         c.groups = 3;
         c.weight.dims = {4, 2, 5, 5};
       },
       kInvalid, "groups"},
      {"weight shape",
       [](Call& c) {
         c.weight.dims = {4, 3, 5, 4};
       },
       kInvalid, "weight shape"},
      {"offset shape",
       [](Call& c) {
         c.offset.dims = {1, 50, 2, 4};
       },
       kInvalid, "offset shape"},
      {"KH*KW*inC/groups > 65535",
       [](Call& c) {
         c.kernel = {45, 45};  // 2025 points * 33 channels per group
         c.x.dims = c.grad_input.dims = {1, 66, 2, 4};
         c.weight.dims = c.grad_weight.dims = {4, 33, 45, 45};
         c.padding = {22, 22, 22, 22};
         c.offset.dims = c.grad_offset.dims = {1, 3 * 2025, 2, 4};
         c.columns.dims = {1, 66, 90, 180};
       },
       kInvalid, "65535"},
      {"dtype not a float type", [](Call& c) { c.x.dtype = ACL_INT32; }, kInvalid, "dtype"},
      {"weight dtype differs", [](Call& c) { c.weight.dtype = ACL_FLOAT16; }, kInvalid, "weight dtype"},
      {"offset dtype differs", [](Call& c) { c.offset.dtype = ACL_BF16; }, kInvalid, "offset dtype"},
      {"stride null", [](Call& c) { c.null_stride = true; }, kNull, "stride is nullptr"},
      {"padding null", [](Call& c) { c.null_padding = true; }, kNull, "padding is nullptr"},
      {"dilation null", [](Call& c) { c.null_dilation = true; }, kNull, "dilation is nullptr"},
      {"workspaceSize null", [](Call& c) { c.null_workspace_size = true; }, kNull, "workspaceSize is nullptr"},
      {"two faults: the dtype is checked before the attributes",
       [](Call& c) {
         c.weight.dtype = ACL_FLOAT16;
         c.groups = 0;
       },
       kInvalid, "weight dtype"},
      {"a huge deformableGroups with no input channels",
       [](Call& c) {
         c.x.dims = c.grad_input.dims = {1, 0, 2, 4};
         c.weight.dims = c.grad_weight.dims = {4, 0, 5, 5};
         c.groups = 1;
         c.deformable_groups = INT64_MAX / 2;
         c.columns.dims = {1, 0, 10, 20};
       },
       kInvalid, "offset shape"},
      {"a stride past 2^31 - 1 (ours)",
       [](Call& c) {  // (one output column: the shapes agree)
         c.stride = {1, 1, 1, int64_t{1} << 40};
         c.out.dims = c.grad_output.dims = {1, 4, 2, 1};
         c.offset.dims = c.grad_offset.dims = {1, 75, 2, 1};
         c.columns.dims = {1, 6, 10, 5};
       },
       kInvalid, "stride [1, 1, 1, 1099511627776]: value"},
      {"H * W past 2^31 - 1",
       [](Call& c) {
         c.x.dims = c.grad_input.dims = {1, 6, 65536, 65536};
       },
       kInvalid, "2147483647"},
  };
}

TEST(DeformableConv2dValidation, EveryForwardRow) {
  std::vector<Case> cases = shared_cases();
  const std::vector<Case> own = {
      {"x null", [](Call& c) { c.x.null = true; }, kNull, "x is nullptr"},
      {"weight null", [](Call& c) { c.weight.null = true; }, kNull, "weight is nullptr"},
      {"offset null", [](Call& c) { c.offset.null = true; }, kNull, "offset is nullptr"},
      {"out null", [](Call& c) { c.out.null = true; }, kNull, "out is nullptr"},
      {"kernelSize null", [](Call& c) { c.null_kernel = true; }, kNull, "kernelSize is nullptr"},
      {"x format NHWC", [](Call& c) { c.x.format = ACL_FORMAT_NHWC; }, kInvalid, "x format"},
      {"out format differs", [](Call& c) { c.out.format = ACL_FORMAT_ND; }, kInvalid, "out format"},
      {"bias format NCHW", [](Call& c) { c.bias.format = ACL_FORMAT_NCHW; }, kInvalid, "biasOptional format"},
      {"bias dtype", [](Call& c) { c.bias.dtype = ACL_FLOAT16; }, kInvalid, "biasOptional dtype"},
      {"deformOut dtype", [](Call& c) { c.columns.dtype = ACL_BF16; }, kInvalid, "deformOutOptional dtype"},
      {"deformOut format", [](Call& c) { c.columns.format = ACL_FORMAT_NHWC; }, kInvalid, "deformOutOptional format"},
      {"bias shape", [](Call& c) { c.bias.dims = {5}; }, kInvalid, "biasOptional shape"},
      {"out shape",
       [](Call& c) {
         c.out.dims = {1, 4, 2, 5};
       },
       kInvalid, "out shape"},
      {"deformOut shape",
       [](Call& c) {
         c.columns.dims = {1, 6, 10, 19};
       },
       kInvalid, "deformOutOptional shape"},
      {"offset rank",
       [](Call& c) {
         c.offset.dims = {75, 2, 4};
       },
       kInvalid, "offset shape"},
      {"bias rank",
       [](Call& c) {
         c.bias.dims = {1, 4};
       },
       kInvalid, "biasOptional shape"},
      {"deformOut rank",
       [](Call& c) {
         c.columns.dims = {6, 10, 20};
       },
       kInvalid, "deformOutOptional shape"},
  };
  cases.insert(cases.end(), own.begin(), own.end());
  expect_cases(cases, plan_forward, "aclnnDeformableConv2dGetWorkspaceSize");
  // Optional bias and deformOut; negative padding is CANN's forward's to take (it only sizes the output).
  Call optional;
  optional.bias.null = optional.columns.null = true;
  EXPECT_EQ(plan_forward(optional).status, 0);
  Call negative;
  negative.padding = {-1, 5, 2, 2};
  EXPECT_EQ(plan_forward(negative).status, 0) << plan_forward(negative).message;
}

TEST(DeformableConv2dValidation, EveryBackwardRow) {
  std::vector<Case> cases = shared_cases();
  const std::vector<Case> own = {
      {"gradOutput null", [](Call& c) { c.grad_output.null = true; }, kNull, "gradOutput is nullptr"},
      {"input null", [](Call& c) { c.x.null = true; }, kNull, "input is nullptr"},
      {"weight null", [](Call& c) { c.weight.null = true; }, kNull, "weight is nullptr"},
      {"offset null", [](Call& c) { c.offset.null = true; }, kNull, "offset is nullptr"},
      {"offsetOut null", [](Call& c) { c.columns.null = true; }, kNull, "offsetOut is nullptr"},
      {"gradInput null", [](Call& c) { c.grad_input.null = true; }, kNull, "gradInput is nullptr"},
      {"gradWeight null", [](Call& c) { c.grad_weight.null = true; }, kNull, "gradWeight is nullptr"},
      {"gradOffset null", [](Call& c) { c.grad_offset.null = true; }, kNull, "gradOffset is nullptr"},
      {"gradBias null", [](Call& c) { c.grad_bias.null = true; }, kNull, "gradBias is nullptr"},
      {"input format ND", [](Call& c) { c.x.format = ACL_FORMAT_ND; }, kInvalid, "input format"},
      {"gradBias format", [](Call& c) { c.grad_bias.format = ACL_FORMAT_NCHW; }, kInvalid, "gradBias format"},
      {"gradInput dtype", [](Call& c) { c.grad_input.dtype = ACL_FLOAT16; }, kInvalid, "gradInput dtype"},
      {"gradBias dtype", [](Call& c) { c.grad_bias.dtype = ACL_BF16; }, kInvalid, "gradBias dtype"},
      {"padding negative",
       [](Call& c) {
         c.padding = {2, 2, -1, 2};
       },
       kInvalid, "padding"},
      {"gradOutput shape",
       [](Call& c) {
         c.grad_output.dims = {1, 4, 3, 4};
       },
       kInvalid, "gradOutput shape"},
      {"offsetOut shape",
       [](Call& c) {
         c.columns.dims = {1, 6, 10, 21};
       },
       kInvalid, "offsetOut shape"},
      {"gradInput shape",
       [](Call& c) {
         c.grad_input.dims = {1, 6, 2, 5};
       },
       kInvalid, "gradInput shape"},
      {"gradWeight shape",
       [](Call& c) {
         c.grad_weight.dims = {4, 3, 5, 4};
       },
       kInvalid, "gradWeight shape"},
      {"gradOffset shape",
       [](Call& c) {
         c.grad_offset.dims = {1, 75, 2, 5};
       },
       kInvalid, "gradOffset shape"},
      {"gradBias shape", [](Call& c) { c.grad_bias.dims = {3}; }, kInvalid, "gradBias shape"},
  };
  cases.insert(cases.end(), own.begin(), own.end());
  expect_cases(cases, plan_backward, "aclnnDeformableConv2dBackwardGetWorkspaceSize");
}

// A refused call leaves its outputs as they were.
TEST(DeformableConv2dValidation, OutputsUntouchedOnError) {
  DeformSpec s;
  s.in_channels = 2, s.out_channels = 2, s.in_h = 4, s.in_w = 4, s.kh = 3, s.kw = 3;
  s.padding[0] = s.padding[1] = s.padding[2] = s.padding[3] = 1;
  DeviceTensor x(s.x_shape(), ACL_FLOAT, ACL_FORMAT_NCHW), w(s.weight_shape(), ACL_FLOAT, ACL_FORMAT_NCHW),
      offset(s.offset_shape(), ACL_FLOAT, ACL_FORMAT_NCHW), out(s.out_shape(), ACL_FLOAT, ACL_FORMAT_NCHW),
      columns(s.columns_shape(), ACL_FLOAT, ACL_FORMAT_NCHW);
  out.poison(0x5A), columns.poison(0x5A);
  const std::vector<uint8_t> before = out.bytes(), columns_before = columns.bytes();
  const int64_t k[] = {3, 3}, st[] = {1, 1, 1, 1}, p[] = {1, 1, 1, 1}, d[] = {1, 1, 1, 1};
  aclIntArray *kernel = aclCreateIntArray(k, 2), *stride = aclCreateIntArray(st, 4), *padding = aclCreateIntArray(p, 4),
              *dilation = aclCreateIntArray(d, 4);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  EXPECT_EQ(aclnnDeformableConv2dGetWorkspaceSize(x.get(), w.get(), offset.get(), nullptr, kernel, stride, padding,
                                                  dilation, 1, 1, false, out.get(), columns.get(), &size, &executor),
            kInvalid);
  EXPECT_EQ(out.bytes(), before);
  EXPECT_EQ(columns.bytes(), columns_before);
  for (aclIntArray* a : {kernel, stride, padding, dilation}) aclDestroyIntArray(a);
}

}  // namespace
}  // namespace testing_support
