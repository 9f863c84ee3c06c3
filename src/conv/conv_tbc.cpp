// aclnnConvTbc: checks B0-B6 (docs/convolution_forward.md) and the direct 1-D problem of TBC
// tensors seen through permuted views (no copies).
#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/convolution_backward.h"
#include "conv/convolution_forward.h"
#include "conv/tensor_views.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

constexpr const char* kApi = "aclnnConvTbcGetWorkspaceSize";

Check invalid(const std::string& message) { return fail_check(ACLNN_ERR_PARAM_INVALID, kApi, message); }
long long ll(int64_t value) { return static_cast<long long>(value); }

struct Named {
  const char* name;
  const aclTensor* tensor;
};

}  // namespace

std::vector<UsedTensor> used_tensors(const ConvTbcArgs& a) {
  return {{"self", a.self, false}, {"weight", a.weight, false}, {"bias", a.bias, false}, {"output", a.output, true}};
}

Check validate_conv_tbc(const ConvTbcArgs& a) {
  // B0: every tensor is mandatory, then (ours: CANN reads them unchecked) where phase 1 writes.
  const Named all[] = {{"self", a.self}, {"weight", a.weight}, {"bias", a.bias}, {"output", a.output}};
  Check check = check_not_null(kApi, {{"self", a.self},
                                      {"weight", a.weight},
                                      {"bias", a.bias},
                                      {"output", a.output},
                                      {"workspaceSize", a.workspace_size},
                                      {"executor", a.executor}});
  if (check.failed()) return check;
  for (const Named& t : all) {  // ours: well formed before shapes are read
    check = check_well_formed(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  // B1: dtypes: bias and self FLOAT, FLOAT16 or BF16; weight and output as self (bias may differ).
  for (const Named& t : {all[2], all[0]}) {
    check = check_float_dtype(kApi, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  for (const Named& t : {all[1], all[3]}) {
    if (t.tensor->dtype != a.self->dtype) {
      return invalid(format("%s dtype %s must equal self dtype %s", t.name, dtype_name(t.tensor->dtype),
                            dtype_name(a.self->dtype)));
    }
  }
  // B2: ranks.
  for (const Named& t : all) {
    const int64_t rank = t.tensor == a.bias ? 1 : 3;
    if (dims(*t.tensor) != rank) {
      return invalid(format("%s has %lld dims: expected %lld", t.name, ll(dims(*t.tensor)), ll(rank)));
    }
  }
  // B3: formats of self, weight and output ND or NCL (bias: any).
  for (const Named& t : {all[0], all[1], all[3]}) {
    const int32_t f = t.tensor->format;
    if (f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL) {
      return invalid(format("%s format %s (%d) is not supported: expected ND or NCL", t.name, format_name(f), f));
    }
  }
  const std::vector<int64_t>&in = a.self->view_shape, &w = a.weight->view_shape;
  // B4: bias length, kernel size, pad, channels.
  if (a.bias->view_shape[0] != w[2]) {
    return invalid(format("bias length %lld must equal weight.shape[2] = %lld (output channels)",
                          ll(a.bias->view_shape[0]), ll(w[2])));
  }
  if (w[0] <= 0) return invalid(format("weight.shape[0] (the kernel size) %lld must be > 0", ll(w[0])));
  if (a.pad < 0) return invalid(format("pad %lld must be >= 0", ll(a.pad)));  // ours
  // (CANN counts the pad once here, T + pad - K >= 0, against the 2 * pad of the output's length: the
  // output's length is what is checked.)
  const Wide t_out = Wide{in[0]} + Wide{a.pad} * 2 + 1 - w[0];  // 128 bits: pad may be near INT64_MAX
  if (!is_empty(*a.self) && t_out < 0) {
    return invalid(format("self length T = %lld padded by 2 * pad = 2 * %lld is shorter than the kernel %lld",
                          ll(in[0]), ll(a.pad), ll(w[0])));
  }
  if (in[2] != w[1]) {
    return invalid(format("self channels %lld (self.shape[2]) must equal weight.shape[1] = %lld", ll(in[2]), ll(w[1])));
  }
  // B5: output is (T + 2*pad + 1 - K, B, Cout).
  const bool representable = t_out >= 0 && t_out <= INT64_MAX;
  const std::vector<int64_t> expected = {representable ? static_cast<int64_t>(t_out) : -1, in[1], w[2]};
  if (!representable || a.output->view_shape != expected) {
    return invalid(format("output shape %s must be (T + 2*pad + 1 - K, B, Cout) = %s",
                          to_string(a.output->view_shape).c_str(),
                          representable ? to_string(expected).c_str()
                          : t_out < 0   ? "none (T + 2*pad + 1 - K is negative)"
                                        : "none (T + 2*pad + 1 - K exceeds int64)"));
  }
  check = check_cube_math_type(kApi, a.cube_math_type, 4);  // B6, after the shapes
  if (check.failed()) return check;
  // Ours: sizes the kernels index with, and every tensor inside its storage.
  for (const Named& t : all) {
    for (int64_t size : t.tensor->view_shape) {
      if (size > INT32_MAX) {
        return invalid(format("%s shape %s: a dim exceeds 2^31 - 1, the bound on the sizes of a problem to compute",
                              t.name, to_string(t.tensor->view_shape).c_str()));
      }
    }
  }
  if (a.pad > INT32_MAX) return invalid(format("pad %lld exceeds 2^31 - 1", ll(a.pad)));
  return check_inside_storage(kApi, used_tensors(a));
}

ConvProblem make_conv_tbc_problem(const ConvTbcArgs& a) {
  const View5 input = tbc_as_ncl(*a.self), weight = kio_as_oik(*a.weight), output = tbc_as_ncl(*a.output);
  const View5 bias = make_ncs_view5(*a.bias);
  ConvGeometry g;
  g.batch = input.shape[0];
  g.groups = 1;
  g.src_channels_per_group = input.shape[1];
  g.dst_channels_per_group = output.shape[1];
  g.src_size[2] = input.shape[4];
  g.dst_size[2] = output.shape[4];
  g.kernel[2] = weight.shape[4];
  g.pad[2] = a.pad;
  return forward_problem(g, false, input, weight, output, &bias, math_mode(a.cube_math_type));
}

}  // namespace aclnn_cpu
