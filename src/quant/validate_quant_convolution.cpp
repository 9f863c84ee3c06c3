// aclnnQuantConvolution's phase-1 checks in CANN's order (docs/quant_convolution.md, "Check order"):
// null pointers (161001); ours: every tensor well formed; dtypes, ranks and array lengths, formats,
// values, the output's shape (161002); then ours: the padded input at least the dilated kernel, sizes
// within 2^31 - 1, every tensor inside its storage. The accepted set is Atlas A2's row and the cases Ascend 950's
// example programs use.
#include <cctype>
#include <cstring>
#include <string>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/tensor_views.h"
#include "meta/meta_objects.h"
#include "quant/quant_convolution.h"

namespace aclnn_cpu {
namespace {

constexpr const char* kApi = "aclnnQuantConvolutionGetWorkspaceSize";

long long ll(Wide value) { return static_cast<long long>(value); }

Check invalid(const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, kApi, message); }

int64_t spatial_dims(const QuantConvolutionArgs& a) { return dims(*a.input) - 2; }

// (before, after) padding of spatial axis i: one value per axis, or a pair per axis.
Wide pad_before(const QuantConvolutionArgs& a, int64_t i) {
  const std::vector<int64_t>& p = a.padding->values;
  return p.size() == static_cast<size_t>(spatial_dims(a)) ? p[i] : p[2 * i];
}
Wide pad_after(const QuantConvolutionArgs& a, int64_t i) {
  const std::vector<int64_t>& p = a.padding->values;
  return p.size() == static_cast<size_t>(spatial_dims(a)) ? p[i] : p[2 * i + 1];
}

// The output shape CANN infers: (N, Cout, (in + padding - dilation*(k - 1) - 1) / stride + 1 ...), C++
// division (it truncates toward zero).
std::vector<Wide> inferred_output(const QuantConvolutionArgs& a) {
  const std::vector<int64_t>&x = a.input->view_shape, &w = a.weight->view_shape;
  std::vector<Wide> out = {x[0], w[0]};
  for (int64_t i = 0; i < spatial_dims(a); ++i) {
    const Wide numerator =
        Wide{x[2 + i]} + pad_before(a, i) + pad_after(a, i) - Wide{a.dilation->values[i]} * (w[2 + i] - 1) - 1;
    out.push_back(numerator / a.stride->values[i] + 1);
  }
  return out;
}

Check check_dtypes(const QuantConvolutionArgs& a) {
  const int32_t scale = a.scale->dtype, input = a.input->dtype, output = a.output->dtype, bias = a.bias->dtype;
  if (scale != ACL_FLOAT && scale != ACL_INT64 && scale != ACL_UINT64) {
    return invalid(format("scale dtype %s is not supported: expected FLOAT, INT64 or UINT64", dtype_name(scale)));
  }
  if (input == ACL_FLOAT8_E4M3FN || input == ACL_HIFLOAT8) {
    return invalid(
        format("input dtype %s is not supported: only INT8 is (a CPU has no %s arithmetic to compute "
               "or test it against)",
               dtype_name(input), dtype_name(input)));
  }
  if (input != ACL_INT8) return invalid(format("input dtype %s is not supported: expected INT8", dtype_name(input)));
  if (a.weight->dtype != input) {
    return invalid(format("weight dtype %s must equal input dtype %s", dtype_name(a.weight->dtype), dtype_name(input)));
  }
  if (output != ACL_FLOAT16 && output != ACL_BF16) {
    return invalid(format("output dtype %s is not supported: expected FLOAT16 or BF16", dtype_name(output)));
  }
  const bool bf16_pair = output == ACL_BF16 && (bias == ACL_FLOAT || bias == ACL_BF16);
  const bool fp16_pair = output == ACL_FLOAT16 && (bias == ACL_FLOAT || bias == ACL_FLOAT16 || bias == ACL_INT32);
  if (!bf16_pair && !fp16_pair) {
    return invalid(
        format("bias dtype %s with output dtype %s is not supported: a BF16 output takes a FLOAT or "
               "BF16 bias, a FLOAT16 output a FLOAT, FLOAT16 or INT32 one",
               dtype_name(bias), dtype_name(output)));
  }
  return Check{};
}

Check check_array_length(const char* name, const aclIntArray* array, std::initializer_list<size_t> lengths,
                         const char* expected) {
  if (array != nullptr) {
    for (size_t length : lengths) {
      if (array->values.size() == length) return Check{};
    }
  }
  if (array == nullptr) return invalid(format("%s is nullptr: expected %s values", name, expected));
  return invalid(format("%s %s has %zu values: expected %s (from the input's rank)", name,
                        to_string(array->values).c_str(), array->values.size(), expected));
}

Check check_ranks(const QuantConvolutionArgs& a) {
  const NamedTensor weight{"weight", a.weight}, output{"output", a.output};
  Check check = first_failure(
      [&] {
        return check_rank(kApi, {"scale", a.scale}, 1);
      },
      [&] {
        return check_rank(kApi, {"bias", a.bias}, 1);
      });
  if (check.failed()) return check;
  const int64_t rank = dims(*a.input);
  if (rank != 4 && rank != 5) {
    return invalid(format("input shape %s has %lld dims: expected 4 (NCHW) or 5 (NCDHW)",
                          to_string(a.input->view_shape).c_str(), ll(rank)));
  }
  check = first_failure([&] { return check_rank(kApi, weight, rank); }, [&] { return check_rank(kApi, output, rank); });
  if (check.failed()) return check;
  const size_t s = static_cast<size_t>(rank - 2);
  const std::string one = std::to_string(s), two = std::to_string(2 * s);
  const std::string either = one + " or " + two;
  return first_failure([&] { return check_array_length("stride", a.stride, {s}, one.c_str()); },
                       [&] { return check_array_length("dilation", a.dilation, {s}, one.c_str()); },
                       [&] {
                         return check_array_length("padding", a.padding, {s, 2 * s}, either.c_str());
                       });
}

Check check_formats(const QuantConvolutionArgs& a) {
  const bool three_d = dims(*a.input) == 5;
  const int32_t spatial = three_d ? ACL_FORMAT_NCDHW : ACL_FORMAT_NCHW;
  const char* name = three_d ? "NCDHW (a 5-D tensor)" : "NCHW (a 4-D tensor)";
  return first_failure(
      [&] {
        return check_format_in(kApi, {"bias", a.bias}, {ACL_FORMAT_ND}, "ND");
      },
      [&] {
        return check_format_in(kApi, {"scale", a.scale}, {ACL_FORMAT_ND}, "ND");
      },
      [&] {
        return check_format_in(kApi, {"input", a.input}, {spatial}, name);
      },
      [&] {
        return check_format_in(kApi, {"weight", a.weight}, {spatial}, name);
      },
      [&] {
        return check_format_in(kApi, {"output", a.output}, {spatial}, name);
      });
}

Check check_positive_dims(const char* name, const aclTensor& t) {
  for (int64_t size : t.view_shape) {
    if (size <= 0) {
      return invalid(format("%s shape %s: every dim must be > 0 (empty tensors are not supported)", name,
                            to_string(t.view_shape).c_str()));
    }
  }
  return Check{};
}

Check check_values_in(const char* name, const aclIntArray& array, int64_t least) {
  for (int64_t v : array.values) {
    if (v < least) {
      return invalid(format("%s %s: every value must be >= %lld", name, to_string(array.values).c_str(), ll(least)));
    }
  }
  return Check{};
}

// Ascend 950's roundMode rule for a FLOAT16 or BF16 output: nullptr, or at most 1024 letters, digits and
// underscores.
Check check_round_mode(const char* mode) {
  if (mode == nullptr) return Check{};
  const size_t length = std::strlen(mode);
  bool valid = length <= 1024;
  for (size_t i = 0; valid && i < length; ++i)
    valid = std::isalnum(static_cast<unsigned char>(mode[i])) || mode[i] == '_';
  if (valid) return Check{};
  return invalid(
      format("roundMode \"%.64s\" is not valid: expected nullptr or at most 1024 letters, digits and '_'", mode));
}

Check check_values(const QuantConvolutionArgs& a) {
  const std::vector<int64_t>&x = a.input->view_shape, &w = a.weight->view_shape;
  const int64_t out_channels = w[0];
  Check check = first_failure([&] { return check_positive_dims("input", *a.input); },
                              [&] { return check_positive_dims("weight", *a.weight); });
  if (check.failed()) return check;
  if (a.bias->view_shape[0] != out_channels) {
    return invalid(format("bias shape %s must be [%lld] (weight.shape[0], the output channels)",
                          to_string(a.bias->view_shape).c_str(), ll(out_channels)));
  }
  if (a.scale->view_shape[0] != out_channels) {
    return invalid(format("scale shape %s must be [%lld] (weight.shape[0], the output channels)",
                          to_string(a.scale->view_shape).c_str(), ll(out_channels)));
  }
  check = first_failure([&] { return check_values_in("stride", *a.stride, 1); },
                        [&] { return check_values_in("dilation", *a.dilation, 1); },
                        [&] { return check_values_in("padding", *a.padding, 0); });
  if (check.failed()) return check;
  if (a.groups <= 0) return invalid(format("groups %lld must be > 0", ll(a.groups)));
  if (Wide{w[1]} * a.groups != x[1]) {
    return invalid(
        format("weight.shape[1] %lld * groups %lld must equal input channels %lld", ll(w[1]), ll(a.groups), ll(x[1])));
  }
  if (out_channels % a.groups != 0) {
    return invalid(format("weight.shape[0] %lld (output channels) must be a multiple of groups %lld", ll(out_channels),
                          ll(a.groups)));
  }
  if (takes_950_path(a)) {
    check = check_round_mode(a.round_mode);
    if (check.failed()) return check;
    if (a.offsetx < -128 || a.offsetx > 127) {
      return invalid(format("offsetx %d must be in [-128, 127]", a.offsetx));
    }
  }
  check = check_positive_dims("output", *a.output);
  if (check.failed()) return check;
  return check_shape_is(kApi, "output", *a.output, inferred_output(a));
}

// Ours: the padded input spans the dilated kernel on every axis (CANN's truncating division may infer an
// output of 1 where it does not), and every size and parameter within 2^31 - 1, the window's length
// Cin/groups * kernel volume too (the kernels index with int64 products of these).
Check check_limits(const QuantConvolutionArgs& a) {
  const std::vector<int64_t>&x = a.input->view_shape, &w = a.weight->view_shape;
  for (int64_t i = 0; i < spatial_dims(a); ++i) {
    const Wide padded = Wide{x[2 + i]} + pad_before(a, i) + pad_after(a, i);
    const Wide span = Wide{a.dilation->values[i]} * (w[2 + i] - 1) + 1;
    if (padded < span) {
      return invalid(
          format("input spatial dim %lld: size %lld padded by %lld + %lld is shorter than the dilated "
                 "kernel's span %lld",
                 ll(i), ll(x[2 + i]), ll(pad_before(a, i)), ll(pad_after(a, i)), ll(span)));
    }
  }
  const std::pair<const char*, const std::vector<int64_t>*> lists[] = {{"stride", &a.stride->values},
                                                                       {"padding", &a.padding->values},
                                                                       {"dilation", &a.dilation->values},
                                                                       {"input shape", &x},
                                                                       {"weight shape", &w},
                                                                       {"output shape", &a.output->view_shape}};
  for (const auto& list : lists) {
    for (int64_t v : *list.second) {
      if (v > INT32_MAX) {
        return invalid(
            format("%s %s: value %lld is past 2^31 - 1, the bound on the sizes and parameters of a "
                   "problem to compute",
                   list.first, to_string(*list.second).c_str(), ll(v)));
      }
    }
  }
  Wide window = w[1];
  for (int64_t i = 0; i < spatial_dims(a); ++i) window *= w[2 + i];
  if (window > INT32_MAX) {
    return invalid(format("weight shape %s: its window of %lld products per output is past 2^31 - 1",
                          to_string(w).c_str(), ll(window)));
  }
  return Check{};
}

}  // namespace

bool takes_950_path(const QuantConvolutionArgs& a) {
  return a.scale->dtype == ACL_INT64 || a.scale->dtype == ACL_UINT64 || dims(*a.input) == 4;
}

std::vector<UsedTensor> used_tensors(const QuantConvolutionArgs& a) {
  return {{"input", a.input, false},
          {"weight", a.weight, false},
          {"bias", a.bias, false},
          {"scale", a.scale, false},
          {"output", a.output, true}};
}

Check validate_quant_convolution(const QuantConvolutionArgs& a) {
  Check check = check_not_null(kApi, {{"bias", a.bias},
                                      {"input", a.input},
                                      {"weight", a.weight},
                                      {"scale", a.scale},
                                      {"stride", a.stride},
                                      {"padding", a.padding},
                                      {"output", a.output},
                                      {"workspaceSize", a.workspace_size},
                                      {"executor", a.executor}});
  if (check.failed()) return check;
  check = check_all_well_formed(
      kApi, {{"input", a.input}, {"weight", a.weight}, {"bias", a.bias}, {"scale", a.scale}, {"output", a.output}});
  if (check.failed()) return check;
  check =
      first_failure([&] { return check_dtypes(a); }, [&] { return check_ranks(a); }, [&] { return check_formats(a); },
                    [&] { return check_values(a); }, [&] { return check_limits(a); });
  if (check.failed()) return check;
  return check_inside_storage(kApi, used_tensors(a));
}

QuantProblem make_quant_problem(const QuantConvolutionArgs& a) {
  QuantProblem p;
  p.input = make_ncs_view5(*a.input);
  p.weight = make_ncs_view5(*a.weight);
  p.output = make_ncs_view5(*a.output);
  p.scale = make_ncs_view5(*a.scale);
  p.bias = make_ncs_view5(*a.bias);
  ConvGeometry& g = p.geometry;
  g.batch = p.input.shape[0];
  g.groups = a.groups;
  g.src_channels_per_group = p.weight.shape[1];
  g.dst_channels_per_group = p.weight.shape[0] / a.groups;
  const int64_t s = spatial_dims(a), lead = 3 - s;  // a 2-D problem's leading unit axis
  for (int64_t i = 0; i < s; ++i) {
    g.src_size[lead + i] = p.input.shape[2 + lead + i];
    g.dst_size[lead + i] = p.output.shape[2 + lead + i];
    g.kernel[lead + i] = p.weight.shape[2 + lead + i];
    g.stride[lead + i] = a.stride->values[i];
    g.pad[lead + i] = static_cast<int64_t>(pad_before(a, i));
    g.dilation[lead + i] = a.dilation->values[i];
  }
  p.pad_value = takes_950_path(a) ? static_cast<int8_t>(a.offsetx) : int8_t{0};
  return p;
}

}  // namespace aclnn_cpu
