// The loops of amx_pair_rows (amx.h), written once over a tile-operations type that holds a 32 x 32
// block of C in tiles 0-3 (rows 0-15 | 16-31 x columns 0-15 | 16-31), two tiles of A in 4-5 (rows
// 0-15, 16-31: 16 pairs each) and two of B in 6-7 (16 pair rows x columns 0-15, 16-31):
//   Tiles() / ~Tiles()    configure the 8 tiles (16 rows x 64 bytes) / release them
//   void begin_c(float* c, int64_t ldc_bytes, bool load);   C = the block at c, rows ldc_bytes apart
//                         (load), or zero
//   static constexpr int64_t kPassChunks;   chunks of the depth a pass over a block of C takes before
//                         the next block (the rest of the depth follows in later passes, C reloaded)
//   static constexpr bool kLoadsBInPlace;   whether evenly spaced pair rows of B are read in place
//                         rather than staged (and prepared)
//   void prepare_a(uint32_t* tile);      a staged tile of A (16 rows of 16 pairs, 64 bytes apart) and
//   void prepare_b(uint32_t* rows, int64_t stride);   a staged chunk of B (16 pair rows of 32 columns,
//                         `stride` bytes apart) rewritten in place into the form the implementation
//                         multiplies (the CPU's tiles and the emulation: as they are), once per staging
//                         (an implementation that keeps its own copies of staged chunks forgets them
//                         there); A packed by pack_amx_left for the implementation is in that form too
//   void load_ab(const void* a0, const void* a1, int64_t a_stride, const void* b0, const void* b1,
//                int64_t b_stride, bool b_prepared);
//                         16 rows of 64 bytes each, `stride` bytes apart; A always prepared, B where
//                         `b_prepared` (by prepare_b). Within one call of the loops a0 names a chunk of A
//                         (a1 and the stride follow from it) and b0 a prepared chunk of B, and neither
//                         changes but where prepare_a / prepare_b follow (an implementation may keep
//                         its own form of them until then)
//   void dot();           C += A * B, four TDPBF16PS (amx.h's order)
//   void end_c();         C stored into the block begin_c named (which it may have worked in all along)
// Per block of 32 columns, B's pair rows are staged once (a stride the tile loads can take; a chunk
// whose 16 rows are evenly spaced is read in place) and every block of 32 rows multiplies them, chunk
// by chunk in depth order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/amx/amx.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace aclnn_cpu {

constexpr int64_t kStagePrefetch = 16;  // rows of B staged ahead of the one copied

// While alive: float results rounded to nearest even and tiny ones flushed to zero of their sign, as
// the tiles flush them (x86: MXCSR's FTZ, DAZ off: a denormal operand is used as it is; aarch64:
// FPCR's FZ, which finds a result tiny before rounding and takes denormal operands as zero); the
// thread's previous mode restored after. The vector implementations' sums run under it.
class AmxFlushMode {
 public:
#if defined(__x86_64__)
  __attribute__((always_inline)) AmxFlushMode() : saved_(_mm_getcsr()) {
    _mm_setcsr((saved_ & ~0x6040u) | 0x8000u);  // nearest even, FTZ, no DAZ (C read back as it is)
  }
  __attribute__((always_inline)) ~AmxFlushMode() { _mm_setcsr(saved_); }
#elif defined(__aarch64__)
  __attribute__((always_inline)) AmxFlushMode() {
    __asm__ volatile("mrs %0, fpcr" : "=r"(saved_) : : "memory");
    const uint64_t flush = (saved_ & ~(uint64_t{3} << 22)) | (uint64_t{1} << 24);  // RN, FZ
    __asm__ volatile("msr fpcr, %0" : : "r"(flush) : "memory");
  }
  __attribute__((always_inline)) ~AmxFlushMode() { __asm__ volatile("msr fpcr, %0" : : "r"(saved_) : "memory"); }
#endif
  AmxFlushMode(const AmxFlushMode&) = delete;
  AmxFlushMode& operator=(const AmxFlushMode&) = delete;

 private:
#if defined(__x86_64__)
  unsigned saved_;
#else
  uint64_t saved_ = 0;
#endif
};

// C's block worked in where it lies, for the vector implementations: begin_c notes the block and
// whether it holds C yet (`c_fresh`: not read, the first chunk's sums go in as they are); end_c zeroes
// a block no chunk reached.
struct AmxCInPlace {
  char* c_block = nullptr;
  int64_t c_stride = 0;
  bool c_fresh = false;
  void begin_c(float* c, int64_t ldc_bytes, bool load) {
    c_block = reinterpret_cast<char*>(c), c_stride = ldc_bytes, c_fresh = !load;
  }
  void end_c() {
    for (int64_t i = 0; i < kAmxBlock && c_fresh; ++i)
      std::memset(c_block + i * c_stride, 0, kAmxBlock * sizeof(float));
  }
  float* c_row(int64_t i) const { return reinterpret_cast<float*>(c_block + i * c_stride); }
};

// What the CPU's tiles and the emulation take: the depth in one pass, B's evenly spaced pair rows in
// place, staged operands as they are.
struct AmxTilesAsStaged {
  static constexpr int64_t kPassChunks = std::numeric_limits<int64_t>::max();
  static constexpr bool kLoadsBInPlace = true;
  void prepare_a(uint32_t*) {}
  void prepare_b(uint32_t*, int64_t) {}
};

template <typename Tiles>
void amx_pair_rows_on(int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base,
                      const int64_t* b_rows, uint32_t* stage, float* c, int64_t ldc) {
  constexpr int64_t kTile = kAmxRows * kAmxPairs;  // words of a tile
  constexpr int64_t kStageRow = kAmxBlock * sizeof(uint32_t), kARow = kAmxPairs * sizeof(uint32_t);
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs, ldc_bytes = ldc * static_cast<int64_t>(sizeof(float));
  // spacing[t]: the words between chunk t's pair rows where all 16 are evenly spaced (the tile loads
  // read them in place, as a 1x1 kernel's staged source lies), else 0 (staged per block of columns).
  uint32_t* spacing = stage + chunks * kAmxPairs * kAmxBlock;
  for (int64_t t = 0; t < chunks; ++t) {
    const int64_t q0 = t * kAmxPairs, step = q0 + 1 < pairs ? b_rows[q0 + 1] - b_rows[q0] : 0;
    bool even =
        Tiles::kLoadsBInPlace && q0 + kAmxPairs <= pairs && step > 0 && step <= std::numeric_limits<int32_t>::max() / 4;
    for (int64_t k = 2; k < kAmxPairs && even; ++k) even = b_rows[q0 + k] == b_rows[q0] + k * step;
    spacing[t] = even ? static_cast<uint32_t>(step) : 0u;
  }
  Tiles tiles;
  for (int64_t j0 = 0; j0 < n; j0 += kAmxBlock) {
    // stage[q * 32 + j] = B's pair row q, column j0 + j (zero rows past `pairs`: the last chunk's padding)
    for (int64_t q = 0; q < chunks * kAmxPairs; ++q) {
      uint32_t* row = stage + q * kAmxBlock;
      // (rows far apart: each a miss of its own, so the loads are asked for well ahead)
      if (q + kStagePrefetch < pairs && spacing[(q + kStagePrefetch) / kAmxPairs] == 0) {
        __builtin_prefetch(b_base + b_rows[q + kStagePrefetch] + j0);
        __builtin_prefetch(b_base + b_rows[q + kStagePrefetch] + j0 + kAmxBlock / 2);
      }
      if (q >= pairs) {
        std::memset(row, 0, kStageRow);
      } else if (spacing[q / kAmxPairs] == 0) {
        std::memcpy(row, b_base + b_rows[q] + j0, kStageRow);
      }
    }
    for (int64_t t = 0; t < chunks; ++t) {
      if (spacing[t] == 0) tiles.prepare_b(stage + t * kAmxPairs * kAmxBlock, kStageRow);
    }
    for (int64_t t0 = 0; t0 == 0 || t0 < chunks; t0 += Tiles::kPassChunks)  // (no depth: C zeroed)
      for (int64_t i0 = 0; i0 < m; i0 += kAmxBlock) {
        tiles.begin_c(c + i0 * ldc + j0, ldc_bytes, t0 > 0);
        const uint32_t* a0 = a + i0 / kAmxRows * chunks * kTile;  // rows i0 .. i0 + 15, then + 16 .. + 31
        const uint32_t* a1 = a0 + chunks * kTile;
        // C[i0:i0+32, j0:j0+32] (32 x 32) = A[i0:i0+32, :] (32 x 2 pairs) * B[:, j0:j0+32] (2 pairs x 32)
        for (int64_t t = t0; t < std::min(chunks, t0 + Tiles::kPassChunks); ++t) {
          const bool in_place = spacing[t] != 0;
          const uint32_t* b = in_place ? b_base + b_rows[t * kAmxPairs] + j0 : stage + t * kAmxPairs * kAmxBlock;
          const int64_t b_stride = in_place ? int64_t{spacing[t]} * int64_t{sizeof(uint32_t)} : kStageRow;
          tiles.load_ab(a0 + t * kTile, a1 + t * kTile, kARow, b, b + kAmxBlock / 2, b_stride, !in_place);
          tiles.dot();
        }
        tiles.end_c();
      }
  }
}

// amx_pair_a_rows' loops: per block of 32 rows, A's pairs staged once (every chunk, zero past m and
// past `pairs`), then per pass of the depth (kPassChunks chunks) and block of 32 columns C's block
// loaded (or zeroed) and the pass's products added, B's tiles read from its packed slivers in place (a
// last partial chunk staged with zeros past `pairs`: the packed operand goes on with other columns' or
// samples' pairs there).
template <typename Tiles>
void amx_pair_a_rows_on(int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,
                        const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset,
                        bool accumulate, float* c, int64_t ldc, uint32_t* stage) {
  constexpr int64_t kTile = kAmxRows * kAmxPairs;
  constexpr int64_t kARow = kAmxPairs * sizeof(uint32_t), kBRow = kAmxBlock * sizeof(uint32_t);
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs;
  uint32_t* b_last = stage;                                                   // a partial chunk of B: 16 x 32 words
  float* edge = reinterpret_cast<float*>(stage + kAmxPairs * kAmxBlock);      // a partial block of C: 32 x 32
  uint32_t* a_stage = stage + kAmxPairs * kAmxBlock + kAmxBlock * kAmxBlock;  // 2 x chunks tiles of A
  Tiles tiles;
  for (int64_t i0 = 0; i0 < m; i0 += kAmxBlock) {
    // a_stage: chunk t's tile of rows i0 .. i0 + 15 at t * 256, of rows i0 + 16 .. i0 + 31 at (chunks + t) * 256.
    // A whole chunk whose pairs follow one another in memory is one 64-byte copy per row.
    for (int64_t t = 0; t < chunks; ++t) {
      const int64_t q0 = t * kAmxPairs;
      bool follow = q0 + kAmxPairs <= pairs;
      for (int64_t k = 1; k < kAmxPairs && follow; ++k) follow = a_columns[q0 + k] == a_columns[q0] + 2 * k;
      for (int64_t r = 0; r < kAmxBlock; ++r) {
        uint32_t* tile_row = a_stage + (r / kAmxRows * chunks + t) * kTile + r % kAmxRows * kAmxPairs;
        if (i0 + r >= m) {
          std::memset(tile_row, 0, kARow);
        } else if (follow) {
          const uint16_t* from = a_base + a_rows[i0 + r] + a_columns[q0];
          std::memcpy(tile_row, from, kARow);
          __builtin_prefetch(from + 4 * kAmxPairs * 2);  // (four chunks on: 32 rows' streams are too many to track)
        } else {
          for (int64_t k = 0; k < kAmxPairs; ++k) {
            uint32_t pair = 0;
            if (q0 + k < pairs) std::memcpy(&pair, a_base + a_rows[i0 + r] + a_columns[q0 + k], sizeof pair);
            tile_row[k] = pair;
          }
        }
      }
      tiles.prepare_a(a_stage + t * kTile);
      tiles.prepare_a(a_stage + (chunks + t) * kTile);
    }
    for (int64_t t0 = 0; t0 == 0 || t0 < chunks; t0 += Tiles::kPassChunks)  // (no depth: C zeroed or kept)
      for (int64_t j0 = 0; j0 < n; j0 += kAmxBlock) {
        const int64_t rows = m - i0 < kAmxBlock ? m - i0 : kAmxBlock, columns = n - j0 < kAmxBlock ? n - j0 : kAmxBlock;
        const bool whole = rows == kAmxBlock && columns == kAmxBlock, first = t0 == 0;
        float* block = whole ? c + i0 * ldc + j0 : edge;
        const int64_t ld = whole ? ldc : kAmxBlock, ld_bytes = ld * static_cast<int64_t>(sizeof(float));
        if (!whole) {  // C's valid part (or zeros), zeros around it
          std::memset(edge, 0, kAmxBlock * kAmxBlock * sizeof(float));
          for (int64_t i = 0; i < rows && (accumulate || !first); ++i)
            std::memcpy(edge + i * kAmxBlock, c + (i0 + i) * ldc + j0, columns * sizeof(float));
        }
        tiles.begin_c(block, ld_bytes, accumulate || !whole || !first);
        const uint32_t* sliver = b_data + j0 / kAmxBlock * kAmxBlock * b_pairs + b_offset * kAmxBlock;
        // C[i0:i0+32, j0:j0+32] (+)= A[i0:i0+32, :] (32 x 2 pairs) * B[:, j0:j0+32] (2 pairs x 32)
        for (int64_t t = t0; t < std::min(chunks, t0 + Tiles::kPassChunks); ++t) {
          const uint32_t* b = sliver + t * kAmxPairs * kAmxBlock;
          if (pairs - t * kAmxPairs < kAmxPairs) {
            const int64_t valid = pairs - t * kAmxPairs;
            std::memcpy(b_last, b, valid * kBRow);
            std::memset(b_last + valid * kAmxBlock, 0, (kAmxPairs - valid) * kBRow);
            b = b_last;
          }
          tiles.load_ab(a_stage + t * kTile, a_stage + (chunks + t) * kTile, kARow, b, b + kAmxBlock / 2, kBRow, false);
          tiles.dot();
        }
        tiles.end_c();
        for (int64_t i = 0; i < rows && !whole; ++i)
          std::memcpy(c + (i0 + i) * ldc + j0, edge + i * kAmxBlock, columns * sizeof(float));
      }
  }
}

// An implementation's amx_pair_rows and amx_pair_a_rows (kernels/matmul/bf16_pairs.h), named
// amx_pair_rows_<suffix> and amx_pair_a_rows_<suffix> (its AmxProducts): declared, and defined over its
// tile type in its own file.
#define ACLNN_AMX_PRODUCTS(suffix)                                                                                   \
  void amx_pair_rows_##suffix(int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base,        \
                              const int64_t* b_rows, uint32_t* stage, float* c, int64_t ldc);                        \
  void amx_pair_a_rows_##suffix(int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,  \
                                const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset, \
                                bool accumulate, float* c, int64_t ldc, uint32_t* stage)
#define ACLNN_AMX_DEFINE_PRODUCTS(suffix, Tiles)                                                                     \
  void amx_pair_rows_##suffix(int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base,        \
                              const int64_t* b_rows, uint32_t* stage, float* c, int64_t ldc) {                       \
    amx_pair_rows_on<Tiles>(m, n, pairs, a, b_base, b_rows, stage, c, ldc);                                          \
  }                                                                                                                  \
  void amx_pair_a_rows_##suffix(int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,  \
                                const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset, \
                                bool accumulate, float* c, int64_t ldc, uint32_t* stage) {                           \
    amx_pair_a_rows_on<Tiles>(m, n, pairs, a_base, a_rows, a_columns, b_data, b_pairs, b_offset, accumulate, c, ldc, \
                              stage);                                                                                \
  }

}  // namespace aclnn_cpu
