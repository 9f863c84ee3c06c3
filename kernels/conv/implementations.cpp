// The convolution operator's ordered lists, one per pass. Phase 1 takes the first entry whose
// supports() accepts the problem on this CPU (ACLNN_CONVBWD_KERNELS can put named entries or
// families first; ACLNN_CONVBWD_VERBOSE=2 prints every refusal's reason). The double-precision
// reference is last in every list and accepts everything.
//
// Adding an implementation: one new file defining a ConvImpl for each pass it computes, its
// declaration here, and its place in those lists (the tests run every entry of every list on each
// case it supports). A kernel that computes two passes is two entries, one per list (for_pass).
#include "kernels/conv/conv_plan.h"

namespace aclnn_cpu {

// kernels/direct/small_group.cpp
extern const ConvImpl kSmallGroupForward, kSmallGroupBackwardData, kSmallGroupBackwardWeight;
// kernels/direct/depthwise.cpp
extern const ConvImpl kDepthwiseForward, kDepthwiseBackwardData, kDepthwiseBackwardWeight;
// kernels/gemm/channels_last_{input,weight}.cpp
extern const ConvImpl kChannelsLastForward, kChannelsLastBackwardData, kChannelsLastBackwardWeight;
// kernels/winograd/winograd_forward.cpp
extern const ConvImpl kWinogradForward, kWinogradBackwardData;
// kernels/direct/direct_input.cpp
extern const ConvImpl kDirectForward, kDirectBackwardData;
// kernels/direct/direct_forward.cpp
extern const ConvImpl kDirectForwardForward;
// kernels/gemm/gemm_forward.cpp
extern const ConvImpl kGemmForwardWindowsForward, kGemmForwardTilesForward;
extern const ConvImpl kGemmFlippedWindowsBackwardData, kGemmFlippedTilesBackwardData;
// kernels/gemm/gemm_col2im.cpp
extern const ConvImpl kGemmCol2imBackwardData;
// kernels/gemm/{gemm_forward,gemm_col2im}.cpp: the same entries where they go ahead of the direct kernels
// (kernels/gemm/ahead_of_direct.h: BF16 pair products, one row per plane)
extern const ConvImpl kGemmForwardWindowsAheadForward;
extern const ConvImpl kGemmFlippedWindowsAheadBackwardData, kGemmFlippedTilesAheadBackwardData;
extern const ConvImpl kGemmCol2imAheadBackwardData;
// kernels/gemm/gemm_weight_grad.cpp
extern const ConvImpl kGemmWindowsBackwardWeight, kGemmTilesBackwardWeight;
// kernels/bias/lanes.cpp
extern const ConvImpl kLanesBias;
// kernels/ref/conv_ref.cpp
extern const ConvImpl kReferenceForward, kReferenceBackwardData, kReferenceBackwardWeight, kReferenceBias;

const std::vector<const ConvImpl*>& convolution_implementations(ConvPass pass) {
  static const std::vector<const ConvImpl*> forward = {&kSmallGroupForward,
                                                       &kDepthwiseForward,
                                                       &kChannelsLastForward,
                                                       &kWinogradForward,
                                                       &kGemmForwardWindowsAheadForward,
                                                       &kDirectForward,
                                                       &kDirectForwardForward,
                                                       &kGemmForwardWindowsForward,
                                                       &kGemmForwardTilesForward,
                                                       &kReferenceForward};
  static const std::vector<const ConvImpl*> backward_data = {&kSmallGroupBackwardData,
                                                             &kDepthwiseBackwardData,
                                                             &kChannelsLastBackwardData,
                                                             &kWinogradBackwardData,
                                                             &kGemmFlippedWindowsAheadBackwardData,
                                                             &kGemmFlippedTilesAheadBackwardData,
                                                             &kGemmCol2imAheadBackwardData,
                                                             &kDirectBackwardData,
                                                             &kGemmFlippedWindowsBackwardData,
                                                             &kGemmFlippedTilesBackwardData,
                                                             &kGemmCol2imBackwardData,
                                                             &kReferenceBackwardData};
  static const std::vector<const ConvImpl*> backward_weight = {
      &kSmallGroupBackwardWeight,  &kDepthwiseBackwardWeight, &kChannelsLastBackwardWeight,
      &kGemmWindowsBackwardWeight, &kGemmTilesBackwardWeight, &kReferenceBackwardWeight};
  static const std::vector<const ConvImpl*> bias = {&kLanesBias, &kReferenceBias};
  switch (pass) {
    case ConvPass::kForward: return forward;
    case ConvPass::kBackwardData: return backward_data;
    case ConvPass::kBackwardWeight: return backward_weight;
    default: return bias;
  }
}

}  // namespace aclnn_cpu
