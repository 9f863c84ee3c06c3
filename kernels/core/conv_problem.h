// What the implementations compute. Every front door (direct, transposed, TBC) reduces to one
// *direct* convolution dst = conv(src, wei) with three spatial dims, plus which gradients to
// write into which strided views.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace aclnn_cpu {

// A strided view in canonical order (N, C, D, H, W). Strides and offset are in elements; unit
// dims have stride 0. dtype is FLOAT, FLOAT16 or BF16 (aclDataType value).
struct View5 {
  void* data = nullptr;
  int32_t dtype = 0;
  int64_t shape[5] = {1, 1, 1, 1, 1};
  int64_t stride[5] = {0, 0, 0, 0, 0};
  int64_t offset = 0;
  // The canonical dims in the order of the user's tensor dims, outermost first (unit dims the
  // user's tensor lacks come last). TBC (T, B, C) seen as (N=B, C, W=T): {4, 0, 1, 2, 3}.
  // An output that overlaps itself is written in this order (last write wins).
  int order[5] = {0, 1, 2, 3, 4};

  int64_t numel() const { return shape[0] * shape[1] * shape[2] * shape[3] * shape[4]; }
  int64_t element(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return offset + n * stride[0] + c * stride[1] + d * stride[2] + h * stride[3] + w * stride[4];
  }
};

// Direct convolution dst[n, g*Cout_g + oc, o] = sum_{ic, k} src[n, g*Cin_g + ic, o*s - p + k*d]
// * wei[g*Cout_g + oc, ic, k], reads outside [0, src) being zero. 1-D and 2-D problems have
// leading unit spatial dims (size 1, kernel 1, stride 1, pad 0, dilation 1). `pad` is the
// leading (top/left/front) padding; the trailing padding is implied by the sizes.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t groups = 1;
  int64_t src_channels_per_group = 0;  // Cin_g
  int64_t dst_channels_per_group = 0;  // Cout_g
  int64_t src_size[3] = {1, 1, 1};
  int64_t dst_size[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};

  int64_t src_plane() const { return src_size[0] * src_size[1] * src_size[2]; }
  int64_t dst_plane() const { return dst_size[0] * dst_size[1] * dst_size[2]; }
  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// A direct convolution with stride 1 has as input gradient a forward convolution of dY with the
// kernel flipped and its channel roles swapped, padded by d*(k-1) - p:
//   dX[ci, i] = sum_{co, k'} dY[co, i - p' + k'*d] * W[co, ci, K-1-k'],
// which needs no col2im. Whether a geometry has one (stride 1, padding within the kernel's span):
inline bool flippable(const ConvGeometry& g) {
  for (int a = 0; a < 3; ++a) {
    if (g.stride[a] != 1 || g.pad[a] > g.dilation[a] * (g.kernel[a] - 1)) return false;
  }
  return true;
}
// and its geometry (src = dY, dst = dX):
inline ConvGeometry flipped_geometry(const ConvGeometry& g) {
  ConvGeometry f = g;
  std::swap(f.src_channels_per_group, f.dst_channels_per_group);
  for (int a = 0; a < 3; ++a) {
    f.src_size[a] = g.dst_size[a];
    f.dst_size[a] = g.src_size[a];
    f.pad[a] = g.dilation[a] * (g.kernel[a] - 1) - g.pad[a];
  }
  return f;
}

// How the inputs are rounded before multiplying (cubeMathType).
enum class MathMode {
  kFull,        // 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 3 USE_HF32: inputs used as they are
  kFp16Inputs,  // 2 USE_FP16: every input rounded to FLOAT16 first
};

// The passes of the convolution operator. Each has its own ordered list of entries
// (kernels/conv/implementations.cpp), and an entry implements one pass: a list offers it only problems
// of that pass.
enum class ConvPass {
  kForward,         // y = conv(x, w): the forward operators' output, a transposed layer's gradInput
  kBackwardData,    // dx = conv^T(dy, w): a direct layer's gradInput, a transposed forward operator's output
  kBackwardWeight,  // dw = the correlation of dy with x: gradWeight
  kBias,            // db = dy summed over N and space: gradBias
};
constexpr ConvPass kConvPasses[] = {ConvPass::kForward, ConvPass::kBackwardData, ConvPass::kBackwardWeight,
                                    ConvPass::kBias};

// Which operation produces gradInput.
enum class InputGrad {
  kNone,
  kBackwardData,  // direct convolution: gradInput = backward_data(gradOutput, weight)
  kForward,       // transposed convolution: gradInput = forward(gradOutput, weight)
};

struct ConvProblem {
  ConvGeometry geometry;
  View5 src;  // direct convolution's input: user `input`, or user `gradOutput` when transposed
  View5 wei;  // (G*Cout_g, Cin_g, kD, kH, kW)
  View5 dst;  // direct convolution's output (gradient): user `gradOutput`, or user `input` when transposed
  InputGrad input_grad = InputGrad::kNone;
  bool want_weight_grad = false;
  bool want_bias_grad = false;
  View5 grad_input;   // shaped like the user's input: src (kBackwardData) or dst (kForward)
  View5 grad_weight;  // shaped like wei
  View5 grad_bias;    // (1, C, 1, 1, 1)
  View5 bias_source;  // the user's gradOutput, summed over N and space into grad_bias
  // The forward operators' bias (aclnnConvolution, aclnnConvTbc, aclnnConvDepthwise2d compute their
  // output as grad_input): (1, C, 1, 1, 1), added in float to each channel's sums before the one
  // rounding into grad_input's dtype, result = fl32(sum) + bias.
  bool add_grad_input_bias = false;
  View5 grad_input_bias;
  // What the front door calls grad_input in its messages and the verbose mode: "gradInput", or "output"
  // for the forward operators.
  const char* grad_input_name = "gradInput";
  MathMode math = MathMode::kFull;
  int max_threads = 1;  // threads phase 2 may use, fixed at phase 1
  // Choices the user forces on the entries' decisions (ACLNN_CONVBWD_VARIANTS, read at phase 1;
  // take_choice): names of choices to take wherever they can be taken, "no_<choice>" for those never to
  // take. Forcing changes how the sums are cut, never what they add up.
  std::string forced_choices;

  // The pass that computes grad_input (where input_grad is not kNone).
  ConvPass grad_input_pass() const {
    return input_grad == InputGrad::kForward ? ConvPass::kForward : ConvPass::kBackwardData;
  }

  // Which inputs the requested gradients read.
  bool reads_src() const { return input_grad == InputGrad::kForward || want_weight_grad; }
  bool reads_wei() const { return input_grad != InputGrad::kNone; }
  bool reads_dst() const { return input_grad == InputGrad::kBackwardData || want_weight_grad; }
};

}  // namespace aclnn_cpu
