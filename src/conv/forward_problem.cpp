// The forward operators' problems: the role swap (forward_problem) and aclnnConvolution's geometry.
#include "common/dtype.h"
#include "conv/convolution_backward.h"
#include "conv/convolution_forward.h"
#include "conv/tensor_views.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {

ConvProblem forward_problem(const ConvGeometry& geometry, bool transposed, const View5& input, const View5& weight,
                            const View5& output, const View5* bias, MathMode math) {
  ConvProblem p;
  p.geometry = geometry;
  p.wei = weight;
  // The direct convolution's source and destination: input -> output, or, transposed, output -> input
  // (whose adjoint maps input to output). The output's view only gives the shape it is read by.
  p.src = transposed ? output : input;
  p.dst = transposed ? input : output;
  p.input_grad = transposed ? InputGrad::kBackwardData : InputGrad::kForward;
  p.grad_input = output;
  p.grad_input_name = "output";
  if (bias != nullptr) {
    p.add_grad_input_bias = true;
    p.grad_input_bias = *bias;
  }
  p.math = math;
  return p;
}

ConvProblem make_convolution_problem(const ConvolutionArgs& a) {
  // N-C-spatial tensors, or NDHWC ones as the same (N, C, D, H, W) views.
  auto view = [](const aclTensor& t) {
    return t.format == ACL_FORMAT_NDHWC && dims(t) == 5 ? make_view5(t, {0, 4, 1, 2, 3}) : make_ncs_view5(t);
  };
  const View5 input = view(*a.input), weight = view(*a.weight), output = view(*a.output);
  const View5& src = a.transposed ? output : input;
  const View5& dst = a.transposed ? input : output;
  ConvGeometry g;
  g.batch = input.shape[0];
  g.groups = a.groups;
  g.src_channels_per_group = weight.shape[1];
  g.dst_channels_per_group = weight.shape[0] / a.groups;
  const int64_t spatial = dims(*a.input) - 2;
  const int64_t first = 3 - spatial;  // 1-D and 2-D problems use the trailing spatial slots
  const std::vector<int64_t>& padding = a.padding->values;
  for (int64_t i = 0; i < spatial; ++i) {
    const size_t at = static_cast<size_t>(i);
    g.src_size[first + i] = src.shape[2 + first + i];
    g.dst_size[first + i] = dst.shape[2 + first + i];
    g.kernel[first + i] = weight.shape[2 + first + i];
    g.stride[first + i] = a.stride->values[at];
    g.dilation[first + i] = a.dilation->values[at];
    g.pad[first + i] = static_cast<int64_t>(padding.size()) == 2 * spatial ? padding[2 * at] : padding[at];
  }
  View5 bias;
  if (a.bias != nullptr) bias = make_ncs_view5(*a.bias);
  return forward_problem(g, a.transposed, input, weight, output, a.bias != nullptr ? &bias : nullptr,
                         math_mode(a.cube_math_type));
}

}  // namespace aclnn_cpu
