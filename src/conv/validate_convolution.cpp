// Parameter checks of aclnnConvolutionGetWorkspaceSize in CANN's order (F0-F7 of
// docs/convolution_forward.md), with the checks our kernels need marked "ours".
// Nothing here allocates or touches tensor data.
#include <algorithm>
#include <cstdint>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/convolution_forward.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

constexpr const char* kApi = "aclnnConvolutionGetWorkspaceSize";

Check invalid(const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, kApi, message); }

const std::vector<int64_t>& values(const aclIntArray* array) { return array->values; }

long long ll(int64_t value) { return static_cast<long long>(value); }

int64_t spatial_dims(const ConvolutionArgs& a) { return dims(*a.input) - 2; }

// A tensor's dims by position, as the problem reads them (src/conv/forward_problem.cpp): N first, then
// C and the spatial dims, or (a 5-D NDHWC tensor) the spatial dims and C last.
bool channels_last(const aclTensor& tensor) { return tensor.format == ACL_FORMAT_NDHWC && dims(tensor) == 5; }
int64_t channels(const aclTensor& tensor) { return dim_size(tensor, channels_last(tensor) ? 4 : 1); }
int64_t spatial(const aclTensor& tensor, int64_t i) { return dim_size(tensor, (channels_last(tensor) ? 1 : 2) + i); }

// Leading and trailing padding of spatial dim i: 2-D [top, bottom, left, right], 1-D [left, right],
// else one symmetric value per dim.
void padding_of(const ConvolutionArgs& a, int64_t i, int64_t* lo, int64_t* hi) {
  const std::vector<int64_t>& p = values(a.padding);
  if (static_cast<int64_t>(p.size()) == 2 * spatial_dims(a)) {
    *lo = p[static_cast<size_t>(2 * i)];
    *hi = p[static_cast<size_t>(2 * i + 1)];
  } else {
    *lo = *hi = p[static_cast<size_t>(i)];
  }
}

// The output shape CANN infers (F7): forward floor((in + lo + hi - dilated kernel) / stride) + 1,
// transposed (in - 1) * stride - lo - hi + dilated kernel + outputPadding. Entries are 128-bit.
std::vector<Wide> inferred_output(const ConvolutionArgs& a) {
  const bool last = channels_last(*a.input);
  const Wide out_channels = a.transposed ? Wide{channels(*a.weight)} * a.groups : dim_size(*a.weight, 0);
  std::vector<Wide> shape = {dim_size(*a.input, 0)};
  if (!last) shape.push_back(out_channels);
  for (int64_t i = 0; i < spatial_dims(a); ++i) {
    int64_t lo = 0, hi = 0;
    padding_of(a, i, &lo, &hi);
    const int64_t in = spatial(*a.input, i), k = spatial(*a.weight, i);
    const int64_t s = values(a.stride)[static_cast<size_t>(i)], d = values(a.dilation)[static_cast<size_t>(i)];
    if (a.transposed) {
      shape.push_back((Wide{in} - 1) * s - lo - hi + dilated_span(k, d) +
                      values(a.output_padding)[static_cast<size_t>(i)]);
    } else {
      // (C++ division, truncating, as CANN's: only an empty input has a negative numerator here)
      shape.push_back((Wide{in} + lo + hi - dilated_span(k, d)) / s + 1);
    }
  }
  if (last) shape.push_back(out_channels);
  return shape;
}

std::string wide_text(Wide value) {
  if (value < INT64_MIN || value > INT64_MAX) return "out of range";
  return std::to_string(static_cast<long long>(value));
}

// F2: ranks, bias, parameter lengths.
Check check_dims(const ConvolutionArgs& a) {
  const struct {
    const char* name;
    const aclTensor* tensor;
  } tensors[] = {{"input", a.input}, {"weight", a.weight}, {"output", a.output}};
  for (const auto& t : tensors) {
    if (dims(*t.tensor) < 3 || dims(*t.tensor) > 5) {
      return invalid(
          format("%s has %lld dims: expected 3 (conv1d), 4 (conv2d) or 5 (conv3d)", t.name, ll(dims(*t.tensor))));
    }
  }
  for (const auto& t : {tensors[1], tensors[2]}) {
    if (dims(*t.tensor) != dims(*a.input)) {
      return invalid(format("%s has %lld dims but input has %lld: they must match", t.name, ll(dims(*t.tensor)),
                            ll(dims(*a.input))));
    }
  }
  if (a.bias != nullptr) {
    const Wide expected = a.transposed ? Wide{channels(*a.weight)} * a.groups : dim_size(*a.weight, 0);
    if (dims(*a.bias) != 1 || dim_size(*a.bias, 0) != expected) {
      return invalid(format("bias shape %s: expected 1-D with %s elements (%s)", to_string(a.bias->view_shape).c_str(),
                            wide_text(expected).c_str(),
                            a.transposed ? "weight.shape[1] * groups, the output channels" : "weight.shape[0]"));
    }
  }
  const size_t p = static_cast<size_t>(spatial_dims(a));
  if (values(a.stride).size() != p || values(a.dilation).size() != p) {
    const bool stride = values(a.stride).size() != p;
    return invalid(format("%s %s has %zu values: expected %zu (one per spatial dim)", stride ? "stride" : "dilation",
                          to_string(values(stride ? a.stride : a.dilation)).c_str(),
                          values(stride ? a.stride : a.dilation).size(), p));
  }
  // padding: 1-D [p] or [left, right] and 2-D [ph, pw] or [top, bottom, left, right] (a transposed
  // 1-D convolution takes one value), 3-D one per dim.
  const bool pairs = (p == 1 && !a.transposed) || p == 2;
  const size_t length = values(a.padding).size();
  if (length != p && !(pairs && length == 2 * p)) {
    return invalid(format("padding %s has %zu values: expected %zu%s", to_string(values(a.padding)).c_str(), length, p,
                          pairs ? (p == 1 ? " or 2 ([left, right])" : " or 4 ([top, bottom, left, right])") : ""));
  }
  if (a.transposed && values(a.output_padding).size() != p) {
    return invalid(format("outputPadding %s has %zu values: expected %zu (one per spatial dim)",
                          to_string(values(a.output_padding)).c_str(), values(a.output_padding).size(), p));
  }
  return Check{};
}

// F3: formats (NCL, NCHW, NCDHW or NDHWC by rank; input and output alike; bias ND or N-C-spatial).
Check check_formats(const ConvolutionArgs& a) {
  const int64_t rank = dims(*a.input);
  auto bad = [&](const char* name, const aclTensor& t, const char* expected) {
    return invalid(format("%s format %s (%d) is not supported for a %lld-D tensor: expected %s", name,
                          format_name(t.format), t.format, ll(rank), expected));
  };
  if (rank == 3) {
    // (CANN requires NCL of input and of weight or output, so never looks at the weight's format, whose
    // letters it then reads the channels by; ours: the weight NCL or ND, read by position)
    if (a.input->format != ACL_FORMAT_NCL) return bad("input", *a.input, "NCL");
    if (a.weight->format != ACL_FORMAT_NCL && a.weight->format != ACL_FORMAT_ND)
      return bad("weight", *a.weight, "NCL or ND");
  } else if (rank == 4) {
    if (!a.transposed && a.weight->format == ACL_FORMAT_FRACTAL_Z)
      return invalid(
          "weight format FRACTAL_Z (the device's blocked weight layout) is not supported here: expected NCHW");
    // (a direct convolution's weight is checked first)
    const std::pair<const char*, const aclTensor*> direct[] = {
        {"weight", a.weight}, {"input", a.input}, {"output", a.output}};
    const std::pair<const char*, const aclTensor*> transposed[] = {
        {"input", a.input}, {"weight", a.weight}, {"output", a.output}};
    for (const auto& t : a.transposed ? transposed : direct) {
      if (t.second->format != ACL_FORMAT_NCHW) return bad(t.first, *t.second, "NCHW");
    }
  } else {
    for (const auto& t :
         {std::make_pair("input", a.input), std::make_pair("weight", a.weight), std::make_pair("output", a.output)}) {
      if (t.second->format != ACL_FORMAT_NCDHW && t.second->format != ACL_FORMAT_NDHWC)
        return bad(t.first, *t.second, "NCDHW or NDHWC");
    }
  }
  if (a.input->format != a.output->format) {
    return invalid(format("input format %s must equal output format %s", format_name(a.input->format),
                          format_name(a.output->format)));
  }
  if (a.bias != nullptr) {
    const int32_t f = a.bias->format;
    if (f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL && f != ACL_FORMAT_NCHW && f != ACL_FORMAT_NCDHW) {
      return invalid(
          format("bias format %s (%d) is not supported: expected ND, NCL, NCHW or NCDHW", format_name(f), f));
    }
  }
  return Check{};
}

// F4-F5: values: kernel sizes, stride, dilation, padding, the padded input, groups and channels,
// bias, the transposed limits.
Check check_values(const ConvolutionArgs& a) {
  for (int64_t i = 0; i < spatial_dims(a); ++i) {
    if (spatial(*a.weight, i) <= 0) {
      return invalid(format("weight shape %s: spatial dim %lld is %lld, expected > 0",
                            to_string(a.weight->view_shape).c_str(), ll(i), ll(spatial(*a.weight, i))));
    }
  }
  const struct {
    const char* name;
    const aclIntArray* array;
    int64_t minimum;
  } ranges[] = {{"stride", a.stride, 1}, {"dilation", a.dilation, 1}, {"padding", a.padding, 0}};  // padding: ours
  for (const auto& r : ranges) {
    for (int64_t v : values(r.array)) {
      if (v < r.minimum) {
        return invalid(
            format("%s %s: every element must be >= %lld", r.name, to_string(values(r.array)).c_str(), ll(r.minimum)));
      }
    }
  }
  if (!a.transposed && !is_empty(*a.input)) {
    for (int64_t i = 0; i < spatial_dims(a); ++i) {
      int64_t lo = 0, hi = 0;
      padding_of(a, i, &lo, &hi);
      const int64_t in = spatial(*a.input, i), k = spatial(*a.weight, i);
      if (Wide{in} + lo + hi - dilated_span(k, values(a.dilation)[static_cast<size_t>(i)]) < 0) {
        return invalid(
            format("spatial dim %lld: input size %lld padded by %lld + %lld is smaller than the kernel %lld "
                   "dilated by %lld",
                   ll(i), ll(in), ll(lo), ll(hi), ll(k), ll(values(a.dilation)[static_cast<size_t>(i)])));
      }
    }
  }
  if (a.groups <= 0) return invalid(format("groups %lld must be > 0", ll(a.groups)));
  const int64_t in_channels = channels(*a.input), w_n = dim_size(*a.weight, 0), w_c = channels(*a.weight);
  if (a.transposed) {
    if (w_n != in_channels) {
      return invalid(
          format("weight.shape[0] = %lld must equal the input channels %lld (transposed)", ll(w_n), ll(in_channels)));
    }
    for (size_t i = 0; i < values(a.output_padding).size(); ++i) {
      const int64_t op = values(a.output_padding)[i], s = values(a.stride)[i], d = values(a.dilation)[i];
      if (op >= s && op >= d) {
        return invalid(format("outputPadding %s: element %zu (%lld) must be smaller than stride %lld or dilation %lld",
                              to_string(values(a.output_padding)).c_str(), i, ll(op), ll(s), ll(d)));
      }
      if (op < 0) {
        return invalid(format("outputPadding %s: element %zu (%lld) must be >= 0",
                              to_string(values(a.output_padding)).c_str(), i, ll(op)));
      }
    }
  } else if (Wide{w_c} * a.groups != in_channels) {
    return invalid(format("the input channels %lld must equal weight.shape[1] (%lld) * groups (%lld)", ll(in_channels),
                          ll(w_c), ll(a.groups)));
  }
  if (w_n % a.groups != 0) {
    return invalid(format("weight.shape[0] = %lld must be a multiple of groups = %lld", ll(w_n), ll(a.groups)));
  }
  if (a.transposed && in_channels == 0) return invalid("the input channels must not be 0 (transposed)");
  // CANN's limit on a transposed convolution's implied padding, (kernel - 1) * dilation - padding <= 255
  // along H and W (and >= 0 for 3-D). Its 2-D and 1-D checks read padding[1] as W's, which a 4-value
  // padding holds as bottom; so do these.
  if (a.transposed && !is_empty(*a.input) && !is_empty(*a.weight) && !is_empty(*a.output)) {
    const std::vector<int64_t>&p = values(a.padding), &d = values(a.dilation);
    const int64_t rank = dims(*a.input);
    const size_t h = rank == 5 ? 1 : 0, w = rank == 5 ? 2 : (p.size() == 1 ? 0 : 1);
    const size_t dw = rank == 5 ? 2 : (d.size() == 1 ? 0 : 1);
    auto implied = [&](int64_t k, int64_t dil, int64_t pad) { return (Wide{k} - 1) * dil - pad; };
    const Wide along_w = implied(spatial(*a.weight, spatial_dims(a) - 1), d[dw], p[w]);
    const Wide along_h = rank == 3 ? 0 : implied(spatial(*a.weight, spatial_dims(a) - 2), d[h], p[h]);
    const bool ok = rank == 5 ? (along_w >= 0 && along_w <= 255 && along_h >= 0 && along_h <= 255)
                              : (along_w <= 255 && along_h <= 255);
    if (!ok) {
      return invalid(
          format("a transposed convolution's (kernel - 1) * dilation - padding along H and W is %s and %s: "
                 "expected %s 255",
                 wide_text(along_h).c_str(), wide_text(along_w).c_str(), rank == 5 ? "within 0 and" : "<="));
    }
  }
  return Check{};
}

// F6: the output shape, exactly; empty input or weight only with an empty output.
Check check_output_shape(const ConvolutionArgs& a) {
  const std::vector<Wide> expected = inferred_output(a);
  std::string text = "[";
  for (size_t i = 0; i < expected.size(); ++i) text += (i ? ", " : "") + wide_text(expected[i]);
  text += "]";
  for (size_t i = 0; i < expected.size(); ++i) {
    if (Wide{dim_size(*a.output, static_cast<int64_t>(i))} != expected[i]) {
      return invalid(
          format("output shape %s must be %s (dim %zu)", to_string(a.output->view_shape).c_str(), text.c_str(), i));
    }
  }
  if ((is_empty(*a.input) || is_empty(*a.weight)) && !is_empty(*a.output)) {
    return invalid(format("output shape %s must be empty when input %s or weight %s is",
                          to_string(a.output->view_shape).c_str(), to_string(a.input->view_shape).c_str(),
                          to_string(a.weight->view_shape).c_str()));
  }
  return Check{};
}

// Ours (a problem to compute): spatial sizes and parameters at most 2^31 - 1 (as for the backward).
Check check_computable_sizes(const ConvolutionArgs& a) {
  constexpr int64_t kLargest = INT32_MAX;
  const struct {
    const char* name;
    const std::vector<int64_t>& values;
  } lists[] = {{"input shape", a.input->view_shape},   {"weight shape", a.weight->view_shape},
               {"output shape", a.output->view_shape}, {"stride", values(a.stride)},
               {"padding", values(a.padding)},         {"dilation", values(a.dilation)}};
  for (const auto& list : lists) {
    for (int64_t v : list.values) {
      if (v > kLargest) {
        return invalid(
            format("%s %s: value %lld exceeds 2^31 - 1, the bound on the sizes, strides, paddings and "
                   "dilations of a problem to compute",
                   list.name, to_string(list.values).c_str(), ll(v)));
      }
    }
  }
  if (a.groups > kLargest) return invalid(format("groups %lld exceeds 2^31 - 1", ll(a.groups)));
  return Check{};
}

}  // namespace

std::vector<UsedTensor> used_tensors(const ConvolutionArgs& a) {
  std::vector<UsedTensor> used = {{"input", a.input, false}, {"weight", a.weight, false}};
  if (a.bias != nullptr) used.push_back({"bias", a.bias, false});
  used.push_back({"output", a.output, true});
  return used;
}

Check validate_convolution(const ConvolutionArgs& a) {
  // F0: mandatory arguments, in CANN's order (bias may be nullptr; outputPadding only when transposed).
  Check check =
      check_not_null(kApi, {{"input", a.input},
                            {"weight", a.weight},
                            {"stride", a.stride},
                            {"padding", a.padding},
                            {"dilation", a.dilation},
                            {"output", a.output},
                            {"workspaceSize", a.workspace_size},
                            {"executor", a.executor},
                            {"outputPadding", a.transposed ? static_cast<const void*>(a.output_padding) : &a}});
  if (check.failed()) return check;
  // Ours: tensors must be well formed before their shapes are read.
  const struct {
    const char* name;
    const aclTensor* tensor;
  } all[] = {{"bias", a.bias}, {"input", a.input}, {"weight", a.weight}, {"output", a.output}};
  for (const auto& t : all) {
    if (t.tensor == nullptr) continue;
    check = check_well_formed(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // F1: dtypes: bias first, then input, weight, output (each FLOAT, FLOAT16 or BF16; mixed allowed).
  for (const auto& t : all) {
    if (t.tensor == nullptr) continue;
    check = check_float_dtype(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  check = check_dims(a);                               // F2
  if (!check.failed()) check = check_formats(a);       // F3
  if (!check.failed()) check = check_values(a);        // F4, F5
  if (!check.failed()) check = check_output_shape(a);  // F6
  if (check.failed()) return check;
  check = check_cube_math_type(kApi, a.cube_math_type, 4);  // F7 (4 USE_FP32_ADD computes as KEEP_DTYPE)
  if (!check.failed()) check = check_computable_sizes(a);   // ours
  if (!check.failed()) check = check_inside_storage(kApi, used_tensors(a));  // ours, last
  return check;
}

}  // namespace aclnn_cpu
