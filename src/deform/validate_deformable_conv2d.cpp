// aclnnDeformableConv2d's and aclnnDeformableConv2dBackward's phase-1 checks, in CANN's order
// (docs/deformable_conv2d.md, "Check order"): null pointers (161001), dtypes, formats, attributes,
// ranks, shapes (161002); then ours: sizes within 2^31 - 1 and every tensor inside its storage.
#include <string>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "deform/deformable_conv2d.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

Check invalid(const char* api, const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, api, message); }

Check check_same_dtype(const char* api, const NamedTensor& t, const NamedTensor& as) {
  if (t.tensor == nullptr || t.tensor->dtype == as.tensor->dtype) return Check{};
  return invalid(api, format("%s dtype %s must equal %s dtype %s", t.name, dtype_name(t.tensor->dtype), as.name,
                             dtype_name(as.tensor->dtype)));
}

Check check_same_format(const char* api, const NamedTensor& t, const NamedTensor& as) {
  if (t.tensor == nullptr || t.tensor->format == as.tensor->format) return Check{};
  return invalid(api, format("%s format %s must equal %s format %s", t.name, format_name(t.tensor->format), as.name,
                             format_name(as.tensor->format)));
}

}  // namespace

std::vector<UsedTensor> used_tensors(const DeformableConv2dArgs& a) {
  std::vector<UsedTensor> used = {{"x", a.x, false}, {"weight", a.weight, false}, {"offset", a.offset, false}};
  if (a.bias != nullptr) used.push_back({"biasOptional", a.bias, false});
  used.push_back({"out", a.out, true});
  if (a.deform_out != nullptr) used.push_back({"deformOutOptional", a.deform_out, true});
  return used;
}

std::vector<UsedTensor> used_tensors(const DeformableConv2dBackwardArgs& a) {
  return {{"input", a.input, false},           {"gradOutput", a.grad_output, false}, {"offsetOut", a.offset_out, false},
          {"weight", a.weight, false},         {"offset", a.offset, false},          {"gradInput", a.grad_input, true},
          {"gradWeight", a.grad_weight, true}, {"gradOffset", a.grad_offset, true},  {"gradBias", a.grad_bias, true}};
}

Check validate_deformable_conv2d(const DeformableConv2dArgs& a) {
  constexpr const char* kApi = "aclnnDeformableConv2dGetWorkspaceSize";
  Check check = check_not_null(kApi, {{"x", a.x},
                                      {"offset", a.offset},
                                      {"weight", a.weight},
                                      {"out", a.out},
                                      {"kernelSize", a.kernel_size},
                                      {"stride", a.stride},
                                      {"padding", a.padding},
                                      {"dilation", a.dilation},
                                      {"workspaceSize", a.workspace_size},
                                      {"executor", a.executor}});
  if (check.failed()) return check;
  const NamedTensor x{"x", a.x}, weight{"weight", a.weight}, offset{"offset", a.offset}, bias{"biasOptional", a.bias},
      out{"out", a.out}, deform_out{"deformOutOptional", a.deform_out};
  check = check_all_well_formed(kApi, {x, weight, offset, bias, out, deform_out});
  if (check.failed()) return check;
  const DeformAttributes attributes{a.kernel_size,       a.stride,   a.padding, a.dilation, a.groups,
                                    a.deformable_groups, a.modulated};
  check = first_failure(
      // dtypes: x's, then bias, deformOut, offset, weight and out as x
      [&] { return check_float_dtype(kApi, "x", *a.x); }, [&] { return check_same_dtype(kApi, bias, x); },
      [&] { return check_same_dtype(kApi, deform_out, x); }, [&] { return check_same_dtype(kApi, offset, x); },
      [&] { return check_same_dtype(kApi, weight, x); }, [&] { return check_same_dtype(kApi, out, x); },
      // formats: x NCHW or ND, offset and weight as x, bias ND, out and deformOut as x
      [&] {
        return check_format_in(kApi, x, {ACL_FORMAT_NCHW, ACL_FORMAT_ND}, "NCHW or ND");
      },
      [&] { return check_same_format(kApi, offset, x); }, [&] { return check_same_format(kApi, weight, x); },
      [&] { return check_format_in(kApi, bias, {ACL_FORMAT_ND}, "ND"); },
      [&] { return check_same_format(kApi, out, x); }, [&] { return check_same_format(kApi, deform_out, x); },
      [&] { return check_deform_attributes(kApi, attributes, false); },
      // ranks
      [&] { return check_rank(kApi, x, 4); }, [&] { return check_rank(kApi, weight, 4); },
      [&] { return check_rank(kApi, offset, 4); }, [&] { return check_rank(kApi, bias, 1); },
      [&] { return check_rank(kApi, out, 4); }, [&] { return check_rank(kApi, deform_out, 4); });
  if (check.failed()) return check;
  const DeformShapes s = deform_shapes(*a.x, *a.weight, attributes);
  const std::vector<int64_t>& k = a.kernel_size->values;
  const Wide points = Wide{k[0]} * k[1];
  check = first_failure(
      [&] { return check_deform_divisible(kApi, "x", s, attributes); },
      [&] {
        return check_shape_is(kApi, "weight", *a.weight, {s.out_channels, s.in_channels / a.groups, k[0], k[1]});
      },
      [&] {
        return check_shape_is(kApi, "offset", *a.offset,
                              {s.batch, Wide{3} * a.deformable_groups * points, s.out_h, s.out_w});
      },
      [&] { return a.bias == nullptr ? Check{} : check_shape_is(kApi, "biasOptional", *a.bias, {s.out_channels}); },
      [&] {
        return check_shape_is(kApi, "out", *a.out, {s.batch, s.out_channels, s.out_h, s.out_w});
      },
      [&] {
        return a.deform_out == nullptr ? Check{}
                                       : check_shape_is(kApi, "deformOutOptional", *a.deform_out,
                                                        {s.batch, s.in_channels, s.out_h * k[0], s.out_w * k[1]});
      },
      [&] {
        return check_deform_limits(kApi, s, attributes,
                                   {{"x", a.x}, {"weight", a.weight}, {"offset", a.offset}, {"out", a.out}});
      });
  if (check.failed()) return check;
  return check_inside_storage(kApi, used_tensors(a));
}

Check validate_deformable_conv2d_backward(const DeformableConv2dBackwardArgs& a) {
  constexpr const char* kApi = "aclnnDeformableConv2dBackwardGetWorkspaceSize";
  Check check = check_not_null(kApi, {{"gradOutput", a.grad_output},
                                      {"input", a.input},
                                      {"weight", a.weight},
                                      {"offsetOut", a.offset_out},
                                      {"offset", a.offset},
                                      {"gradInput", a.grad_input},
                                      {"gradWeight", a.grad_weight},
                                      {"gradBias", a.grad_bias},
                                      {"gradOffset", a.grad_offset},
                                      {"kernelSize", a.kernel_size},
                                      {"stride", a.stride},
                                      {"padding", a.padding},
                                      {"dilation", a.dilation},
                                      {"workspaceSize", a.workspace_size},
                                      {"executor", a.executor}});
  if (check.failed()) return check;
  const NamedTensor input{"input", a.input}, grad_output{"gradOutput", a.grad_output},
      offset_out{"offsetOut", a.offset_out}, weight{"weight", a.weight}, offset{"offset", a.offset},
      grad_input{"gradInput", a.grad_input}, grad_weight{"gradWeight", a.grad_weight},
      grad_offset{"gradOffset", a.grad_offset}, grad_bias{"gradBias", a.grad_bias};
  check = check_all_well_formed(
      kApi, {input, grad_output, offset_out, weight, offset, grad_input, grad_weight, grad_offset, grad_bias});
  if (check.failed()) return check;
  const DeformAttributes attributes{a.kernel_size,       a.stride,   a.padding, a.dilation, a.groups,
                                    a.deformable_groups, a.modulated};
  check = first_failure(
      // dtypes: input's; gradInput, gradWeight, gradOffset, weight, offsetOut, offset, gradOutput as input;
      // gradBias as gradOutput
      [&] { return check_float_dtype(kApi, "input", *a.input); },
      [&] { return check_same_dtype(kApi, grad_input, input); },
      [&] { return check_same_dtype(kApi, grad_weight, input); },
      [&] { return check_same_dtype(kApi, grad_offset, input); }, [&] { return check_same_dtype(kApi, weight, input); },
      [&] { return check_same_dtype(kApi, offset_out, input); }, [&] { return check_same_dtype(kApi, offset, input); },
      [&] { return check_same_dtype(kApi, grad_output, input); },
      [&] { return check_same_dtype(kApi, grad_bias, grad_output); },
      // formats: gradOutput and input NCHW; weight, offsetOut, offset, gradInput as input; gradWeight as
      // weight; gradOffset as offsetOut; gradBias ND
      [&] { return check_format_in(kApi, grad_output, {ACL_FORMAT_NCHW}, "NCHW"); },
      [&] { return check_format_in(kApi, input, {ACL_FORMAT_NCHW}, "NCHW"); },
      [&] { return check_same_format(kApi, weight, input); },
      [&] { return check_same_format(kApi, offset_out, input); },
      [&] { return check_same_format(kApi, offset, input); },
      [&] { return check_same_format(kApi, grad_input, input); },
      [&] { return check_same_format(kApi, grad_weight, weight); },
      [&] { return check_same_format(kApi, grad_offset, offset_out); },
      [&] { return check_format_in(kApi, grad_bias, {ACL_FORMAT_ND}, "ND"); },
      [&] { return check_deform_attributes(kApi, attributes, true); },
      // ranks
      [&] { return check_rank(kApi, grad_output, 4); }, [&] { return check_rank(kApi, input, 4); },
      [&] { return check_rank(kApi, weight, 4); }, [&] { return check_rank(kApi, offset_out, 4); },
      [&] { return check_rank(kApi, offset, 4); }, [&] { return check_rank(kApi, grad_input, 4); },
      [&] { return check_rank(kApi, grad_weight, 4); }, [&] { return check_rank(kApi, grad_offset, 4); },
      [&] { return check_rank(kApi, grad_bias, 1); });
  if (check.failed()) return check;
  const DeformShapes s = deform_shapes(*a.input, *a.weight, attributes);
  const std::vector<int64_t>& k = a.kernel_size->values;
  const Wide points = Wide{k[0]} * k[1];
  const auto shape_of = [](const aclTensor& t) { return std::vector<Wide>(t.view_shape.begin(), t.view_shape.end()); };
  check = first_failure(
      [&] { return check_deform_divisible(kApi, "input", s, attributes); },
      [&] {
        return check_shape_is(kApi, "weight", *a.weight, {s.out_channels, s.in_channels / a.groups, k[0], k[1]});
      },
      [&] {
        return check_shape_is(kApi, "offset", *a.offset,
                              {s.batch, Wide{3} * a.deformable_groups * points, s.out_h, s.out_w});
      },
      [&] {
        return check_shape_is(kApi, "gradOutput", *a.grad_output, {s.batch, s.out_channels, s.out_h, s.out_w});
      },
      [&] {
        return check_shape_is(kApi, "offsetOut", *a.offset_out,
                              {s.batch, s.in_channels, s.out_h * k[0], s.out_w * k[1]});
      },
      [&] { return check_shape_is(kApi, "gradInput", *a.grad_input, shape_of(*a.input)); },
      [&] { return check_shape_is(kApi, "gradWeight", *a.grad_weight, shape_of(*a.weight)); },
      [&] { return check_shape_is(kApi, "gradOffset", *a.grad_offset, shape_of(*a.offset)); },
      [&] { return check_shape_is(kApi, "gradBias", *a.grad_bias, {s.out_channels}); },
      [&] {
        return check_deform_limits(
            kApi, s, attributes,
            {{"input", a.input}, {"weight", a.weight}, {"offset", a.offset}, {"gradOutput", a.grad_output}});
      });
  if (check.failed()) return check;
  return check_inside_storage(kApi, used_tensors(a));
}

}  // namespace aclnn_cpu
