// The packed-GEMM tile, written once over an instruction set's vector operations. Each kit (kit.h:
// kit_*.cpp, compiled for its instruction set only) defines an ops type and instantiates MicroTile
// with its register tile (kit_generic.cpp's is the smallest, and the NEON one on aarch64).
//
// The ops type:
//   using Vec = ...;                              a vector of kLanes floats
//   static constexpr int kLanes;
//   static Vec zero(); static Vec broadcast(float x);
//   static Vec load(const float* p); static void store(float* p, Vec v);   (unaligned)
//   static Vec madd(Vec a, Vec b, Vec c);         c + a * b, fused where the set has FMA
//   static Vec add(Vec a, Vec b);                 a + b
//   static void prefetch_a(const float* p);       a hint for A's packed sliver ahead, or nothing
//   template <bool kBf16> static Vec widen(const uint16_t* p);
//                                                 kLanes FLOAT16 (kBf16: BF16) values, exactly
//   static Vec broadcast_bf16(const uint16_t* p); the BF16 value *p widened (p[-1] is readable)
//   static void store16(uint16_t* p, Vec v, bool bf16);
//                                                 kLanes results rounded once to nearest even
//                                                 (Eigen's conversions' bits, NaNs included)
//   static constexpr bool kVectorConversions;     whether those three are vector instructions
//                                                 (plans then read 16-bit operands in place)
//   static constexpr bool kBf16PairSplit;         whether BF16 rows load as pairs (below)
//   static void load_bf16_pairs(const uint16_t* p, Vec& even, Vec& odd);
//   static void from_pairs(Vec& lo, Vec& hi);    (kBf16PairSplit only) 2 * kLanes BF16 values
//                                                 widened into their even and odd columns (a shift
//                                                 and a mask: no shuffle per depth step), and the
//                                                 tile's columns put back in order from those two
//   static void widen_pairs(const uint32_t* p, Vec& even, Vec& odd);
//                                                 (the sets that run AmxFmaTiles, amx_fma_tiles.h)
//                                                 kLanes BF16 pair words' low and high halves, a
//                                                 denormal half as zero of its sign
//
// Name an x86 set's ops type after it in lower case (avx512_ops): the portability test
// (tests/check_portable.sh) finds vector code by function name.
//
// MicroTile<Ops, kMr, kV> computes an kMr x (kV * kLanes) tile of C (microkernel.h): every entry
// the blocked sum microkernel.h defines (chains of kSumBlock multiply-adds from zero, their sums
// added in order, then added to C), whichever way A and B are read and wherever the results go.
#pragma once

#include <cstdint>

#include "kernels/common/blocked_sum.h"
#include "kernels/common/keep_in_register.h"
#include "kernels/kits/microkernel.h"

namespace aclnn_cpu {

// Where a tile's B row p comes from: a packed sliver (b + p * NR), a float row read in place
// (b + rows[p]), or a FLOAT16 / BF16 row read in place and widened as it is loaded.
enum class BFrom { kPacked, kRows, kRowsHalf, kRowsBf16 };
// Where its A entry (p, i) comes from: a packed sliver (a[p * MR + i]), or row i read in place at
// base + rows[i] + columns[p], floats or BF16 values.
enum class AFrom { kPacked, kRows, kRowsBf16 };

template <typename Ops, int kMr, int kV>
struct MicroTile {
  using Vec = typename Ops::Vec;
  static constexpr int kLanes = Ops::kLanes;
  static constexpr int kNr = kV * kLanes;

  // A read in place: row i of the sliver at base + rows[i], its entry p at + columns[p].
  struct ARows {
    const void* base = nullptr;
    const int64_t* rows = nullptr;
    const int64_t* columns = nullptr;
  };
  // Where the results go: into c (row i at c + i * ldc) ...
  struct FloatStore {
    void operator()(float* c, int64_t ldc, int i, int v, Vec acc) const { Ops::store(c + i * ldc + kLanes * v, acc); }
  };
  // ... or into c plus row i's bias ...
  struct BiasStore {
    const float* bias;
    void operator()(float* c, int64_t ldc, int i, int v, Vec acc) const {
      Ops::store(c + i * ldc + kLanes * v, Ops::add(acc, Ops::broadcast(bias[i])));
    }
  };
  // ... or narrowed to 16 bits at out (row i at out + i * ld), c then only read when load_c.
  struct NarrowStore {
    uint16_t* out;
    int64_t ld;
    bool bf16;
    void operator()(float*, int64_t, int i, int v, Vec acc) const {
      Ops::store16(out + i * ld + kLanes * v, acc, bf16);
    }
  };

  // The first V vectors of columns of the tile (B slivers are kNr wide whatever V is).
  template <int V, BFrom kB, AFrom kA, typename Store = FloatStore>
  static __attribute__((always_inline)) inline void columns(int64_t kc, const float* a, const void* b, float* c,
                                                            int64_t ldc, bool load_c, const int64_t* rows = nullptr,
                                                            ARows in_place = {}, Store store = {}) {
    constexpr bool kB16 = kB == BFrom::kRowsHalf || kB == BFrom::kRowsBf16;
    constexpr bool kARows = kA != AFrom::kPacked;
    // Pairs: the accumulators hold the tile's even columns (acc[i][0]) and odd ones (acc[i][1]).
    constexpr bool kSplit = kB == BFrom::kRowsBf16 && Ops::kBf16PairSplit && V == 2;
    const float* b_floats = static_cast<const float*>(b);
    const uint16_t* b16 = static_cast<const uint16_t*>(b);
    Vec acc[kMr][V];
    Vec group[kMr][V];  // the sum of the group's chains before this one (in memory where registers run out)
    const float* a_row[kMr];
    const uint16_t* a16_row[kMr];
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      // Each row a pointer in a register of its own, so that every broadcast is one load from it plus
      // the column's offset (left to itself GCC keeps one row as base + offset, two more instructions
      // per step).
      a_row[i] = kA == AFrom::kRows ? static_cast<const float*>(in_place.base) + in_place.rows[i] : nullptr;
      a16_row[i] = kA == AFrom::kRowsBf16 ? static_cast<const uint16_t*>(in_place.base) + in_place.rows[i] : nullptr;
      if constexpr (kA == AFrom::kRows) keep_in_register(a_row[i]);
      if constexpr (kA == AFrom::kRowsBf16) keep_in_register(a16_row[i]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[i][v] = Ops::zero();
    }
    // The group's chains of kSumBlock products, each from zero; their sums added in order.
    const auto chain = [&](int64_t p0, int64_t p1) __attribute__((always_inline)) {
#pragma GCC unroll 4
      for (int64_t p = p0; p < p1; ++p, a += kARows ? 0 : kMr) {  // (a is null when A is read in place)
        if (!kARows) Ops::prefetch_a(a + 8 * kMr);
        const int64_t at = kARows ? in_place.columns[p] : 0;
        Vec bv[V];
        if constexpr (kSplit) {
          Ops::load_bf16_pairs(b16 + rows[p], bv[0], bv[1]);
        } else {
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) {
            if constexpr (kB == BFrom::kPacked) bv[v] = Ops::load(b_floats + p * kNr + kLanes * v);
            if constexpr (kB == BFrom::kRows) bv[v] = Ops::load(b_floats + rows[p] + kLanes * v);
            if constexpr (kB16) bv[v] = Ops::template widen<kB == BFrom::kRowsBf16>(b16 + rows[p] + kLanes * v);
          }
        }
#pragma GCC unroll 8
        for (int i = 0; i < kMr; ++i) {
          Vec ai;
          if constexpr (kA == AFrom::kPacked) ai = Ops::broadcast(a[i]);
          if constexpr (kA == AFrom::kRows) ai = Ops::broadcast(a_row[i][at]);
          if constexpr (kA == AFrom::kRowsBf16) ai = Ops::broadcast_bf16(a16_row[i] + at);
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) acc[i][v] = Ops::madd(ai, bv[v], acc[i][v]);
        }
      }
    };
    // The first chain; then, where the group holds more, its sum kept while the others are summed,
    // each chain's sum added to it in turn.
    if (kc <= kSumBlock) {
      chain(0, kc);
    } else {
      chain(0, kSumBlock);
#pragma GCC unroll 8
      for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) group[i][v] = acc[i][v], acc[i][v] = Ops::zero();
      }
      for (int64_t p0 = kSumBlock; p0 < kc; p0 += kSumBlock) {
        const int64_t p1 = p0 + kSumBlock < kc ? p0 + kSumBlock : kc;
        chain(p0, p1);
#pragma GCC unroll 8
        for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) {
            acc[i][v] = Ops::add(group[i][v], acc[i][v]);
            if (p1 < kc) group[i][v] = acc[i][v], acc[i][v] = Ops::zero();
          }
        }
      }
    }
    // The group's sum, added to C's.
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      if constexpr (kSplit) Ops::from_pairs(acc[i][0], acc[i][1]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) {
        if (load_c) acc[i][v] = Ops::add(Ops::load(c + i * ldc + kLanes * v), acc[i][v]);
        store(c, ldc, i, v, acc[i][v]);
      }
    }
  }

  // The MicroKernel slots (microkernel.h), every one from this tile.
  static void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
    columns<kV, BFrom::kPacked, AFrom::kPacked>(kc, a, b, c, ldc, load_c);
  }
  static void run_half(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c) {
    static_assert(kV % 2 == 0, "a half tile is whole vectors");
    columns<kV / 2, BFrom::kPacked, AFrom::kPacked>(kc, a, b, c, ldc, load_c);
  }
  static void run_rows(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c, int64_t ldc,
                       bool load_c, const float* bias) {
    if (bias != nullptr)
      return columns<kV, BFrom::kRows, AFrom::kPacked>(kc, a, b_base, c, ldc, load_c, b_rows, {}, BiasStore{bias});
    columns<kV, BFrom::kRows, AFrom::kPacked>(kc, a, b_base, c, ldc, load_c, b_rows);
  }
  static void run_rows_half(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, float* c,
                            int64_t ldc, bool load_c, const float* bias) {
    if (bias != nullptr)
      return columns<kV / 2, BFrom::kRows, AFrom::kPacked>(kc, a, b_base, c, ldc, load_c, b_rows, {}, BiasStore{bias});
    columns<kV / 2, BFrom::kRows, AFrom::kPacked>(kc, a, b_base, c, ldc, load_c, b_rows);
  }
  static void run_a_rows(int64_t kc, const float* a_base, const int64_t* a_rows, const int64_t* a_columns,
                         const float* b, float* c, int64_t ldc, bool load_c) {
    columns<kV, BFrom::kPacked, AFrom::kRows>(kc, nullptr, b, c, ldc, load_c, nullptr,
                                              ARows{a_base, a_rows, a_columns});
  }
  static void run_a_rows_bf16(int64_t kc, const uint16_t* a_base, const int64_t* a_rows, const int64_t* a_columns,
                              const float* b, float* c, int64_t ldc, bool load_c) {
    columns<kV, BFrom::kPacked, AFrom::kRowsBf16>(kc, nullptr, b, c, ldc, load_c, nullptr,
                                                  ARows{a_base, a_rows, a_columns});
  }
  // (c is only read by the narrowing slots: with load_c, the earlier depth blocks' sums)
  static void run_narrow(int64_t kc, const float* a, const float* b, const float* c, int64_t ldc, bool load_c,
                         uint16_t* out, int64_t ldo, bool bf16) {
    columns<kV, BFrom::kPacked, AFrom::kPacked>(kc, a, b, const_cast<float*>(c), ldc, load_c, nullptr, {},
                                                NarrowStore{out, ldo, bf16});
  }
  static void run_rows_narrow(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, const float* c,
                              int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool bf16) {
    columns<kV, BFrom::kRows, AFrom::kPacked>(kc, a, b_base, const_cast<float*>(c), ldc, load_c, b_rows, {},
                                              NarrowStore{out, ldo, bf16});
  }
  static void run_rows_16bit(int64_t kc, const float* a, const uint16_t* b_base, const int64_t* b_rows, bool b_bf16,
                             float* c, int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool out_bf16) {
    if (b_bf16) return rows_16bit<BFrom::kRowsBf16>(kc, a, b_base, b_rows, c, ldc, load_c, out, ldo, out_bf16);
    rows_16bit<BFrom::kRowsHalf>(kc, a, b_base, b_rows, c, ldc, load_c, out, ldo, out_bf16);
  }

  // A MicroKernel with every slot from this tile and the given packers (slots assigned by name).
  static constexpr MicroKernel kernel(Isa isa, Interleave interleave_mr, Interleave interleave_nr) {
    MicroKernel k{};
    k.isa = isa;
    k.mr = kMr;
    k.nr = kNr;
    k.vector_conversions = Ops::kVectorConversions;
    k.run = run;
    k.run_half = run_half;
    k.interleave_mr = interleave_mr;
    k.interleave_nr = interleave_nr;
    k.run_rows = run_rows;
    k.run_rows_half = run_rows_half;
    k.run_a_rows = run_a_rows;
    k.run_rows_narrow = run_rows_narrow;
    k.run_rows_16bit = run_rows_16bit;
    k.run_a_rows_bf16 = run_a_rows_bf16;
    k.run_narrow = run_narrow;
    return k;
  }

 private:
  template <BFrom kB>
  static void rows_16bit(int64_t kc, const float* a, const uint16_t* b_base, const int64_t* b_rows, float* c,
                         int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool out_bf16) {
    if (out == nullptr) return columns<kV, kB, AFrom::kPacked>(kc, a, b_base, c, ldc, load_c, b_rows);
    columns<kV, kB, AFrom::kPacked>(kc, a, b_base, c, ldc, load_c, b_rows, {}, NarrowStore{out, ldo, out_bf16});
  }
};

}  // namespace aclnn_cpu
