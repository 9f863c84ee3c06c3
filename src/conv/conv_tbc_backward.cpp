// aclnnConvTbcBackward: checks T0-T12 and the reduction to the common direct 1-D problem.
#include "conv/conv_tbc_backward.h"

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/convolution_backward.h"
#include "conv/tensor_views.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

constexpr const char* kApi = "aclnnConvTbcBackwardGetWorkspaceSize";

Check invalid(const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, kApi, message); }

struct Named {
  const char* name;
  const aclTensor* tensor;
};

}  // namespace

Check validate_conv_tbc_backward(const ConvTbcBackwardArgs& a) {
  // T0: where phase 1 writes its results.
  if (a.workspace_size == nullptr) return fail_check(ACLNN_ERR_PARAM_NULLPTR, kApi, "workspaceSize is nullptr");
  if (a.executor == nullptr) return fail_check(ACLNN_ERR_PARAM_NULLPTR, kApi, "executor is nullptr");
  // T1: every tensor is mandatory (there is no output mask).
  const Named all[] = {{"self", a.self},         {"input", a.input},          {"weight", a.weight},
                       {"bias", a.bias},         {"gradInput", a.grad_input}, {"gradWeight", a.grad_weight},
                       {"gradBias", a.grad_bias}};
  for (const Named& t : all) {
    if (t.tensor == nullptr) return fail_check(ACLNN_ERR_PARAM_NULLPTR, kApi, format("%s is nullptr", t.name));
  }
  for (const Named& t : all) {  // ours: well formed before shapes are read
    Check check = check_well_formed(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // T2: dtypes.
  for (const Named& t : all) {
    Check check = check_float_dtype(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // T3: formats: bias and gradBias ND, the others ND or NCL.
  for (const Named& t : all) {
    const bool vector = t.tensor == a.bias || t.tensor == a.grad_bias;
    const int32_t f = t.tensor->format;
    if (vector ? f != ACL_FORMAT_ND : (f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL)) {
      return invalid(format("%s format %s (%d) is not supported: expected %s", t.name, format_name(f), f,
                            vector ? "ND" : "ND or NCL"));
    }
  }
  // T4: self must not be empty.
  if (is_empty(*a.self)) {
    return invalid(format("self shape %s must not be empty", to_string(a.self->view_shape).c_str()));
  }
  // T5: ranks, in CANN's order.
  const struct {
    const char* name;
    const aclTensor* tensor;
    int64_t rank;
  } ranks[] = {{"self", a.self, 3},
               {"input", a.input, 3},
               {"weight", a.weight, 3},
               {"bias", a.bias, 1},
               {"gradBias", a.grad_bias, 1},
               {"gradInput", a.grad_input, 3},
               {"gradWeight", a.grad_weight, 3}};
  for (const auto& r : ranks) {
    if (dims(*r.tensor) != r.rank) {
      return invalid(format("%s has %lld dims: expected %lld", r.name, static_cast<long long>(dims(*r.tensor)),
                            static_cast<long long>(r.rank)));
    }
  }
  const std::vector<int64_t>& in = a.input->view_shape;
  const std::vector<int64_t>& w = a.weight->view_shape;
  // T6, T7: channels.
  if (in[2] != w[1]) {
    return invalid(format("input channels %lld (input.shape[2]) must equal weight.shape[1] = %lld",
                          static_cast<long long>(in[2]), static_cast<long long>(w[1])));
  }
  if (a.bias->view_shape[0] != w[2]) {
    return invalid(format("bias length %lld must equal weight.shape[2] = %lld (output channels)",
                          static_cast<long long>(a.bias->view_shape[0]), static_cast<long long>(w[2])));
  }
  // T8: pad.
  if (a.pad < 0) return invalid(format("pad %lld must be >= 0", static_cast<long long>(a.pad)));
  // T9: self is (T + 2*pad + 1 - K, B, Cout).
  const Wide t_out = Wide{in[0]} + Wide{a.pad} * 2 + 1 - w[0];  // 128 bits: pad may be near INT64_MAX
  const bool representable = t_out >= 0 && t_out <= INT64_MAX;
  const std::vector<int64_t> expected_self = {representable ? static_cast<int64_t>(t_out) : -1, in[1], w[2]};
  if (!representable || a.self->view_shape != expected_self) {
    return invalid(format("self shape %s must be (T + 2*pad + 1 - K, B, Cout) = %s",
                          to_string(a.self->view_shape).c_str(),
                          representable ? to_string(expected_self).c_str()
                          : t_out < 0   ? "none (T + 2*pad + 1 - K is negative)"
                                        : "none (T + 2*pad + 1 - K exceeds int64)"));
  }
  // T10: gradients shaped like what they differentiate.
  const Named pairs[][2] = {{{"gradInput", a.grad_input}, {"input", a.input}},
                            {{"gradWeight", a.grad_weight}, {"weight", a.weight}},
                            {{"gradBias", a.grad_bias}, {"bias", a.bias}}};
  for (const auto& pair : pairs) {
    if (pair[0].tensor->view_shape != pair[1].tensor->view_shape) {
      return invalid(format("%s shape %s must equal %s shape %s", pair[0].name,
                            to_string(pair[0].tensor->view_shape).c_str(), pair[1].name,
                            to_string(pair[1].tensor->view_shape).c_str()));
    }
  }
  // T11: cubeMathType, after the shape checks (unlike aclnnConvolutionBackward).
  if (a.cube_math_type < 0 || a.cube_math_type > 3) {
    return invalid(
        format("cubeMathType %d is not supported: expected 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, "
               "2 USE_FP16 or 3 USE_HF32",
               a.cube_math_type));
  }
  // Ours: every tensor the run reads or writes stays inside its storage.
  for (const UsedTensor& t : used_tensors(a)) {
    Check check = check_accessible(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  return Check{};
}

std::vector<UsedTensor> used_tensors(const ConvTbcBackwardArgs& a) {
  return {{"self", a.self, false},           {"input", a.input, false},           {"weight", a.weight, false},
          {"gradInput", a.grad_input, true}, {"gradWeight", a.grad_weight, true}, {"gradBias", a.grad_bias, true}};
}

ConvProblem make_conv_tbc_problem(const ConvTbcBackwardArgs& a) {
  ConvProblem p;
  p.src = tbc_as_ncl(*a.input);
  p.dst = tbc_as_ncl(*a.self);
  p.wei = kio_as_oik(*a.weight);
  ConvGeometry& g = p.geometry;
  g.batch = p.src.shape[0];
  g.groups = 1;
  g.src_channels_per_group = p.src.shape[1];
  g.dst_channels_per_group = p.dst.shape[1];
  g.src_size[2] = p.src.shape[4];
  g.dst_size[2] = p.dst.shape[4];
  g.kernel[2] = p.wei.shape[4];
  g.pad[2] = a.pad;
  p.input_grad = InputGrad::kBackwardData;
  p.grad_input = tbc_as_ncl(*a.grad_input);
  p.want_weight_grad = true;
  p.grad_weight = kio_as_oik(*a.grad_weight);
  p.want_bias_grad = true;
  p.grad_bias = make_ncs_view5(*a.grad_bias);
  p.bias_source = p.dst;
  p.math = math_mode(a.cube_math_type);
  return p;
}

}  // namespace aclnn_cpu
