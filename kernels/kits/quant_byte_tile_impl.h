// The quantized convolution's byte tile (kernels/kits/quant_kernels.h, QuantKernels::byte_tile) on VNNI's
// VPDPBUSD, for one instruction set's vector type: each register lane is one output channel, and one
// VPDPBUSD adds the four u8 x s8 products of a channel quad to it in int32 (exact, then wrapped modulo
// 2^32 as every other path wraps). Each position's source quad is broadcast to every lane and meets the
// weights of Ops::kBlocks blocks of 16 channels at once (16 / Ops::kLanes registers a block): one
// broadcast feeds several products, which VPDPBUSD's rate needs (a broadcast per product halves it).
//   Ops: vector type `V`, kLanes (int32 lanes), kBlocks (channel blocks a pass takes), load(const int32_t*),
//        store(int32_t*, V), broadcast(const uint8_t* quad) and dot(V acc, V u8_quads, V s8_quads).
#pragma once

#include <cstdint>

#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {

// acc[b * acc_stride + j * 16 + r] += the products of block b's weights (weights + b * block_stride) for
// b < kBlocks and the tile's positions j < kQuantTilePositions (modulo 2^32).
template <class Ops, int kBlocks>
void byte_tile_blocks(const int8_t* weights, int64_t block_stride, int64_t points, int64_t quads,
                      const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride, int32_t* acc) {
  using V = typename Ops::V;
  constexpr int kRegs = kQuantTileChannels / Ops::kLanes;  // registers a block
  constexpr int kPositions = kQuantTilePositions;
  V sums[kPositions][kBlocks * kRegs];
  for (int j = 0; j < kPositions; ++j) {
    for (int b = 0; b < kBlocks; ++b) {
      for (int h = 0; h < kRegs; ++h) {
        sums[j][b * kRegs + h] = Ops::load(acc + b * acc_stride + j * kQuantTileChannels + h * Ops::kLanes);
      }
    }
  }
  const int8_t* w = weights;
  for (int64_t t = 0; t < points; ++t) {
    const uint8_t* s[kPositions];
    for (int j = 0; j < kPositions; ++j) s[j] = sources[j] + offsets[t];
    for (int64_t q = 0; q < quads; ++q, w += 4 * kQuantTileChannels) {
      V quad_weights[kBlocks * kRegs];
      for (int b = 0; b < kBlocks; ++b) {
        for (int h = 0; h < kRegs; ++h) {
          quad_weights[b * kRegs + h] =
              Ops::load(reinterpret_cast<const int32_t*>(w + b * block_stride) + h * Ops::kLanes);
        }
      }
      for (int j = 0; j < kPositions; ++j) {
        const V x = Ops::broadcast(s[j] + 4 * q);
        for (int i = 0; i < kBlocks * kRegs; ++i) sums[j][i] = Ops::dot(sums[j][i], x, quad_weights[i]);
      }
    }
  }
  for (int j = 0; j < kPositions; ++j) {
    for (int b = 0; b < kBlocks; ++b) {
      for (int h = 0; h < kRegs; ++h) {
        Ops::store(acc + b * acc_stride + j * kQuantTileChannels + h * Ops::kLanes, sums[j][b * kRegs + h]);
      }
    }
  }
}

// QuantKernels::byte_tile: the blocks Ops::kBlocks at a time, a last odd one alone.
template <class Ops>
void byte_tile(const int8_t* weights, int64_t block_stride, int blocks, int64_t points, int64_t quads,
               const uint8_t* const* sources, const int64_t* offsets, int64_t acc_stride, int32_t* acc) {
  int b = 0;
  for (; b + Ops::kBlocks <= blocks; b += Ops::kBlocks) {
    byte_tile_blocks<Ops, Ops::kBlocks>(weights + b * block_stride, block_stride, points, quads, sources, offsets,
                                        acc_stride, acc + b * acc_stride);
  }
  for (; b < blocks; ++b) {
    byte_tile_blocks<Ops, 1>(weights + b * block_stride, block_stride, points, quads, sources, offsets, acc_stride,
                             acc + b * acc_stride);
  }
}

}  // namespace aclnn_cpu
