// The ordered implementation lists, one per gradient. Phase 1 takes the first entry whose
// supports() accepts the problem on this CPU (ACLNN_CONVBWD_KERNELS can put named entries or
// families first; ACLNN_CONVBWD_VERBOSE=2 prints every refusal's reason). The double-precision
// reference is last in every list and accepts everything.
//
// Adding an implementation: one new file defining a ConvImpl, its declaration here, and its
// place in a list (the tests run every entry of every list on each case it supports).
#include "kernels/core/plan.h"

namespace aclnn_cpu {

extern const ConvImpl kDepthwiseInputGrad;           // kernels/direct/depthwise.cpp
extern const ConvImpl kDirectInputGrad;              // kernels/direct/direct_input.cpp
extern const ConvImpl kWinogradInputGrad;            // kernels/winograd/winograd_forward.cpp
extern const ConvImpl kDirectForwardInputGrad;       // kernels/direct/direct_forward.cpp
extern const ConvImpl kDepthwiseWeightGrad;          // kernels/direct/depthwise.cpp
extern const ConvImpl kChannelsLastInputGrad;        // kernels/gemm/channels_last_{input,weight}.cpp
extern const ConvImpl kChannelsLastWeightGrad;       // kernels/gemm/channels_last_{input,weight}.cpp
extern const ConvImpl kGemmFlippedWindowsInputGrad;  // kernels/gemm/gemm_forward.cpp
extern const ConvImpl kGemmFlippedTilesInputGrad;    // kernels/gemm/gemm_forward.cpp
extern const ConvImpl kGemmForwardWindowsInputGrad;  // kernels/gemm/gemm_forward.cpp
extern const ConvImpl kGemmForwardTilesInputGrad;    // kernels/gemm/gemm_forward.cpp
extern const ConvImpl kGemmCol2imInputGrad;          // kernels/gemm/gemm_col2im.cpp
extern const ConvImpl kGemmWindowsWeightGrad;        // kernels/gemm/gemm_weight_grad.cpp
extern const ConvImpl kGemmTilesWeightGrad;          // kernels/gemm/gemm_weight_grad.cpp
extern const ConvImpl kSmallGroupInputGrad;          // kernels/direct/small_group.cpp
extern const ConvImpl kSmallGroupWeightGrad;         // kernels/direct/small_group.cpp
extern const ConvImpl kLanesBias;                    // kernels/common/bias.cpp
extern const ConvImpl kReferenceInputGrad;           // kernels/ref/conv_ref.cpp
extern const ConvImpl kReferenceWeightGrad;          // kernels/ref/conv_ref.cpp
extern const ConvImpl kReferenceBias;                // kernels/ref/conv_ref.cpp

const std::vector<const ConvImpl*>& implementations(Gradient gradient) {
  static const std::vector<const ConvImpl*> input_grad = {
      &kSmallGroupInputGrad,         &kDepthwiseInputGrad,        &kChannelsLastInputGrad,
      &kWinogradInputGrad,           &kDirectInputGrad,           &kDirectForwardInputGrad,
      &kGemmFlippedWindowsInputGrad, &kGemmFlippedTilesInputGrad, &kGemmForwardWindowsInputGrad,
      &kGemmForwardTilesInputGrad,   &kGemmCol2imInputGrad,       &kReferenceInputGrad};
  static const std::vector<const ConvImpl*> weight_grad = {&kSmallGroupWeightGrad,   &kDepthwiseWeightGrad,
                                                           &kChannelsLastWeightGrad, &kGemmWindowsWeightGrad,
                                                           &kGemmTilesWeightGrad,    &kReferenceWeightGrad};
  static const std::vector<const ConvImpl*> bias = {&kLanesBias, &kReferenceBias};
  switch (gradient) {
    case Gradient::kInput: return input_grad;
    case Gradient::kWeight: return weight_grad;
    default: return bias;
  }
}

}  // namespace aclnn_cpu
