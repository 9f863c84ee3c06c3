// Which tiles BF16 pair products take (amx_tiles), and the dispatch to them.
#include "kernels/amx/amx.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "kernels/amx/amx_tiles.h"
#include "kernels/common/cpu_isa.h"

namespace aclnn_cpu {

ACLNN_AMX_PRODUCTS(emulated);  // amx_emulated.cpp
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
bool amx_permission_granted();    // amx_hardware.cpp
ACLNN_AMX_PRODUCTS(hardware);     // amx_hardware.cpp
ACLNN_AMX_PRODUCTS(avx512_bf16);  // amx_avx512_bf16.cpp
ACLNN_AMX_PRODUCTS(fma_avx512);   // microkernel_avx512.cpp
ACLNN_AMX_PRODUCTS(fma_avx2);     // microkernel_avx2.cpp
#elif defined(__aarch64__)
ACLNN_AMX_PRODUCTS(fma_neon);  // microkernel_generic.cpp
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

bool cpu_has_amx_bf16() {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
  static const bool amx = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    // cpuid leaf 1 ECX bit 27 (OSXSAVE); leaf 7 EDX bits 24 (AMX-TILE) and 22 (AMX-BF16)
    if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 27)) == 0) return false;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0 || (d & (1u << 24)) == 0 || (d & (1u << 22)) == 0) return false;
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    constexpr unsigned kTileState = (1u << 17) | (1u << 18);  // XCR0: XTILECFG, XTILEDATA
    return (lo & kTileState) == kTileState;
  }();
  return amx;
#else
  return false;
#endif
}

AmxWish amx_wish(const char* amx, const char* isa, const char* pairs) {
  const auto is = [](const char* value, const char* what) { return value != nullptr && std::strcmp(value, what) == 0; };
  if (is(amx, "emulate")) return AmxWish::kEmulate;
  if (is(amx, "fma")) return AmxWish::kFma;
  if (is(amx, "0")) return AmxWish::kOff;
  if (amx != nullptr && *amx != '\0' && !is(amx, "1")) {
    log_message(
        LogLevel::kWarning,
        format("ACLNN_CONVBWD_AMX=%s is not one of 0, 1, emulate, fma; the CPU's tiles where it has them", amx));
  }
  if (is(amx, "1") || is(isa, "amx")) return AmxWish::kAsked;
  const bool vector_set = is(isa, "avx512") || is(isa, "avx2") || is(isa, "generic");
  return is(pairs, "0") || vector_set ? AmxWish::kOff : AmxWish::kWhereAvailable;
}

AmxTiles amx_tiles() {
  const AmxWish wish = amx_wish(std::getenv("ACLNN_CONVBWD_AMX"), std::getenv("ACLNN_CONVBWD_ISA"),
                                std::getenv("ACLNN_CONVBWD_BF16_DOT"));
  if (wish == AmxWish::kEmulate) return AmxTiles::kEmulated;
  if (wish == AmxWish::kFma) {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
    const Isa isa = selected_isa();
    return isa == Isa::kAvx512 ? AmxTiles::kFmaAvx512 : isa == Isa::kAvx2 ? AmxTiles::kFmaAvx2 : AmxTiles::kEmulated;
#elif defined(__aarch64__)
    return AmxTiles::kFmaNeon;
#else
    return AmxTiles::kEmulated;
#endif
  }
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
  if (wish != AmxWish::kOff && cpu_has_amx_bf16() && amx_permission_granted()) {
    return AmxTiles::kHardware;  // (permission asked only here)
  }
#endif
  if (wish == AmxWish::kAsked) {
    log_message(LogLevel::kWarning,
                "ACLNN_CONVBWD_AMX=1 or ACLNN_CONVBWD_ISA=amx: this CPU or its operating system gives no AMX-BF16 "
                "tiles; BF16 products stay on the vector kernels");
  }
  return bf16_dot_available() ? AmxTiles::kVectors : AmxTiles::kNone;
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
