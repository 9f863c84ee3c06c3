// The quantized convolution's integer tile (kernels/quant/direct_s8.cpp), one per instruction set. Its
// operands are INT8 values widened to int16 and paired along the input channels: the source is a padded
// channels-last copy of x (each position's channels contiguous, in pairs), the weights a block of 16
// output channels packed per kernel point and channel pair as [point][pair][16 channels][2]; the pairs
// meet in a pairwise multiply-add (x86's PMADDWD; VNNI's VPDPWSSD takes the same layout). The products
// are exact and the sums are int32 modulo 2^32, so every set gives the same sums in any order.
// Where the CPU has VNNI (CpuFeatures::int8_dot) the byte tile takes the channels in quads instead: the
// source a channels-last copy of x + 128 as bytes (u8), the weights INT8 as [point][quad][16 channels][4],
// four u8 x s8 products a lane per VPDPBUSD, summed from -128 * (the channel's weight sum), so the sums
// are the same.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

constexpr int kQuantTileChannels = 16;    // output channels per tile (the weights' block)
constexpr int kQuantTilePositions = 6;    // output positions per tile
constexpr int kQuantFinishPositions = 8;  // output positions per finish

// A block of 16 output channels' float steps (kernels/core/quant_problem.h), read once at phase 2.
struct QuantChannelBlock {
  float scale[kQuantTileChannels];
  float bias[kQuantTileChannels];        // a float bias (0 with an INT32 one)
  int32_t int_bias[kQuantTileChannels];  // an INT32 bias (0 with a float one)
  int32_t start[kQuantTileChannels];     // the byte tile's sums' start: -128 * the weight sum (mod 2^32)
  bool integer_bias;
};

struct QuantKernels {
  // acc[j * kQuantTileChannels + r] (+)= sum_{t < points, q < pairs} weights[t][q][r] . sources[j][offsets[t] + 2q]
  // (modulo 2^32; added to acc's values where `accumulate`, else written) for positions
  // j < kQuantTilePositions and channels r < kQuantTileChannels, where weights[t][q][r] is the int16 pair at
  // weights + 2 * ((t * pairs + q) * kQuantTileChannels + r) and sources[j][i] the int16 pair at sources[j] + i.
  void (*tile)(const int16_t* weights, int64_t points, int64_t pairs, const int16_t* const* sources,
               const int64_t* offsets, bool accumulate, int32_t* acc);
  // out[r * channel_stride + j] = round16_bits(the float steps of acc[j * kQuantTileChannels + r] for channel
  // r) (kernels/core/quant_problem.h) for channels r < rows (at most kQuantTileChannels) and positions
  // j < positions (at most kQuantFinishPositions; acc's rows past them are not read): BF16 where `bf16`,
  // FLOAT16 otherwise, each channel's positions side by side. Each step rounded to nearest even, none fused
  // (the kits' files are compiled without contraction).
  void (*finish)(const int32_t* acc, int positions, const QuantChannelBlock& channels, bool bf16, int rows,
                 uint16_t* out, int64_t channel_stride);
  // acc[b * acc_stride + j * kQuantTileChannels + r] +=
  //     sum_{t < points, q < quads, i < 4} weights[b * block_stride + 4 * ((t * quads + q) * kQuantTileChannels + r) +
  //     i]
  //                                        * sources[j][offsets[t] + 4q + i]
  // (modulo 2^32) for channel blocks b < blocks, positions j < kQuantTilePositions and channels
  // r < kQuantTileChannels, the sources u8, the weights s8. Null where the set has no byte products; taken
  // only where the CPU has them (int8_dot).
  void (*byte_tile)(const int8_t* weights, int64_t block_stride, int blocks, int64_t points, int64_t quads,
                    const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride, int32_t* acc);
};

extern const QuantKernels kQuantKernelsGeneric;  // quant_kernels_generic.cpp: the loops as written
#ifdef ACLNN_HAVE_X86_KERNELS
// quant_kernels_avx2.cpp (-mavx2): PMADDWD, 8 channels a register, each position's pair broadcast;
// the byte tile on AVX-VNNI (quant_kernels_avx_vnni.cpp)
extern const QuantKernels kQuantKernelsAvx2;
// The AVX2 tile, the float steps on AVX-512 and the byte tile on AVX512_VNNI (quant_kernels_avx512_vnni.cpp)
extern const QuantKernels kQuantKernelsAvx512;
// The AVX2 pair tile and float steps (quant_kernels_avx2.cpp), which the AVX-512 kit takes too.
void quant_tile_avx2(const int16_t* weights, int64_t points, int64_t pairs, const int16_t* const* sources,
                     const int64_t* offsets, bool accumulate, int32_t* acc);
void quant_finish_avx2(const int32_t* acc, int positions, const QuantChannelBlock& channels, bool bf16, int rows,
                       uint16_t* out, int64_t channel_stride);
// The float steps on AVX-512 (quant_finish_avx512.cpp), 16 channels a register
void quant_finish_avx512(const int32_t* acc, int positions, const QuantChannelBlock& channels, bool bf16, int rows,
                         uint16_t* out, int64_t channel_stride);
// The byte tiles (quant_byte_tile_impl.h): AVX-VNNI's (a block a pass), AVX512_VNNI's (two blocks a pass)
void quant_byte_tile_avx_vnni(const int8_t* weights, int64_t block_stride, int blocks, int64_t points, int64_t quads,
                              const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride, int32_t* acc);
void quant_byte_tile_avx512_vnni(const int8_t* weights, int64_t block_stride, int blocks, int64_t points, int64_t quads,
                                 const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride,
                                 int32_t* acc);
#endif

}  // namespace aclnn_cpu
