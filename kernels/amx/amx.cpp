// The products of the tiles' instructions, AVX512_BF16's and the emulation (AmxTiles:
// kernels/core/cpu_isa.h), and the sizes of their operands and staging.
#include "kernels/amx/amx.h"

#include "kernels/amx/amx_tiles.h"
#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

ACLNN_AMX_PRODUCTS(emulated);  // amx_emulated.cpp
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
ACLNN_AMX_PRODUCTS(hardware);     // amx_hardware.cpp
ACLNN_AMX_PRODUCTS(avx512_bf16);  // amx_avx512_bf16.cpp
#endif

AmxProducts amx_products(AmxTiles tiles) {
  switch (tiles) {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
    case AmxTiles::kHardware: return {amx_pair_rows_hardware, amx_pair_a_rows_hardware};
    case AmxTiles::kVectors: return {amx_pair_rows_avx512_bf16, amx_pair_a_rows_avx512_bf16};
#endif
    default: return {amx_pair_rows_emulated, amx_pair_a_rows_emulated};
  }
}

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

int64_t amx_a_stage_words(int64_t pairs) {
  const int64_t chunks = (pairs + kAmxPairs - 1) / kAmxPairs;
  return kAmxPairs * kAmxBlock + kAmxBlock * kAmxBlock + 2 * chunks * kAmxRows * kAmxPairs;
}

}  // namespace aclnn_cpu
