// Parameter checks of aclnnConvolutionBackwardGetWorkspaceSize, in CANN's order (R0-R17), then
// the checks our kernels need where CANN leaves a mismatch to the device (marked "ours").
// Nothing here allocates or touches tensor data.
#include <algorithm>
#include <cstdint>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/convolution_backward.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

constexpr const char* kApi = "aclnnConvolutionBackwardGetWorkspaceSize";
constexpr aclnnStatus kNull = ACLNN_ERR_PARAM_NULLPTR;
constexpr aclnnStatus kInvalid = ACLNN_ERR_PARAM_INVALID;

Check invalid(const std::string& message) { return fail_check(kInvalid, kApi, message); }

const std::vector<int64_t>& values(const aclIntArray* array) { return array->values; }

int64_t channels(const aclTensor& tensor) { return dim_size(tensor, 1); }

// R5: each tensor's format judged by its own dim count.
Check check_format(const char* name, const aclTensor& tensor) {
  const int64_t n = dims(tensor);
  const int32_t f = tensor.format;
  const bool ok = (n == 3 && (f == ACL_FORMAT_ND || f == ACL_FORMAT_NCL)) || (n == 4 && f == ACL_FORMAT_NCHW) ||
                  (n == 5 && f == ACL_FORMAT_NCDHW);
  if (ok) return Check{};
  return invalid(
      format("%s format %s (%d) with %lld dims is not supported: 3-D tensors take ND or NCL, 4-D NCHW, "
             "5-D NCDHW",
             name, format_name(f), f, static_cast<long long>(n)));
}

Check check_all_at_least(const char* name, const aclIntArray* array, int64_t minimum) {
  for (int64_t value : values(array)) {
    if (value < minimum) {
      return invalid(format("%s %s: every element must be >= %lld", name, to_string(values(array)).c_str(),
                            static_cast<long long>(minimum)));
    }
  }
  return Check{};
}

// R12 / R17(c): stride and dilation have P values; padding and outputPadding P, or 4 for 2-D.
Check check_param_lengths(const ConvBackwardArgs& a) {
  const size_t p = static_cast<size_t>(dims(*a.input) - 2);
  const bool four_ok = dims(*a.input) == 4;
  const struct {
    const char* name;
    const aclIntArray* array;
    bool allows_four;
  } params[] = {{"stride", a.stride, false},
                {"dilation", a.dilation, false},
                {"padding", a.padding, four_ok},
                {"outputPadding", a.output_padding, four_ok}};
  for (const auto& param : params) {
    const size_t length = values(param.array).size();
    if (length != p && !(param.allows_four && length == 4)) {
      return invalid(format("%s %s has %zu values: expected %zu (one per spatial dim of the %lld-D input)%s",
                            param.name, to_string(values(param.array)).c_str(), length, p,
                            static_cast<long long>(dims(*a.input)), param.allows_four ? " or 4" : ""));
    }
  }
  return Check{};
}

// Leading and trailing padding of spatial dim i (a 4-value 2-D padding is [top, bottom, left, right]).
void padding_of(const ConvBackwardArgs& a, size_t i, int64_t* lo, int64_t* hi) {
  const std::vector<int64_t>& p = values(a.padding);
  if (p.size() == 4) {
    *lo = p[2 * i];
    *hi = p[2 * i + 1];
  } else {
    *lo = *hi = p[i];
  }
}

// The outputs selected by `which` are shaped like what they differentiate (gradBias: C(gradOutput)).
Check check_output_shapes(const ConvBackwardArgs& a, const bool (&which)[3]) {
  if (which[0] && a.grad_input->view_shape != a.input->view_shape) {
    return invalid(format("gradInput shape %s must equal input shape %s", to_string(a.grad_input->view_shape).c_str(),
                          to_string(a.input->view_shape).c_str()));
  }
  if (which[1] && a.grad_weight->view_shape != a.weight->view_shape) {
    return invalid(format("gradWeight shape %s must equal weight shape %s",
                          to_string(a.grad_weight->view_shape).c_str(), to_string(a.weight->view_shape).c_str()));
  }
  if (which[2] && (dims(*a.grad_bias) != 1 || dim_size(*a.grad_bias, 0) != channels(*a.grad_output))) {
    return invalid(format("gradBias shape %s must be 1-D of length C(gradOutput) = %lld",
                          to_string(a.grad_bias->view_shape).c_str(),
                          static_cast<long long>(channels(*a.grad_output))));
  }
  return Check{};
}

// R12: ranks, non-empty gradOutput/weight, output shapes, parameter lengths.
Check check_shapes(const ConvBackwardArgs& a) {
  if (dims(*a.grad_output) != dims(*a.input)) {
    return invalid(format("gradOutput has %lld dims but input has %lld: they must match",
                          static_cast<long long>(dims(*a.grad_output)), static_cast<long long>(dims(*a.input))));
  }
  if (dims(*a.input) != dims(*a.weight)) {
    return invalid(format("weight has %lld dims but input has %lld: they must match",
                          static_cast<long long>(dims(*a.weight)), static_cast<long long>(dims(*a.input))));
  }
  if (is_empty(*a.grad_output)) {
    return invalid(format("gradOutput shape %s is empty while input and weight are not",
                          to_string(a.grad_output->view_shape).c_str()));
  }
  Check outputs = check_output_shapes(a, {a.grad_input != nullptr, a.grad_weight != nullptr, a.grad_bias != nullptr});
  return outputs.failed() ? outputs : check_param_lengths(a);
}

// R13 plus ours: channel counts agree with weight and groups.
Check check_channels(const ConvBackwardArgs& a) {
  // conv-input / conv-output: the forward convolution's input and output channels.
  const aclTensor& conv_in = a.transposed ? *a.grad_output : *a.input;
  const aclTensor& conv_out = a.transposed ? *a.input : *a.grad_output;
  const char* conv_in_name = a.transposed ? "gradOutput" : "input";
  const char* conv_out_name = a.transposed ? "input" : "gradOutput";
  const int64_t w0 = dim_size(*a.weight, 0), w1 = dim_size(*a.weight, 1), g = a.groups;
  if (channels(conv_out) != w0) {
    return invalid(format("C(%s) = %lld must equal weight.shape[0] = %lld", conv_out_name,
                          static_cast<long long>(channels(conv_out)), static_cast<long long>(w0)));
  }
  if (w1 == 0 || channels(conv_in) % w1 != 0 || channels(conv_in) / w1 != g) {
    return invalid(format("C(%s) = %lld must equal weight.shape[1] (%lld) * groups (%lld)", conv_in_name,
                          static_cast<long long>(channels(conv_in)), static_cast<long long>(w1),
                          static_cast<long long>(g)));
  }
  if (channels(conv_in) == g && (channels(conv_out) < g || channels(conv_out) % g != 0)) {
    return invalid(format("depthwise convolution (groups = C(%s) = %lld) needs C(%s) = %lld to be a multiple of groups",
                          conv_in_name, static_cast<long long>(g), conv_out_name,
                          static_cast<long long>(channels(conv_out))));
  }
  if (w0 % g != 0) {  // ours: CANN leaves this to the device kernel
    return invalid(format("weight.shape[0] = %lld must be a multiple of groups = %lld", static_cast<long long>(w0),
                          static_cast<long long>(g)));
  }
  return Check{};
}

// "123", or "out of range" for a value beyond int64.
std::string wide_text(Wide value) {
  if (value < INT64_MIN || value > INT64_MAX) return "out of range";
  return std::to_string(static_cast<long long>(value));
}

// R14, applied to every rank (CANN checks only 5-D inputs), plus ours: the exact transposed
// size (1-D and 2-D) and equal batch sizes.
Check check_spatial(const ConvBackwardArgs& a) {
  const aclTensor& conv_in = a.transposed ? *a.grad_output : *a.input;
  const aclTensor& conv_out = a.transposed ? *a.input : *a.grad_output;
  for (size_t i = 0; i + 2 < a.input->view_shape.size(); ++i) {
    int64_t lo = 0, hi = 0;
    padding_of(a, i, &lo, &hi);
    const int64_t in = conv_in.view_shape[i + 2], out = conv_out.view_shape[i + 2];
    const int64_t k = a.weight->view_shape[i + 2], s = values(a.stride)[i], d = values(a.dilation)[i];
    const Wide expected = conv_output_size(in, lo, hi, k, s, d);
    if (expected < 0 || out != expected) {
      return invalid(format(
          "spatial dim %zu: %s size %lld must be floor((%s size %lld + padding %lld + %lld - "
          "dilation*(kernel-1) - 1) / stride %lld) + 1 = %s",
          i, a.transposed ? "input" : "gradOutput", static_cast<long long>(out), a.transposed ? "gradOutput" : "input",
          static_cast<long long>(in), static_cast<long long>(lo), static_cast<long long>(hi), static_cast<long long>(s),
          expected < 0 ? "none (the padded size is smaller than the dilated kernel)" : wide_text(expected).c_str()));
    }
    // Ours (1-D, 2-D): a transposed convolution's output size is fixed by outputPadding. (5-D keeps
    // CANN's R14 alone; a 4-value 2-D outputPadding has no per-dim meaning and is not used.)
    const std::vector<int64_t>& output_padding = values(a.output_padding);
    if (a.transposed && dims(*a.input) < 5 && output_padding.size() + 2 == a.input->view_shape.size()) {
      const int64_t x = out;  // the transposed convolution's input (our `input`)
      const Wide size = (Wide{x} - 1) * s - lo - hi + dilated_span(k, d) + output_padding[i];
      if (in != size) {
        return invalid(
            format("spatial dim %zu: gradOutput size %lld must be (input size %lld - 1) * stride %lld - "
                   "padding %lld - %lld + dilation*(kernel-1) + 1 + outputPadding %lld = %s",
                   i, static_cast<long long>(in), static_cast<long long>(x), static_cast<long long>(s),
                   static_cast<long long>(lo), static_cast<long long>(hi), static_cast<long long>(output_padding[i]),
                   wide_text(size).c_str()));
      }
    }
  }
  if (dim_size(*a.grad_output, 0) != dim_size(*a.input, 0)) {
    return invalid(format("gradOutput batch %lld must equal input batch %lld",
                          static_cast<long long>(dim_size(*a.grad_output, 0)),
                          static_cast<long long>(dim_size(*a.input, 0))));
  }
  return Check{};
}

// R17: the empty-tensor path (input, weight or gradOutput empty), then ours.
Check check_empty_path(const ConvBackwardArgs& a, const std::vector<bool>& mask) {
  const int64_t g = a.groups;
  if (mask[2]) {
    if (a.bias_sizes == nullptr) return invalid("biasSizes is nullptr: it is required when outputMask[2] is true");
    const int64_t expected = a.transposed ? dim_size(*a.weight, 1) * g : channels(*a.grad_output);
    if (values(a.bias_sizes).size() != 1 || values(a.bias_sizes)[0] != expected) {
      return invalid(format("biasSizes %s must be [%lld]", to_string(values(a.bias_sizes)).c_str(),
                            static_cast<long long>(expected)));
    }
  }
  if (mask[0] && (dims(*a.input) <= 2 || (dim_size(*a.input, 0) != 0 && channels(*a.input) != 0))) {
    return invalid(
        format("input shape %s: with an empty weight or gradOutput and outputMask[0] set, input must have "
               "N = 0 or C = 0",
               to_string(a.input->view_shape).c_str()));
  }
  Check lengths = check_param_lengths(a);
  if (lengths.failed()) return lengths;
  const int64_t w0 = dim_size(*a.weight, 0), w1 = dim_size(*a.weight, 1);
  if (w0 % g != 0) {
    return invalid(format("weight.shape[0] = %lld must be a multiple of groups = %lld", static_cast<long long>(w0),
                          static_cast<long long>(g)));
  }
  const aclTensor& conv_in = a.transposed ? *a.grad_output : *a.input;
  const bool transposed_empty_batch = a.transposed && dim_size(*a.input, 0) == 0;
  if (!transposed_empty_batch) {
    if ((channels(conv_in) != 0 || w1 != 0) &&
        (w1 == 0 || channels(conv_in) % w1 != 0 || channels(conv_in) / w1 != g)) {
      return invalid(format("C(%s) = %lld must equal weight.shape[1] (%lld) * groups (%lld)",
                            a.transposed ? "gradOutput" : "input", static_cast<long long>(channels(conv_in)),
                            static_cast<long long>(w1), static_cast<long long>(g)));
    }
    if (a.transposed && (w0 <= 0 || w0 != channels(*a.input))) {
      return invalid(format("weight.shape[0] = %lld must be positive and equal C(input) = %lld",
                            static_cast<long long>(w0), static_cast<long long>(channels(*a.input))));
    }
    if (!a.transposed) {
      for (size_t i = 0; i + 2 < a.input->view_shape.size(); ++i) {
        int64_t lo = 0, hi = 0;
        padding_of(a, i, &lo, &hi);
        const int64_t k = a.weight->view_shape[i + 2];
        if (conv_output_size(a.input->view_shape[i + 2], lo, hi, k, 1, values(a.dilation)[i]) < 0) {
          return invalid(format(
              "spatial dim %zu: input size %lld padded by %lld + %lld is smaller than the kernel %lld "
              "dilated by %lld",
              i, static_cast<long long>(a.input->view_shape[i + 2]), static_cast<long long>(lo),
              static_cast<long long>(hi), static_cast<long long>(k), static_cast<long long>(values(a.dilation)[i])));
        }
      }
    }
  }
  // Ours: the shapes the kernels index by must agree, even when nothing is computed.
  if (dims(*a.grad_output) != dims(*a.input) || dims(*a.weight) != dims(*a.input)) {
    return invalid("gradOutput, input and weight must have the same number of dims");
  }
  const aclTensor& conv_out = a.transposed ? *a.input : *a.grad_output;
  if (channels(conv_out) != w0 || channels(conv_in) != w1 * g || dim_size(*a.grad_output, 0) != dim_size(*a.input, 0)) {
    return invalid(format("gradOutput %s, input %s and weight %s (groups %lld) disagree on batch or channels",
                          to_string(a.grad_output->view_shape).c_str(), to_string(a.input->view_shape).c_str(),
                          to_string(a.weight->view_shape).c_str(), static_cast<long long>(g)));
  }
  return check_output_shapes(a, {mask[0], mask[1], mask[2]});
}

// R17b (compute stage, 5-D): a grouped weight gradient into a FLOAT gradWeight needs FLOAT
// computation: neither USE_FP16 nor FLOAT16/BF16 inputs (their promoted type).
Check check_grouped_3d_weight_grad(const ConvBackwardArgs& a, const std::vector<bool>& mask) {
  if (dims(*a.input) != 5 || !mask[1] || a.groups <= 1 || a.grad_weight->dtype != ACL_FLOAT) return Check{};
  if (a.cube_math_type == 2) {
    return invalid(
        format("a grouped (groups %d) 3-D weight gradient into a FLOAT gradWeight does not support "
               "cubeMathType 2 (USE_FP16)",
               a.groups));
  }
  const int32_t promoted = promote_dtype(promote_dtype(a.grad_output->dtype, a.input->dtype), a.weight->dtype);
  if (promoted == ACL_FLOAT16 || promoted == ACL_BF16) {
    return invalid(
        format("a grouped (groups %d) 3-D weight gradient into a FLOAT gradWeight needs FLOAT inputs: "
               "gradOutput, input and weight promote to %s",
               a.groups, dtype_name(promoted)));
  }
  return Check{};
}

// Ours (a problem to compute): spatial sizes and convolution parameters at most 2^31 - 1, so that
// every position the kernels compute with (o * stride - padding + k * dilation, and sums of a few)
// stays far inside int64. CANN's kernels take far less (its documented limits: stride <= 63 along
// H and W, padding and dilation <= 255); values beyond them fail on its device, not at this layer.
Check check_computable_sizes(const ConvBackwardArgs& a) {
  constexpr int64_t kLargest = INT32_MAX;
  const struct {
    const char* name;
    const std::vector<int64_t>& values;
    size_t first;  // the first spatial value (2 for tensor shapes)
  } lists[] = {{"gradOutput shape", a.grad_output->view_shape, 2},
               {"input shape", a.input->view_shape, 2},
               {"weight shape", a.weight->view_shape, 2},
               {"stride", values(a.stride), 0},
               {"padding", values(a.padding), 0},
               {"dilation", values(a.dilation), 0},
               {"outputPadding", values(a.output_padding), 0}};
  for (const auto& list : lists) {
    for (size_t i = list.first; i < list.values.size(); ++i) {
      if (list.values[i] > kLargest) {
        return invalid(
            format("%s %s: value %lld exceeds 2^31 - 1 = 2147483647, the bound on the spatial sizes, "
                   "strides, paddings and dilations of a problem to compute",
                   list.name, to_string(list.values).c_str(), static_cast<long long>(list.values[i])));
      }
    }
  }
  return Check{};
}

// Ours, last: every tensor the run reads or writes stays inside its storage.
Check check_data_access(const ConvBackwardArgs& a) {
  for (const UsedTensor& t : used_tensors(a)) {
    Check check = check_accessible(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  return Check{};
}

}  // namespace

std::vector<UsedTensor> used_tensors(const ConvBackwardArgs& a) {
  const std::vector<bool>& mask = a.output_mask->values;
  std::vector<UsedTensor> used;
  if (mask[0] || mask[1] || mask[2]) used.push_back({"gradOutput", a.grad_output, false});
  if (mask[1]) used.push_back({"input", a.input, false});
  if (mask[0]) used.push_back({"weight", a.weight, false});
  if (mask[0]) used.push_back({"gradInput", a.grad_input, true});
  if (mask[1]) used.push_back({"gradWeight", a.grad_weight, true});
  if (mask[2]) used.push_back({"gradBias", a.grad_bias, true});
  return used;
}

MathMode math_mode(int8_t cube_math_type) { return cube_math_type == 2 ? MathMode::kFp16Inputs : MathMode::kFull; }

Check validate_convolution_backward(const ConvBackwardArgs& a) {
  // R0: where phase 1 writes its results.
  if (a.workspace_size == nullptr) return fail_check(kNull, kApi, "workspaceSize is nullptr");
  if (a.executor == nullptr) return fail_check(kNull, kApi, "executor is nullptr");
  // R1: mandatory arguments, in order (biasSizes is not checked here, as in CANN).
  const struct {
    const char* name;
    const void* pointer;
  } required[] = {{"gradOutput", a.grad_output},
                  {"input", a.input},
                  {"weight", a.weight},
                  {"stride", a.stride},
                  {"padding", a.padding},
                  {"dilation", a.dilation},
                  {"outputPadding", a.output_padding},
                  {"outputMask", a.output_mask}};
  for (const auto& arg : required) {
    if (arg.pointer == nullptr) return fail_check(kNull, kApi, format("%s is nullptr", arg.name));
  }
  // R2: outputMask length (CANN reports it as a null-pointer error).
  const std::vector<bool>& mask = a.output_mask->values;
  if (mask.size() != 3) {
    return fail_check(kNull, kApi,
                      format("outputMask has %zu values: expected 3 (gradInput, gradWeight, gradBias)", mask.size()));
  }
  // R3: each requested gradient needs its output tensor.
  const struct {
    const char* name;
    const aclTensor* tensor;
  } outputs[] = {{"gradInput", a.grad_input}, {"gradWeight", a.grad_weight}, {"gradBias", a.grad_bias}};
  for (size_t i = 0; i < 3; ++i) {
    if (mask[i] && outputs[i].tensor == nullptr) {
      return fail_check(kNull, kApi, format("%s is nullptr while outputMask[%zu] is true", outputs[i].name, i));
    }
  }
  // Ours: tensors must be well formed before their shapes are read.
  const struct {
    const char* name;
    const aclTensor* tensor;
  } all[] = {{"gradOutput", a.grad_output}, {"input", a.input},       {"weight", a.weight}, {"gradInput", a.grad_input},
             {"gradWeight", a.grad_weight}, {"gradBias", a.grad_bias}};
  for (const auto& t : all) {
    if (t.tensor == nullptr) continue;
    Check check = check_well_formed(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // R4: dtypes of the inputs, then of every non-null output (whatever the mask).
  for (const auto& t : all) {
    if (t.tensor == nullptr) continue;
    Check check = check_float_dtype(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // R5: formats of the inputs and of gradInput / gradWeight.
  for (size_t i = 0; i < 5; ++i) {
    if (all[i].tensor == nullptr) continue;
    Check check = check_format(all[i].name, *all[i].tensor);
    if (check.failed()) return check;
  }
  // R6: gradBias must be ND for a direct convolution.
  if (!a.transposed && a.grad_bias != nullptr && a.grad_bias->format != ACL_FORMAT_ND) {
    return invalid(format("gradBias format %s (%d) is not supported: expected ND", format_name(a.grad_bias->format),
                          a.grad_bias->format));
  }
  // R7: stride >= 1, padding >= 0, dilation >= 1.
  Check range = check_all_at_least("stride", a.stride, 1);
  if (!range.failed()) range = check_all_at_least("padding", a.padding, 0);
  if (!range.failed()) range = check_all_at_least("dilation", a.dilation, 1);
  if (range.failed()) return range;
  // R8: outputPadding: >= 0 (and < stride for 3-D convolution) when transposed, else all 0.
  const std::vector<int64_t>& output_padding = values(a.output_padding);
  if (a.transposed) {
    Check check = check_all_at_least("outputPadding", a.output_padding, 0);
    if (check.failed()) return check;
    if (dims(*a.input) == 5) {
      const size_t n = std::min(output_padding.size(), values(a.stride).size());
      for (size_t i = 0; i < n; ++i) {
        if (output_padding[i] >= values(a.stride)[i]) {
          return invalid(format("outputPadding %s must be smaller than stride %s element by element",
                                to_string(output_padding).c_str(), to_string(values(a.stride)).c_str()));
        }
      }
    }
  } else if (std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v != 0; })) {
    return invalid(
        format("outputPadding %s must be all 0 when transposed is false", to_string(output_padding).c_str()));
  }
  // R9: groups.
  if (a.groups < 1) return invalid(format("groups %d must be >= 1", a.groups));
  // R10: cubeMathType.
  if (a.cube_math_type < 0 || a.cube_math_type > 3) {
    return invalid(
        format("cubeMathType %d is not supported: expected 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, "
               "2 USE_FP16 or 3 USE_HF32",
               a.cube_math_type));
  }
  // R11: an empty input or weight skips R12-R14; R17 applies instead.
  const bool empty_path = is_empty(*a.input) || is_empty(*a.weight) || is_empty(*a.grad_output);
  if (!is_empty(*a.input) && !is_empty(*a.weight)) {
    Check check = check_shapes(a);                   // R12
    if (!check.failed()) check = check_channels(a);  // R13
    if (!check.failed()) check = check_spatial(a);   // R14
    if (check.failed()) return check;
  }
  if (empty_path) {  // R17
    Check check = check_empty_path(a, mask);
    if (check.failed()) return check;
  } else {  // R17b, then ours
    Check check = check_grouped_3d_weight_grad(a, mask);
    if (!check.failed()) check = check_computable_sizes(a);
    if (check.failed()) return check;
  }
  return check_data_access(a);
}

}  // namespace aclnn_cpu
