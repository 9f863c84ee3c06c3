// The winograd transforms (transforms_impl.h) compiled for AVX2 (called only where the CPU has it).
#include "kernels/winograd/transforms.h"

namespace aclnn_cpu {
namespace {

struct winograd_avx2 {};
#include "kernels/winograd/transforms_impl.h"

}  // namespace

extern const WinogradTransforms kWinogradTransformsAvx2 = transforms_of<winograd_avx2>();

}  // namespace aclnn_cpu
