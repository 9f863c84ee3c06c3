// The quantized convolution's integer tile (kernels/quant/direct_s8.cpp), one per instruction set. Its
// operands are INT8 values widened to int16 and paired along the input channels: the source is a padded
// channels-last copy of x (each position's channels contiguous, in pairs), the weights a block of 16
// output channels packed per kernel point and channel pair as [point][pair][16 channels][2]; the pairs
// meet in a pairwise multiply-add (x86's PMADDWD; VNNI's VPDPWSSD takes the same layout). The products
// are exact and the sums are int32 modulo 2^32, so every set gives the same sums in any order.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

constexpr int kQuantTileChannels = 16;  // output channels per tile (the weights' block)
constexpr int kQuantTilePositions = 6;  // output positions per tile

// A block of 16 output channels' float steps (kernels/core/quant_problem.h), read once at phase 2.
struct QuantChannelBlock {
  float scale[kQuantTileChannels];
  float bias[kQuantTileChannels];        // a float bias (0 with an INT32 one)
  int32_t int_bias[kQuantTileChannels];  // an INT32 bias (0 with a float one)
  bool integer_bias;
};

struct QuantKernels {
  // acc[j * kQuantTileChannels + r] (+)= sum_{t < points, q < pairs} weights[t][q][r] . sources[j][offsets[t] + 2q]
  // (modulo 2^32; added to acc's values where `accumulate`, else written) for positions
  // j < kQuantTilePositions and channels r < kQuantTileChannels, where weights[t][q][r] is the int16 pair at
  // weights + 2 * ((t * pairs + q) * kQuantTileChannels + r) and sources[j][i] the int16 pair at sources[j] + i.
  void (*tile)(const int16_t* weights, int64_t points, int64_t pairs, const int16_t* const* sources,
               const int64_t* offsets, bool accumulate, int32_t* acc);
  // bits[i] = round16_bits(the float steps of acc[i] for channel i % 16) (kernels/core/quant_problem.h) for
  // i < kQuantTilePositions * kQuantTileChannels: BF16 where `bf16`, FLOAT16 otherwise. Each step rounded
  // to nearest even, none fused (the kits' files are compiled without contraction).
  void (*finish)(const int32_t* acc, const QuantChannelBlock& channels, bool bf16, uint16_t* bits);
};

extern const QuantKernels kQuantKernelsGeneric;  // quant_kernels_generic.cpp: the loops as written
#ifdef ACLNN_HAVE_X86_KERNELS
// quant_kernels_avx2.cpp (-mavx2): PMADDWD, 8 channels a register, each position's pair broadcast
extern const QuantKernels kQuantKernelsAvx2;
#endif

}  // namespace aclnn_cpu
