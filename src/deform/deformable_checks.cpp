// The checks aclnnDeformableConv2d and its backward share (CANN's CheckAttrs and parts of
// CheckShape), and the problems both describe.
#include <string>
#include <utility>

#include "aclnn/opdev/op_errno.h"
#include "common/log.h"
#include "conv/tensor_views.h"
#include "deform/deformable_conv2d.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

long long ll(Wide value) { return static_cast<long long>(value); }

Check invalid(const char* api, const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, api, message); }

// The geometry of validated arguments.
DeformGeometry geometry_of(const aclTensor& input, const aclTensor& weight, const DeformAttributes& a) {
  const DeformShapes s = deform_shapes(input, weight, a);
  DeformGeometry g;
  g.batch = s.batch;
  g.in_channels = s.in_channels, g.out_channels = s.out_channels;
  g.groups = a.groups, g.deformable_groups = a.deformable_groups;
  g.in_size[0] = s.in_h, g.in_size[1] = s.in_w;
  g.out_size[0] = static_cast<int64_t>(s.out_h), g.out_size[1] = static_cast<int64_t>(s.out_w);
  for (size_t i = 0; i < 2; ++i) {
    g.kernel[i] = a.kernel_size->values[i];
    g.stride[i] = a.stride->values[2 + i];
    g.dilation[i] = a.dilation->values[2 + i];
    g.pad[i] = a.padding->values[2 * i];  // (top, bottom, left, right)
  }
  return g;
}

}  // namespace

Check check_deform_attributes(const char* api, const DeformAttributes& a, bool padding_non_negative) {
  const struct {
    const char* name;
    const aclIntArray* array;
    size_t size;
  } arrays[] = {{"kernelSize", a.kernel_size, 2},
                {"stride", a.stride, 4},
                {"padding", a.padding, 4},
                {"dilation", a.dilation, 4}};
  for (const auto& array : arrays) {
    if (array.array->values.size() != array.size) {
      return invalid(api, format("%s %s has %zu values: expected %zu", array.name,
                                 to_string(array.array->values).c_str(), array.array->values.size(), array.size));
    }
  }
  const std::vector<int64_t>& k = a.kernel_size->values;
  if (k[0] <= 0 || k[1] <= 0) {
    return invalid(api, format("kernelSize %s: both values must be > 0", to_string(k).c_str()));
  }
  if (Wide{k[0]} * k[1] > 2048) {
    return invalid(
        api, format("kernelSize %s: KH * KW = %lld must be <= 2048", to_string(k).c_str(), ll(Wide{k[0]} * k[1])));
  }
  for (const auto& array : {arrays[1], arrays[2], arrays[3]}) {
    const std::vector<int64_t>& v = array.array->values;
    if (array.array == a.padding) {
      if (!padding_non_negative) continue;
      for (int64_t value : v) {
        if (value < 0) return invalid(api, format("padding %s: every value must be >= 0", to_string(v).c_str()));
      }
      continue;
    }
    if (v[0] != 1 || v[1] != 1) {
      return invalid(api,
                     format("%s %s: its N and C values (the first two) must be 1", array.name, to_string(v).c_str()));
    }
    if (v[2] <= 0 || v[3] <= 0) {
      return invalid(api,
                     format("%s %s: its H and W values (the last two) must be > 0", array.name, to_string(v).c_str()));
    }
  }
  if (a.groups <= 0) return invalid(api, format("groups %lld must be > 0", ll(a.groups)));
  if (a.deformable_groups <= 0) {
    return invalid(api, format("deformableGroups %lld must be > 0", ll(a.deformable_groups)));
  }
  if (!a.modulated) return invalid(api, "modulated false is not supported: it must be true");
  return Check{};
}

DeformShapes deform_shapes(const aclTensor& input, const aclTensor& weight, const DeformAttributes& a) {
  const std::vector<int64_t>&x = input.view_shape, &k = a.kernel_size->values, &s = a.stride->values,
        &p = a.padding->values, &d = a.dilation->values;
  DeformShapes shapes{x[0], x[1], x[2], x[3], weight.view_shape[0], 0, 0};
  // (C++ division, as CANN's: it truncates toward zero)
  shapes.out_h = (Wide{x[2]} + p[0] + p[1] - (Wide{k[0]} - 1) * d[2] - 1) / s[2] + 1;
  shapes.out_w = (Wide{x[3]} + p[2] + p[3] - (Wide{k[1]} - 1) * d[3] - 1) / s[3] + 1;
  return shapes;
}

Check check_deform_divisible(const char* api, const char* input_name, const DeformShapes& s,
                             const DeformAttributes& a) {
  if (s.in_channels % a.deformable_groups != 0) {
    return invalid(api, format("%s channels %lld must be a multiple of deformableGroups %lld", input_name,
                               ll(s.in_channels), ll(a.deformable_groups)));
  }
  if (s.in_channels % a.groups != 0 || s.out_channels % a.groups != 0) {
    return invalid(api, format("%s channels %lld and weight.shape[0] %lld must both be multiples of groups %lld",
                               input_name, ll(s.in_channels), ll(s.out_channels), ll(a.groups)));
  }
  if (Wide{s.in_h} * s.in_w > INT32_MAX) {
    return invalid(api, format("%s H * W = %lld * %lld must be <= 2147483647", input_name, ll(s.in_h), ll(s.in_w)));
  }
  return Check{};
}

Check check_deform_limits(const char* api, const DeformShapes& s, const DeformAttributes& a,
                          std::initializer_list<NamedTensor> tensors) {
  const std::vector<int64_t>& k = a.kernel_size->values;
  if (Wide{k[0]} * k[1] * (s.in_channels / a.groups) > 65535) {
    return invalid(api, format("KH * KW * inC / groups = %lld * %lld * %lld / %lld must be <= 65535", ll(k[0]),
                               ll(k[1]), ll(s.in_channels), ll(a.groups)));
  }
  // Ours: the kernels index with int64 products of these.
  std::vector<std::pair<std::string, std::vector<int64_t>>> lists = {
      {"stride", a.stride->values},
      {"padding", a.padding->values},
      {"dilation", a.dilation->values},
      {"groups and deformableGroups", {a.groups, a.deformable_groups}}};
  for (const NamedTensor& t : tensors) lists.push_back({std::string(t.name) + " shape", t.tensor->view_shape});
  for (const auto& list : lists) {
    for (int64_t v : list.second) {
      if (v > INT32_MAX || v < -INT32_MAX) {
        return invalid(api, format("%s %s: value %lld is outside +-(2^31 - 1), the bound on the sizes and "
                                   "parameters of a problem to compute",
                                   list.first.c_str(), to_string(list.second).c_str(), ll(v)));
      }
    }
  }
  return Check{};
}

DeformProblem make_deformable_problem(const DeformableConv2dArgs& a) {
  const DeformAttributes attributes{a.kernel_size,       a.stride,   a.padding, a.dilation, a.groups,
                                    a.deformable_groups, a.modulated};
  DeformProblem p;
  p.geometry = geometry_of(*a.x, *a.weight, attributes);
  p.input = make_ncs_view5(*a.x);
  p.weight = make_ncs_view5(*a.weight);
  p.offset = make_ncs_view5(*a.offset);
  p.output = make_ncs_view5(*a.out);
  if (a.bias != nullptr) p.has_bias = true, p.bias = make_ncs_view5(*a.bias);
  if (a.deform_out != nullptr) p.want_columns = true, p.columns = make_ncs_view5(*a.deform_out);
  return p;
}

DeformProblem make_deformable_problem(const DeformableConv2dBackwardArgs& a) {
  const DeformAttributes attributes{a.kernel_size,       a.stride,   a.padding, a.dilation, a.groups,
                                    a.deformable_groups, a.modulated};
  DeformProblem p;
  p.backward = true;
  p.geometry = geometry_of(*a.input, *a.weight, attributes);
  p.input = make_ncs_view5(*a.input);
  p.weight = make_ncs_view5(*a.weight);
  p.offset = make_ncs_view5(*a.offset);
  p.columns = make_ncs_view5(*a.offset_out);
  p.grad_output = make_ncs_view5(*a.grad_output);
  p.grad_input = make_ncs_view5(*a.grad_input);
  p.grad_weight = make_ncs_view5(*a.grad_weight);
  p.grad_offset = make_ncs_view5(*a.grad_offset);
  p.grad_bias = make_ncs_view5(*a.grad_bias);
  return p;
}

}  // namespace aclnn_cpu
