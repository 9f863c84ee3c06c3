// The packed-GEMM tile, written once over an instruction set's vector operations. Each micro-kernel
// file (microkernel_*.cpp, compiled for its instruction set only) defines an ops type and
// instantiates MicroTile with its register tile; adding an instruction set is one ops type and
// one such instantiation (microkernel_generic.cpp is the smallest, and the NEON one on aarch64).
//
// The ops type:
//   using Vec = ...;                              a vector of kLanes floats
//   static constexpr int kLanes;
//   static Vec zero(); static Vec broadcast(float x);
//   static Vec load(const float* p); static void store(float* p, Vec v);   (unaligned)
//   static Vec madd(Vec a, Vec b, Vec c);         c + a * b, fused where the set has FMA
//   static void prefetch_a(const float* p);       a hint for A's packed sliver ahead, or nothing
//
// Name an x86 set's ops type after it in lower case (avx512_ops): the portability test
// (tests/check_portable.sh) finds vector code by function name.
//
// MicroTile<Ops, kMr, kV> computes an kMr x (kV * kLanes) tile of C (microkernel.h): every entry
// one chain of multiply-adds in depth order from 0 or from C, whichever way A and B are read.
#pragma once

#include <cstdint>

#include "kernels/gemm/microkernel.h"

namespace aclnn_cpu {

template <typename Ops, int kMr, int kV>
struct MicroTile {
  using Vec = typename Ops::Vec;
  static constexpr int kNr = kV * Ops::kLanes;

  // A read in place (run_a_rows): row i of the sliver at base + rows[i], its entry p at + columns[p].
  struct ARows {
    const float* base = nullptr;
    const int64_t* rows = nullptr;
    const int64_t* columns = nullptr;
  };
  // Where the results go: into c (row i at c + i * ldc), or, given `narrow`, through
  // narrow(i, v, acc) (vector v of row i), c then only read when load_c.
  struct FloatStore {
    void operator()(float* c, int64_t ldc, int i, int v, Vec acc) const {
      Ops::store(c + i * ldc + Ops::kLanes * v, acc);
    }
  };

  // The first V vectors of columns of the tile (B slivers are kNr wide whatever V is). B row p at
  // b + p * kNr, or, with kRows, at b + rows[p] (read in place); A entry (p, i) at a[p * kMr + i], or,
  // with kARows, read in place through `in_place`.
  template <int V, bool kRows, bool kARows, typename Store = FloatStore>
  static __attribute__((always_inline)) inline void columns(int64_t kc, const float* a, const float* b, float* c,
                                                            int64_t ldc, bool load_c, const int64_t* rows = nullptr,
                                                            ARows in_place = {}, Store store = {}) {
    Vec acc[kMr][V];
    const float* a_row[kMr];
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      a_row[i] = kARows ? in_place.base + in_place.rows[i] : nullptr;
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[i][v] = load_c ? Ops::load(c + i * ldc + Ops::kLanes * v) : Ops::zero();
    }
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p, a += kARows ? 0 : kMr) {  // (a is null when A is read in place)
      if (!kARows) Ops::prefetch_a(a + 8 * kMr);
      const int64_t at = kARows ? in_place.columns[p] : 0;
      const float* row = kRows ? b + rows[p] : b + p * kNr;
      Vec bv[V];
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) bv[v] = Ops::load(row + Ops::kLanes * v);
#pragma GCC unroll 8
      for (int i = 0; i < kMr; ++i) {
        const Vec ai = Ops::broadcast(kARows ? a_row[i][at] : a[i]);
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) acc[i][v] = Ops::madd(ai, bv[v], acc[i][v]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) store(c, ldc, i, v, acc[i][v]);
    }
  }

  // The MicroKernel slots this tile fills (microkernel.h).
  static void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
    columns<kV, false, false>(kc, a, b, c, ldc, load_c);
  }
  static void run_half(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
    static_assert(kV % 2 == 0, "a half tile is whole vectors");
    columns<kV / 2, false, false>(kc, a, b, c, ldc, load_c);
  }
  static void run_rows(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                       bool load_c) {
    columns<kV, true, false>(kc, a, b_base, c, ldc, load_c, b_rows);
  }
  static void run_rows_half(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c,
                            int64_t ldc, bool load_c) {
    columns<kV / 2, true, false>(kc, a, b_base, c, ldc, load_c, b_rows);
  }
  static void run_a_rows(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns,
                         const float* b, float* c, int64_t ldc, bool load_c) {
    columns<kV, false, true>(kc, nullptr, b, c, ldc, load_c, nullptr, ARows{a_base, a_rows, a_columns});
  }

  // A MicroKernel with the float slots every instruction set has: run, run_half, run_rows,
  // run_rows_half and run_a_rows (the instruction set's file adds its own packers and narrowing).
  static constexpr MicroKernel float_kernel(Isa isa) {
    MicroKernel kernel{isa, kMr, kNr, run};
    kernel.run_half = run_half;
    kernel.run_rows = run_rows;
    kernel.run_rows_half = run_rows_half;
    kernel.run_a_rows = run_a_rows;
    return kernel;
  }
};

}  // namespace aclnn_cpu
