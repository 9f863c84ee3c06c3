// The winograd transforms (transforms_impl.h) compiled for AVX-512F (called only where the CPU has it).
#include "kernels/winograd/transforms.h"

namespace aclnn_cpu {
namespace {

struct winograd_avx512 {};
#include "kernels/winograd/transforms_impl.h"

}  // namespace

extern const WinogradTransforms kWinogradTransformsAvx512 = transforms_of<winograd_avx512>();

}  // namespace aclnn_cpu
