// aclnnConvDepthwise2d: checks D0-D7 (docs/convolution_forward.md) and its problem, a 2-D
// convolution with one group per input channel.
#include <cstring>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/convolution_backward.h"
#include "conv/convolution_forward.h"
#include "conv/tensor_views.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

constexpr const char* kApi = "aclnnConvDepthwise2dGetWorkspaceSize";

Check invalid(const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, kApi, message); }
long long ll(int64_t value) { return static_cast<long long>(value); }

struct Named {
  const char* name;
  const aclTensor* tensor;
};

// The value of the weight's dim named by `letter` ('H', 'W'), found by the letter's place in its format's
// name, as CANN's kernelSize check reads it: 1 where the name lacks the letter or the tensor has too few dims.
int64_t dim_by_letter(const aclTensor& tensor, char letter) {
  const char* name = format_name(tensor.format);
  const char* at = std::strchr(name, letter);
  const int64_t index = at == nullptr ? -1 : at - name;
  return index < 0 || index >= dims(tensor) ? 1 : dim_size(tensor, index);
}

// D0, before any null check as in CANN: kernelSize equals the weight's (H, W) (read by the letters of
// its format; a null weight has none, so only [0, 0] passes; an NCL weight is not checked).
Check check_kernel_size(const ConvDepthwise2dArgs& a) {
  if (a.kernel_size == nullptr) return fail_check(ACLNN_ERR_PARAM_NULLPTR, kApi, "kernelSize is nullptr");  // ours
  const std::vector<int64_t>& k = a.kernel_size->values;
  if (k.size() != 2) {
    return invalid(format("kernelSize %s has %zu values: expected 2 ([kH, kW])", to_string(k).c_str(), k.size()));
  }
  if (a.weight != nullptr && a.weight->format == ACL_FORMAT_NCL) return Check{};
  const int64_t kh = a.weight == nullptr ? 0 : dim_by_letter(*a.weight, 'H');
  const int64_t kw = a.weight == nullptr ? 0 : dim_by_letter(*a.weight, 'W');
  if (k[0] != kh || k[1] != kw) {
    return invalid(
        format("kernelSize %s must equal the weight's [H, W] = [%lld, %lld]", to_string(k).c_str(), ll(kh), ll(kw)));
  }
  return Check{};
}

}  // namespace

std::vector<UsedTensor> used_tensors(const ConvDepthwise2dArgs& a) {
  std::vector<UsedTensor> used = {{"self", a.self, false}, {"weight", a.weight, false}};
  if (a.bias != nullptr) used.push_back({"bias", a.bias, false});
  used.push_back({"out", a.out, true});
  return used;
}

Check validate_conv_depthwise2d(const ConvDepthwise2dArgs& a) {
  Check check = check_kernel_size(a);  // D0
  if (check.failed()) return check;
  // D1: mandatory arguments (bias may be nullptr).
  check = check_not_null(kApi, {{"self", a.self},
                                {"weight", a.weight},
                                {"stride", a.stride},
                                {"padding", a.padding},
                                {"dilation", a.dilation},
                                {"out", a.out},
                                {"workspaceSize", a.workspace_size},
                                {"executor", a.executor}});
  if (check.failed()) return check;
  const Named all[] = {{"bias", a.bias}, {"self", a.self}, {"weight", a.weight}, {"out", a.out}};
  for (const Named& t : all) {  // ours: well formed before shapes are read
    if (t.tensor == nullptr) continue;
    check = check_well_formed(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // D2: dtypes: bias (as self), then self, weight, out; all one dtype.
  for (const Named& t : all) {
    if (t.tensor == nullptr) continue;
    check = check_float_dtype(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
    if (t.tensor == a.bias && a.bias->dtype != a.self->dtype) {
      return invalid(
          format("bias dtype %s must equal self dtype %s", dtype_name(a.bias->dtype), dtype_name(a.self->dtype)));
    }
  }
  for (const Named& t : {all[2], all[3]}) {
    if (t.tensor->dtype != a.self->dtype) {
      return invalid(format("%s dtype %s must equal self dtype %s", t.name, dtype_name(t.tensor->dtype),
                            dtype_name(a.self->dtype)));
    }
  }
  // D3: ranks and parameter lengths.
  for (const Named& t : {all[1], all[2], all[3], all[0]}) {
    if (t.tensor == nullptr) continue;
    const int64_t rank = t.tensor == a.bias ? 1 : 4;
    if (dims(*t.tensor) != rank) {
      return invalid(format("%s has %lld dims: expected %lld", t.name, ll(dims(*t.tensor)), ll(rank)));
    }
  }
  const struct {
    const char* name;
    const aclIntArray* array;
    int64_t minimum;
  } params[] = {{"stride", a.stride, 1}, {"dilation", a.dilation, 1}, {"padding", a.padding, 0}};
  for (const auto& p : params) {
    if (p.array->values.size() != 2) {
      return invalid(format("%s %s has %zu values: expected 2", p.name, to_string(p.array->values).c_str(),
                            p.array->values.size()));
    }
  }
  // D4: formats NCHW.
  for (const Named& t : {all[1], all[2], all[3]}) {
    if (t.tensor->format != ACL_FORMAT_NCHW) {
      return invalid(format("%s format %s (%d) is not supported: expected NCHW", t.name, format_name(t.tensor->format),
                            t.tensor->format));
    }
  }
  // D5: values.
  const std::vector<int64_t>&x = a.self->view_shape, &w = a.weight->view_shape;
  if (w[0] <= 0) return invalid(format("weight.shape[0] (the output channels) %lld must be > 0", ll(w[0])));
  if (w[2] <= 0 || w[3] <= 0) {
    return invalid(format("weight shape %s: the kernel's H and W must be > 0", to_string(w).c_str()));
  }
  for (const auto& p : params) {  // (padding >= 0: ours)
    for (int64_t v : p.array->values) {
      if (v < p.minimum) {
        return invalid(
            format("%s %s: every element must be >= %lld", p.name, to_string(p.array->values).c_str(), ll(p.minimum)));
      }
    }
  }
  const std::vector<int64_t>&stride = a.stride->values, &padding = a.padding->values, &dilation = a.dilation->values;
  if (!is_empty(*a.self)) {
    for (size_t i = 0; i < 2; ++i) {
      if (Wide{x[2 + i]} + 2 * Wide{padding[i]} - dilated_span(w[2 + i], dilation[i]) < 0) {
        return invalid(
            format("spatial dim %zu: self size %lld padded by 2 * %lld is smaller than the kernel %lld "
                   "dilated by %lld",
                   i, ll(x[2 + i]), ll(padding[i]), ll(w[2 + i]), ll(dilation[i])));
      }
    }
  }
  if (w[1] != 0 && w[1] != 1) return invalid(format("weight.shape[1] = %lld must be 1", ll(w[1])));
  if (x[1] != 0 && w[0] % x[1] != 0) {
    return invalid(format("weight.shape[0] = %lld (the output channels) must be a multiple of the self channels %lld",
                          ll(w[0]), ll(x[1])));
  }
  if (a.bias != nullptr && a.bias->view_shape[0] != w[0]) {
    return invalid(format("bias length %lld must equal the output channels %lld", ll(a.bias->view_shape[0]), ll(w[0])));
  }
  // D6: out shape, exactly; an empty self or weight only with an empty out.
  std::vector<Wide> expected = {x[0], w[0]};
  for (size_t i = 0; i < 2; ++i)
    expected.push_back((Wide{x[2 + i]} + 2 * Wide{padding[i]} - dilated_span(w[2 + i], dilation[i])) / stride[i] + 1);
  for (size_t i = 0; i < 4; ++i) {
    if (Wide{a.out->view_shape[i]} != expected[i]) {
      return invalid(format("out shape %s: dim %zu must be %lld", to_string(a.out->view_shape).c_str(), i,
                            static_cast<long long>(expected[i])));
    }
  }
  if ((is_empty(*a.self) || is_empty(*a.weight)) && !is_empty(*a.out)) {
    return invalid(format("out shape %s must be empty when self %s or weight %s is",
                          to_string(a.out->view_shape).c_str(), to_string(x).c_str(), to_string(w).c_str()));
  }
  check = check_cube_math_type(kApi, a.cube_math_type, 4);  // D7
  if (check.failed()) return check;
  // Ours: sizes the kernels index with, and every tensor inside its storage.
  for (const std::vector<int64_t>* list : {&x, &w, &stride, &padding, &dilation}) {
    for (int64_t v : *list) {
      if (v > INT32_MAX) {
        return invalid(
            format("value %lld in %s exceeds 2^31 - 1, the bound on the sizes and parameters of a problem "
                   "to compute",
                   ll(v), to_string(*list).c_str()));
      }
    }
  }
  return check_inside_storage(kApi, used_tensors(a));
}

ConvProblem make_conv_depthwise2d_problem(const ConvDepthwise2dArgs& a) {
  const View5 input = make_ncs_view5(*a.self), weight = make_ncs_view5(*a.weight), output = make_ncs_view5(*a.out);
  ConvGeometry g;
  g.batch = input.shape[0];
  // One group per input channel (none without channels: the problem is then empty).
  g.groups = input.shape[1] > 0 ? input.shape[1] : 1;
  g.src_channels_per_group = input.shape[1] > 0 ? 1 : 0;
  g.dst_channels_per_group = weight.shape[0] / g.groups;
  for (int i = 1; i < 3; ++i) {
    g.src_size[i] = input.shape[2 + i];
    g.dst_size[i] = output.shape[2 + i];
    g.kernel[i] = weight.shape[2 + i];
    g.stride[i] = a.stride->values[static_cast<size_t>(i - 1)];
    g.dilation[i] = a.dilation->values[static_cast<size_t>(i - 1)];
    g.pad[i] = a.padding->values[static_cast<size_t>(i - 1)];
  }
  View5 bias;
  if (a.bias != nullptr) bias = make_ncs_view5(*a.bias);
  return forward_problem(g, false, input, weight, output, a.bias != nullptr ? &bias : nullptr,
                         math_mode(a.cube_math_type));
}

}  // namespace aclnn_cpu
