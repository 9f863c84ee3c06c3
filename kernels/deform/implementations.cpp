// The deformable convolution's ordered lists, one per pass: the first entry whose supports() accepts
// the problem computes it (ACLNN_CONVBWD_KERNELS may name entries to ask first); the double-precision
// reference is last and supports everything.
#include "kernels/deform/deform_entries.h"
#include "kernels/deform/deform_plan.h"
#include "kernels/ref/deform_ref.h"

namespace aclnn_cpu {

const std::vector<const DeformImpl*>& deformable_implementations(DeformPass pass) {
  static const std::vector<const DeformImpl*> kForward = {&kDeformGemmForward, &kDeformRefForward};
  static const std::vector<const DeformImpl*> kBackwardData = {&kDeformGemmBackwardData, &kDeformRefBackwardData};
  static const std::vector<const DeformImpl*> kBackwardWeight = {&kDeformGemmBackwardWeight, &kDeformRefBackwardWeight};
  static const std::vector<const DeformImpl*> kBias = {&kDeformLanesBias, &kDeformRefBias};
  switch (pass) {
    case DeformPass::kForward: return kForward;
    case DeformPass::kBackwardData: return kBackwardData;
    case DeformPass::kBackwardWeight: return kBackwardWeight;
    default: return kBias;
  }
}

}  // namespace aclnn_cpu
