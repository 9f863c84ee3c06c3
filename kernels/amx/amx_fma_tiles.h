// The tile operations (amx_tiles.h) on an instruction set's float FMAs, exactly as TDPBF16PS computes
// (amx.h), for CPUs with neither AMX nor AVX512_BF16: written once over a micro-kernel ops type
// (microkernel_tile.h) and instantiated in that set's kit (kernels/kits/kit_*.cpp: AVX-512F, AVX2+FMA,
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

// A chunk's pairs widened into even and odd floats (the ops type's widen_pairs: kLanes pair words into
// their even and odd halves, a denormal half as zero of its sign) and kept, up to kPassChunks of A and
// of B, while the staging they came from lasts (prepare_a / prepare_b forget them): amx_pair_a_rows'
// staged A over a pass's blocks of columns, amx_pair_rows' staged B over a pass's blocks of rows (its
// packed A only where one pass has a single block of rows); B read in place or staged without
// prepare_b is widened per product. Per group of kRows rows and strip of kStrip vectors of columns, an
// even and an odd accumulator each, then even + odd added to C where it lies. (The object holds 18
// widened chunks, about 75 KB: on the stack of the thread that runs the loops.)
template <typename Ops, int kRows, int kStrip>
struct AmxFmaTiles : AmxTilesAsStaged, AmxCInPlace {
  using Vec = typename Ops::Vec;
  static constexpr int kLanes = Ops::kLanes, kStripColumns = kStrip * kLanes;
  static_assert(kAmxBlock % kRows == 0 && kAmxBlock % kStripColumns == 0 && 16 % kLanes == 0,
                "whole groups and strips");
  static constexpr int64_t kPassChunks = 8;  // (a pass's widened chunks of B: 33 KB, in L1 or L2)

  // A chunk of A (32 rows x 16 pairs) or of B (16 pair rows x 32 columns) widened; `at` names the
  // first row of the staged chunk it holds (null: none, or one widened for a single product).
  struct Widened {
    const void* at = nullptr;
    alignas(64) float even[kAmxBlock * kAmxPairs], odd[kAmxBlock * kAmxPairs];
  };
  // A pass's chunks, round robin, and (the last one) B of one product.
  struct Chunks {
    Widened chunk[kPassChunks + 1];
    int64_t next = 0;
    void forget() {
      for (Widened& w : chunk) w.at = nullptr;
    }
    // The chunk that holds `at` widened (`widened`: it is there already), else the next one to fill.
    Widened& find(const void* at, bool kept, bool* widened) {
      for (int64_t q = 0; q < kPassChunks && kept; ++q) {
        if (chunk[q].at == at) return *widened = true, chunk[q];
      }
      Widened& w = kept ? chunk[next++ % kPassChunks] : chunk[kPassChunks];
      w.at = kept ? at : nullptr;
      return *widened = false, w;
    }
  };
  Chunks a_chunks, b_chunks;
  const Widened* a = nullptr;  // load_ab's A: even[i * 16 + k] (row i, pair k)
  const Widened* b = nullptr;  // load_ab's B: even[k * 32 + j] (pair row k, column j)
  AmxFlushMode mode;

  // A or B was staged again: no widened chunk holds it any more.
  void prepare_a(uint32_t*) { a_chunks.forget(); }
  void prepare_b(uint32_t*, int64_t) { b_chunks.forget(); }
  void load_ab(const void* a0, const void* a1, int64_t a_stride, const void* b0, const void* b1, int64_t b_stride,
               bool b_prepared) {
    // (a0 names a chunk of A: its other tile and its rows' spacing come with it; b0 a staged chunk of B)
    bool widened = false;
    Widened& wa = a_chunks.find(a0, true, &widened);
    for (int64_t i = 0; i < kAmxBlock && !widened; ++i) {
      const auto* row =
          reinterpret_cast<const uint32_t*>(static_cast<const char*>(i < kAmxRows ? a0 : a1) + i % kAmxRows * a_stride);
      widen(row, wa.even + i * kAmxPairs, wa.odd + i * kAmxPairs);
    }
    a = &wa;
    Widened& wb = b_chunks.find(b0, b_prepared, &widened);
    for (int64_t k = 0; k < kAmxPairs && !widened; ++k) {
      for (int64_t half = 0; half < 2; ++half) {
        const auto* row =
            reinterpret_cast<const uint32_t*>(static_cast<const char*>(half == 0 ? b0 : b1) + k * b_stride);
        widen(row, wb.even + k * kAmxBlock + 16 * half, wb.odd + k * kAmxBlock + 16 * half);
      }
    }
    b = &wb;
  }
  // 16 pairs' even and odd halves as floats (Ops::widen_pairs: a denormal half as zero of its sign).
  static void widen(const uint32_t* pairs, float* even, float* odd) {
    for (int64_t k = 0; k < 16; k += kLanes) {
      Vec e, o;
      Ops::widen_pairs(pairs + k, e, o);
      Ops::store(even + k, e), Ops::store(odd + k, o);
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
            b_e[v] = Ops::load(b->even + k * kAmxBlock + j0 + v * kLanes);
            b_o[v] = Ops::load(b->odd + k * kAmxBlock + j0 + v * kLanes);
          }
          for (int r = 0; r < kRows; ++r) {
            const Vec a_e = Ops::broadcast(a->even[(i0 + r) * kAmxPairs + k]);
            const Vec a_o = Ops::broadcast(a->odd[(i0 + r) * kAmxPairs + k]);
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
