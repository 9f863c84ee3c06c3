// Normalises validated aclnnConvolutionBackward arguments into one direct convolution problem.
#include "conv/convolution_backward.h"
#include "conv/tensor_views.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {

ConvProblem make_convolution_problem(const ConvBackwardArgs& a) {
  ConvProblem p;
  // Transposed convolution is the adjoint of a direct one whose input is gradOutput and whose
  // output is `input`; the weight layout (C(input), C(gradOutput)/groups, k...) already fits it.
  const aclTensor& src = a.transposed ? *a.grad_output : *a.input;
  const aclTensor& dst = a.transposed ? *a.input : *a.grad_output;
  p.src = make_ncs_view5(src);
  p.dst = make_ncs_view5(dst);
  p.wei = make_ncs_view5(*a.weight);

  ConvGeometry& g = p.geometry;
  g.batch = p.src.shape[0];
  g.groups = a.groups;
  g.src_channels_per_group = p.wei.shape[1];
  g.dst_channels_per_group = p.wei.shape[0] / a.groups;
  const size_t spatial = a.input->view_shape.size() - 2;
  const size_t first = 3 - spatial;  // 1-D and 2-D problems use the trailing spatial slots
  const std::vector<int64_t>& padding = a.padding->values;
  for (size_t i = 0; i < spatial; ++i) {
    g.src_size[first + i] = p.src.shape[2 + first + i];
    g.dst_size[first + i] = p.dst.shape[2 + first + i];
    g.kernel[first + i] = p.wei.shape[2 + first + i];
    g.stride[first + i] = a.stride->values[i];
    g.dilation[first + i] = a.dilation->values[i];
    g.pad[first + i] = padding.size() == 4 ? padding[2 * i] : padding[i];
  }

  const std::vector<bool>& mask = a.output_mask->values;
  if (mask[0]) {
    p.input_grad = a.transposed ? InputGrad::kForward : InputGrad::kBackwardData;
    p.grad_input = make_ncs_view5(*a.grad_input);
  }
  p.want_weight_grad = mask[1];
  if (mask[1]) p.grad_weight = make_ncs_view5(*a.grad_weight);
  p.want_bias_grad = mask[2];
  if (mask[2]) {
    p.grad_bias = make_ncs_view5(*a.grad_bias);
    p.bias_source = make_ncs_view5(*a.grad_output);
  }
  p.math = math_mode(a.cube_math_type);
  return p;
}

}  // namespace aclnn_cpu
