// The dispatch of BF16 pair products to the tiles a plan chose (AmxTiles: kernels/core/cpu_isa.h).
#include "kernels/amx/amx.h"

#include "kernels/amx/amx_tiles.h"
#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

ACLNN_AMX_PRODUCTS(emulated);  // amx_emulated.cpp
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
ACLNN_AMX_PRODUCTS(hardware);     // amx_hardware.cpp
ACLNN_AMX_PRODUCTS(avx512_bf16);  // amx_avx512_bf16.cpp
ACLNN_AMX_PRODUCTS(fma_avx512);   // kernels/kits/kit_avx512.cpp
ACLNN_AMX_PRODUCTS(fma_avx2);     // kernels/kits/kit_avx2.cpp
#elif defined(__aarch64__)
ACLNN_AMX_PRODUCTS(fma_neon);  // kernels/kits/kit_generic.cpp
#endif

namespace {

// The two products of the implementation a plan chose (the emulation where this build has no other).
struct AmxProducts {
  decltype(&amx_pair_rows_emulated) rows;
  decltype(&amx_pair_a_rows_emulated) a_rows;
};
AmxProducts amx_products(AmxTiles tiles) {
  switch (tiles) {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
    case AmxTiles::kHardware: return {amx_pair_rows_hardware, amx_pair_a_rows_hardware};
    case AmxTiles::kVectors: return {amx_pair_rows_avx512_bf16, amx_pair_a_rows_avx512_bf16};
    case AmxTiles::kFmaAvx512: return {amx_pair_rows_fma_avx512, amx_pair_a_rows_fma_avx512};
    case AmxTiles::kFmaAvx2: return {amx_pair_rows_fma_avx2, amx_pair_a_rows_fma_avx2};
#elif defined(__aarch64__)
    case AmxTiles::kFmaNeon: return {amx_pair_rows_fma_neon, amx_pair_a_rows_fma_neon};
#endif
    default: return {amx_pair_rows_emulated, amx_pair_a_rows_emulated};
  }
}

}  // namespace

const char* amx_detail(AmxTiles tiles) {
  switch (tiles) {
    case AmxTiles::kHardware: return ":amx";
    case AmxTiles::kEmulated: return ":amx_emulated";
    case AmxTiles::kVectors: return ":amx_avx512bf16";
    case AmxTiles::kFmaAvx512:
    case AmxTiles::kFmaAvx2:
    case AmxTiles::kFmaNeon: return ":amx_fma";
    case AmxTiles::kNone: break;
  }
  return "";
}

int64_t amx_left_words(int64_t m, int64_t pairs) {
  const int64_t rows = (m + kAmxBlock - 1) / kAmxBlock * kAmxBlock;
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs;
  int64_t words = 0;
  if (__builtin_mul_overflow(rows, chunks * kAmxPairs, &words)) return INT64_MAX;
  return words;
}

int64_t amx_stage_words(int64_t pairs) {
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs;
  return chunks * kAmxPairs * kAmxBlock + chunks;  // the staged rows, then each chunk's spacing
}

void amx_pair_rows(AmxTiles tiles, int64_t m, int64_t n, int64_t pairs, const uint32_t* a, const uint32_t* b_base,
                   const int64_t* b_rows, uint32_t* stage, float* c, int64_t ldc) {
  amx_products(tiles).rows(m, n, pairs, a, b_base, b_rows, stage, c, ldc);
}

int64_t amx_a_stage_words(int64_t pairs) {
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs;
  return kAmxPairs * kAmxBlock + kAmxBlock * kAmxBlock + 2 * chunks * kAmxRows * kAmxPairs;
}

void amx_pair_a_rows(AmxTiles tiles, int64_t m, int64_t n, int64_t pairs, const uint16_t* a_base, const int64_t* a_rows,
                     const int64_t* a_columns, const uint32_t* b_data, int64_t b_pairs, int64_t b_offset,
                     bool accumulate, float* c, int64_t ldc, uint32_t* stage) {
  amx_products(tiles).a_rows(m, n, pairs, a_base, a_rows, a_columns, b_data, b_pairs, b_offset, accumulate, c, ldc,
                             stage);
}

}  // namespace aclnn_cpu
