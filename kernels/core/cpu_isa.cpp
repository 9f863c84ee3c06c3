#include "kernels/core/cpu_isa.h"

#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/log.h"

namespace aclnn_cpu {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "generic";
  }
}

Isa detected_isa() {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
  static const Isa isa = [] {
    __builtin_cpu_init();
    // (cpuid leaf 1 ECX: F16C, whose conversions both kits take)
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
    if (!f16c || !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return Isa::kGeneric;
    return __builtin_cpu_supports("avx512f") ? Isa::kAvx512 : Isa::kAvx2;
  }();
  return isa;
#else
  return Isa::kGeneric;
#endif
}

bool cpu_is_amd() {
#if defined(__x86_64__)
  static const bool amd = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d) == 0) return false;
    char vendor[13] = {};
    std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
    return std::strcmp(vendor, "AuthenticAMD") == 0;
  }();
  return amd;
#else
  return false;
#endif
}

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  // cpuid leaf 7: sub-leaf 1 EAX bit 5 (AVX512_BF16), sub-leaf 0 EBX bits 17 and 30 (AVX512DQ, AVX512BW)
  static const bool bf16 = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    constexpr unsigned kDqBw = (1u << 17) | (1u << 30);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0 || (b & kDqBw) != kDqBw) return false;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 5)) != 0;
  }();
  return bf16 && detected_isa() == Isa::kAvx512;
#else
  return false;
#endif
}

bool cpu_has_vnni(Isa isa) {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
  // cpuid leaf 7: sub-leaf 0 ECX bit 11 (AVX512_VNNI), sub-leaf 1 EAX bit 4 (AVX-VNNI)
  static const bool avx512_vnni = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (c & (1u << 11)) != 0;
  }();
  static const bool avx_vnni = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 4)) != 0;
  }();
  if (isa > detected_isa()) return false;
  return isa == Isa::kAvx512 ? avx512_vnni : isa == Isa::kAvx2 && avx_vnni;
#else
  (void)isa;
  return false;
#endif
}

bool int8_dot_available() {
  const char* value = std::getenv("ACLNN_CONVBWD_INT8_DOT");
  return cpu_has_vnni(selected_isa()) && (value == nullptr || std::strcmp(value, "0") != 0);
}

Isa selected_isa() {
  const Isa cpu = detected_isa();
  const char* value = std::getenv("ACLNN_CONVBWD_ISA");
  if (value == nullptr || *value == '\0') return cpu;
  if (std::strcmp(value, "amx") == 0)
    return cpu;  // AMX tiles for BF16 products (kernels/amx/amx.h), else the CPU's set
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (std::strcmp(value, isa_name(isa)) != 0) continue;
    if (isa <= cpu) return isa;
    log_message(LogLevel::kWarning, format("ACLNN_CONVBWD_ISA=%s: this CPU runs at most %s; using %s", value,
                                           isa_name(cpu), isa_name(cpu)));
    return cpu;
  }
  log_message(LogLevel::kWarning,
              format("ACLNN_CONVBWD_ISA=%s is not one of amx, avx512, avx2, generic; using %s", value, isa_name(cpu)));
  return cpu;
}

bool bf16_dot_supported() {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
  return cpu_has_avx512_bf16() && selected_isa() == Isa::kAvx512;
#else
  return false;
#endif
}

bool bf16_dot_available() {
  const char* value = std::getenv("ACLNN_CONVBWD_BF16_DOT");
  const bool asked = value != nullptr && *value != '\0';
  return bf16_dot_supported() && (asked ? std::strcmp(value, "0") != 0 : cpu_is_amd());
}

#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
namespace {
// The tile data state is off for a process until it asks (Linux 5.16+): once per process (a
// child of fork inherits the grant).
bool amx_permission_granted() {
  static const bool granted = [] {
    constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return granted;
}

}  // namespace
#endif

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

CpuFeatures CpuFeatures::current() { return {selected_isa(), cpu_is_amd(), amx_tiles(), int8_dot_available()}; }

const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = [] {
    int64_t l1 = 32 << 10, l2 = 512 << 10, l3 = 0;  // where the system does not say
#ifdef _SC_LEVEL1_DCACHE_SIZE
    auto read = [](int name, int64_t fallback) { return sysconf(name) > 0 ? int64_t{sysconf(name)} : fallback; };
    l1 = read(_SC_LEVEL1_DCACHE_SIZE, l1), l2 = read(_SC_LEVEL2_CACHE_SIZE, l2), l3 = read(_SC_LEVEL3_CACHE_SIZE, l3);
#endif
    // Shared L3: assume every online core shares it (no L3: a slice of L2's size).
    const int64_t cores = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
    CacheSizes s;
    s.l1 = std::clamp<int64_t>(l1, 16 << 10, 128 << 10);
    s.l2 = std::clamp<int64_t>(l2, 128 << 10, 4 << 20);
    s.l3_per_core = std::clamp<int64_t>(l3 / cores, s.l2, 8 << 20);
    return s;
  }();
  return sizes;
}

}  // namespace aclnn_cpu
