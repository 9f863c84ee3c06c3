// The winograd transforms (transforms_impl.h) compiled for the baseline instruction set (SSE2 on x86-64, NEON on
// aarch64).
#include "kernels/winograd/transforms.h"

namespace aclnn_cpu {
namespace {

struct winograd_generic {};
#include "kernels/winograd/transforms_impl.h"

}  // namespace

extern const WinogradTransforms kWinogradTransformsGeneric = transforms_of<winograd_generic>();
#ifdef ACLNN_HAVE_X86_KERNELS
extern const WinogradTransforms kWinogradTransformsAvx2;    // transforms_avx2.cpp (-mavx2)
extern const WinogradTransforms kWinogradTransformsAvx512;  // transforms_avx512.cpp (-mavx512f)
#endif

const WinogradTransforms& winograd_transforms(Isa isa) {
#ifdef ACLNN_HAVE_X86_KERNELS
  if (isa == Isa::kAvx512) return kWinogradTransformsAvx512;
  if (isa == Isa::kAvx2) return kWinogradTransformsAvx2;
#endif
  (void)isa;
  return kWinogradTransformsGeneric;
}

}  // namespace aclnn_cpu
