#include "support/run_deform.h"

#include <memory>

#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_deformable_conv2d.h"

namespace testing_support {
namespace {

std::unique_ptr<DeviceTensor> tensor(const std::vector<int64_t>& shape, aclDataType dtype, Layout layout,
                                     const std::vector<double>* values) {
  auto t = std::make_unique<DeviceTensor>(shape, dtype, shape.size() == 1 ? ACL_FORMAT_ND : ACL_FORMAT_NCHW, layout);
  if (values != nullptr) {
    t->fill(*values);
  } else {
    t->poison();
  }
  return t;
}

// The result the caller may give explicit strides (DeformInputs::result_strides), poisoned.
std::unique_ptr<DeviceTensor> result_tensor(const std::vector<int64_t>& shape, aclDataType dtype, Layout layout,
                                            const DeformInputs& in) {
  if (in.result_strides.empty()) return tensor(shape, dtype, layout, nullptr);
  auto t = std::make_unique<DeviceTensor>(shape, dtype, ACL_FORMAT_NCHW, in.result_strides);
  t->poison();
  return t;
}

struct Arrays {
  aclIntArray *kernel, *stride, *padding, *dilation;
  explicit Arrays(const DeformSpec& s) {
    const int64_t k[] = {s.kh, s.kw}, st[] = {1, 1, s.stride[0], s.stride[1]},
                  d[] = {1, 1, s.dilation[0], s.dilation[1]};
    kernel = aclCreateIntArray(k, 2);
    stride = aclCreateIntArray(st, 4);
    padding = aclCreateIntArray(s.padding, 4);
    dilation = aclCreateIntArray(d, 4);
  }
  ~Arrays() {
    for (aclIntArray* a : {kernel, stride, padding, dilation}) aclDestroyIntArray(a);
  }
};

// Phase 2 on a poisoned workspace (all bytes 0xFF: NaN in every float type), then a synchronize.
aclnnStatus execute(aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream), uint64_t size,
                    aclOpExecutor* executor) {
  void* workspace = nullptr;
  if (size > 0 && aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return -1;
  if (size > 0 && aclrtMemset(workspace, size, 0xFF, size) != ACL_SUCCESS) return -1;
  aclnnStatus status = run(workspace, size, executor, nullptr);
  if (status == 0) status = aclrtSynchronizeStream(nullptr);
  if (workspace != nullptr) aclrtFree(workspace);
  return status;
}

std::string take_error() {
  const char* message = aclGetRecentErrMsg();
  return message == nullptr ? std::string() : message;
}

}  // namespace

DeformResult run_deformable_forward(const DeformSpec& s, aclDataType dtype, Layout layout, const DeformInputs& in,
                                    bool want_deform_out) {
  auto x = tensor(s.x_shape(), dtype, layout, &in.x), w = tensor(s.weight_shape(), dtype, layout, &in.weight),
       offset = tensor(s.offset_shape(), dtype, layout, &in.offset),
       out = result_tensor(s.out_shape(), dtype, layout, in),
       columns = tensor(s.columns_shape(), dtype, layout, nullptr);
  std::unique_ptr<DeviceTensor> bias;
  if (!in.bias.empty()) bias = tensor({s.out_channels}, dtype, Layout::kContiguous, &in.bias);
  const Arrays arrays(s);
  DeformResult result;
  aclOpExecutor* executor = nullptr;
  result.status = aclnnDeformableConv2dGetWorkspaceSize(
      x->get(), w->get(), offset->get(), bias ? bias->get() : nullptr, arrays.kernel, arrays.stride, arrays.padding,
      arrays.dilation, s.groups, s.deformable_groups, true, out->get(), want_deform_out ? columns->get() : nullptr,
      &result.workspace_size, &executor);
  if (result.status == 0) result.status = execute(aclnnDeformableConv2d, result.workspace_size, executor);
  if (result.status != 0) {
    result.error = take_error();
    return result;
  }
  result.out = out->read();
  result.result_offsets = out->element_offsets();
  if (want_deform_out) result.deform_out = columns->read();
  return result;
}

DeformResult run_deformable_backward(const DeformSpec& s, aclDataType dtype, Layout layout, const DeformInputs& in) {
  auto x = tensor(s.x_shape(), dtype, layout, &in.x), w = tensor(s.weight_shape(), dtype, layout, &in.weight),
       offset = tensor(s.offset_shape(), dtype, layout, &in.offset),
       grad_output = tensor(s.out_shape(), dtype, layout, &in.grad_output),
       offset_out = tensor(s.columns_shape(), dtype, layout, &in.offset_out),
       grad_input = tensor(s.x_shape(), dtype, layout, nullptr),
       grad_weight = tensor(s.weight_shape(), dtype, layout, nullptr),
       grad_offset = result_tensor(s.offset_shape(), dtype, layout, in),
       grad_bias = tensor({s.out_channels}, dtype, Layout::kContiguous, nullptr);
  const Arrays arrays(s);
  DeformResult result;
  aclOpExecutor* executor = nullptr;
  result.status = aclnnDeformableConv2dBackwardGetWorkspaceSize(
      x->get(), grad_output->get(), offset_out->get(), w->get(), offset->get(), arrays.kernel, arrays.stride,
      arrays.padding, arrays.dilation, s.groups, s.deformable_groups, true, grad_input->get(), grad_weight->get(),
      grad_offset->get(), grad_bias->get(), &result.workspace_size, &executor);
  if (result.status == 0) result.status = execute(aclnnDeformableConv2dBackward, result.workspace_size, executor);
  if (result.status != 0) {
    result.error = take_error();
    return result;
  }
  result.grad_input = grad_input->read();
  result.grad_weight = grad_weight->read();
  result.grad_offset = grad_offset->read();
  result.result_offsets = grad_offset->element_offsets();
  result.grad_bias = grad_bias->read();
  return result;
}

}  // namespace testing_support
