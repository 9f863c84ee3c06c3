// Which instruction set the kernels use (its kit: kernels/kits/kit.h), chosen at phase 1 from the CPU
// (cpuid) and ACLNN_CONVBWD_ISA, and the cache sizes the GEMM blocking is derived from.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

// Ordered: a path may run on a CPU that has its instruction set or a later one.
enum class Isa { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isa_name(Isa isa);  // "generic", "avx2", "avx512"

// The fastest path this CPU runs: avx512 (AVX-512F, and what avx2 needs), avx2 (AVX2, FMA and F16C,
// which its kit is compiled for) or generic.
Isa detected_isa();

// The path to plan with: detected_isa(), or ACLNN_CONVBWD_ISA=avx512|avx2|generic when that names
// a path this CPU runs (a faster one than the CPU has is refused with a warning, and ignored).
// ACLNN_CONVBWD_ISA=amx plans with detected_isa() and asks for AMX tiles (kernels/amx/amx.h).
Isa selected_isa();

// Whether the CPU's vendor is AMD (cpuid leaf 0), for the few choices that go opposite ways on AMD's
// and Intel's cores; false off x86-64.
bool cpu_is_amd();

// Whether the CPU has AVX512_BF16 (and AVX512DQ, AVX512BW), with AVX-512 usable (detected_isa()); false off x86-64.
bool cpu_has_avx512_bf16();

// Whether the CPU has VNNI's byte products (VPDPBUSD) for the instruction set `isa`: AVX512_VNNI for
// avx512, AVX-VNNI for avx2; none for generic, and none off x86-64.
bool cpu_has_vnni(Isa isa);
// Whether the quantized convolution's plans take them (kernels/kits/quant_kernels.h, byte_tile): the CPU
// has them for selected_isa(), and ACLNN_CONVBWD_INT8_DOT is not "0" ("0": the pair tile, PMADDWD on int16;
// the same bits either way). Read at phase 1.
bool int8_dot_available();

// Whether the CPU runs BF16 pair products on VDPBF16PS (kernels/amx/amx_avx512_bf16.cpp): it has
// AVX512_BF16 and ACLNN_CONVBWD_ISA allows avx512.
bool bf16_dot_supported();
// Whether plans take them: bf16_dot_supported(), and ACLNN_CONVBWD_BF16_DOT is "1", or unset on AMD's
// cores ("0" keeps BF16 inputs on the float kernels). cpuid does not say where they are faster: on
// AMD's cores VDPBF16PS runs two multiply-adds per lane at the FMA rate; on Intel's Xeons the pair
// products are slower than the float kernels on the same BF16 inputs. Read at phase 1.
bool bf16_dot_available();
// Which tiles a plan's BF16 pair products take, read at phase 1:
//   kEmulated  ACLNN_CONVBWD_AMX=emulate (any CPU: tests, and the hardware check's reference);
//   kFmaAvx512, kFmaAvx2, kFmaNeon   ACLNN_CONVBWD_AMX=fma: the same order on the float FMAs of the
//              instruction set the plans use (selected_isa(); amx_fma_tiles.h; x86's generic set, which
//              has no FMA: kEmulated), the same bits (on aarch64, but for tininess found before
//              rounding: amx_fma_tiles.h);
//   kHardware  unless ACLNN_CONVBWD_AMX=0, or (not asked for by ACLNN_CONVBWD_AMX=1 or
//              ACLNN_CONVBWD_ISA=amx) ACLNN_CONVBWD_BF16_DOT=0 or an ACLNN_CONVBWD_ISA naming a vector
//              set: where the CPU has AMX-TILE and AMX-BF16, the OS enables their state and grants this
//              process the tile data (arch_prctl, asked once); the default since scripts/amx_check.sh
//              passed on a Sapphire Rapids class Xeon (asked for where there are none: a warning);
//   kVectors   elsewhere, where BF16 pair products may take AVX512_BF16 (bf16_dot_available(): not with
//              ACLNN_CONVBWD_BF16_DOT=0 or an ACLNN_CONVBWD_ISA below avx512): the same order on
//              VDPBF16PS (amx_avx512_bf16.cpp), the same bits as the tiles;
//   kNone      elsewhere (BF16 on the float kernels).
enum class AmxTiles { kNone, kHardware, kEmulated, kVectors, kFmaAvx512, kFmaAvx2, kFmaNeon };
AmxTiles amx_tiles();
// What the settings ask for (ACLNN_CONVBWD_AMX, ACLNN_CONVBWD_ISA, ACLNN_CONVBWD_BF16_DOT; null where
// unset), before the CPU is asked: the precedence above, testable on any machine.
enum class AmxWish { kOff, kWhereAvailable, kAsked, kEmulate, kFma };
AmxWish amx_wish(const char* amx, const char* isa, const char* pairs);

// Whether the CPU has AMX-TILE and AMX-BF16 and the OS enables their register state (cpuid, XCR0).
bool cpu_has_amx_bf16();

struct IsaKit;         // kernels/kits/kit.h
struct Conversions16;  // kernels/common/convert.h

// The CPU a plan is made for, detected once per plan at phase 1 (the settings above read then):
// the instruction set of its kernels and their kit, whether the vendor is AMD (for the few choices
// that go opposite ways on AMD's and Intel's cores), the engine of its BF16 pair products and whether
// its INT8 products take VNNI. Entries
// and steps take it from the plan (ConvImpl::supports, PlanBuilder::cpu), never from the functions
// above; steps keep what they need of it for phase 2, which reads no global and no environment.
struct CpuFeatures {
  Isa isa = Isa::kGeneric;
  bool amd = false;
  AmxTiles pairs = AmxTiles::kNone;
  bool int8_dot = false;  // int8_dot_available()
  // The kit of `isa` on this CPU (isa_kit: its CPU checks made), set with the rest by the kits' layer
  // (cpu_features(), kernels/kits/kit.h), which this one lies below; and its 16-bit conversions
  // (IsaKit::conversions, null for the portable paths), here too for kernels/common, below the kits.
  const IsaKit* kit = nullptr;
  const Conversions16* conversions = nullptr;
  // The fields above but the kit's (kit and conversions null).
  static CpuFeatures current();
};

// Per-core data cache sizes in bytes (L3: the whole cache divided among the cores sharing it),
// from the operating system, or conservative defaults where it does not say.
struct CacheSizes {
  int64_t l1 = 0, l2 = 0, l3_per_core = 0;
};
const CacheSizes& cache_sizes();

}  // namespace aclnn_cpu
