// The tile operations (amx_tiles.h) on an instruction set's float FMAs, exactly as TDPBF16PS computes
// (amx.h), for CPUs with neither AMX nor AVX512_BF16: written once over a micro-kernel ops type
// (microkernel_tile.h) and instantiated in that set's micro-kernel file (AVX-512F, AVX2+FMA,
// aarch64 NEON). A BF16 x BF16 product is exact in float, so each step of a chain is one FMA on the
// widened halves of the pairs (a denormal half widened as zero); the flush mode (x86: MXCSR's FTZ;
// aarch64: FPCR's FZ) flushes tiny results as the tiles do. aarch64 finds a result tiny before
// rounding, x86 (and AMX) after, and its FZ also takes a denormal C read back as zero (the loops'
// callers accumulate only onto sums of their own, never denormal): the two differ only where a
// partial sum's exact value lies within half a unit of its last place below FLT_MIN (2^-126).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/amx/amx.h"
#include "kernels/amx/amx_tiles.h"

namespace aclnn_cpu {

// A chunk's pairs widened per product into even and odd floats; per group of kRows rows and strip of
// kStrip vectors of columns, an even and an odd accumulator each, then even + odd added to C where it
// lies.
template <typename Ops, int kRows, int kStrip>
struct AmxFmaTiles : AmxTilesAsStaged, AmxCInPlace {
  using Vec = typename Ops::Vec;
  static constexpr int kLanes = Ops::kLanes, kStripColumns = kStrip * kLanes;
  static_assert(kAmxBlock % kRows == 0 && kAmxBlock % kStripColumns == 0, "whole groups and strips");
  static constexpr int64_t kPassChunks = 8;  // (B widened per product, wherever it lies)

  alignas(64) float a_even[kAmxBlock][kAmxPairs], a_odd[kAmxBlock][kAmxPairs];
  alignas(64) float b_even[kAmxPairs][kAmxBlock], b_odd[kAmxPairs][kAmxBlock];
  AmxFlushMode mode;

  // A BF16 value (the high 16 bits of `bits`, the low ones zero), a denormal one as zero of its sign.
  static float input(uint32_t bits) {
    const uint32_t value = (bits & 0x7F800000u) == 0 ? bits & 0x80000000u : bits;
    float f;
    std::memcpy(&f, &value, sizeof f);
    return f;
  }
  static float even_half(uint32_t word) { return input(word << 16); }
  static float odd_half(uint32_t word) { return input(word & 0xFFFF0000u); }

  void load_ab(const void* a0, const void* a1, int64_t a_stride, const void* b0, const void* b1, int64_t b_stride,
               bool /*b_prepared*/) {
    for (int64_t i = 0; i < kAmxBlock; ++i) {
      const auto* row =
          reinterpret_cast<const uint32_t*>(static_cast<const char*>(i < kAmxRows ? a0 : a1) + i % kAmxRows * a_stride);
      for (int64_t k = 0; k < kAmxPairs; ++k) a_even[i][k] = even_half(row[k]), a_odd[i][k] = odd_half(row[k]);
    }
    for (int64_t k = 0; k < kAmxPairs; ++k) {
      for (int64_t half = 0; half < 2; ++half) {
        const auto* row =
            reinterpret_cast<const uint32_t*>(static_cast<const char*>(half == 0 ? b0 : b1) + k * b_stride);
        for (int64_t j = 0; j < kAmxBlock / 2; ++j) {
          b_even[k][16 * half + j] = even_half(row[j]), b_odd[k][16 * half + j] = odd_half(row[j]);
        }
      }
    }
  }
  void dot() {
    c_fresh ? rows<true>() : rows<false>();
    c_fresh = false;
  }
  template <bool kFresh>
  void rows() {
    for (int64_t i0 = 0; i0 < kAmxBlock; i0 += kRows) {
      for (int64_t j0 = 0; j0 < kAmxBlock; j0 += kStripColumns) {
        Vec even[kRows][kStrip], odd[kRows][kStrip];
        for (int r = 0; r < kRows; ++r)
          for (int v = 0; v < kStrip; ++v) even[r][v] = odd[r][v] = Ops::zero();
        for (int k = 0; k < kAmxPairs; ++k) {
          Vec b_e[kStrip], b_o[kStrip];
          for (int v = 0; v < kStrip; ++v) {
            b_e[v] = Ops::load(&b_even[k][j0 + v * kLanes]), b_o[v] = Ops::load(&b_odd[k][j0 + v * kLanes]);
          }
          for (int r = 0; r < kRows; ++r) {
            const Vec a_e = Ops::broadcast(a_even[i0 + r][k]), a_o = Ops::broadcast(a_odd[i0 + r][k]);
            for (int v = 0; v < kStrip; ++v) {
              even[r][v] = Ops::madd(a_e, b_e[v], even[r][v]);
              odd[r][v] = Ops::madd(a_o, b_o[v], odd[r][v]);
            }
          }
        }
        for (int r = 0; r < kRows; ++r) {
          float* entry = c_row(i0 + r) + j0;
          for (int v = 0; v < kStrip; ++v) {
            // (a fresh entry is +0 + the sum: a sum of -0 gives +0, as the tiles' zeroed C does)
            const Vec before = kFresh ? Ops::zero() : Ops::load(entry + v * kLanes);
            Ops::store(entry + v * kLanes, Ops::add(before, Ops::add(even[r][v], odd[r][v])));
          }
        }
      }
    }
  }
};

}  // namespace aclnn_cpu
