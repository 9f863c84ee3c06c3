// One kit per instruction set: every vector kernel shape the families call, instantiated in one file
// per set (kit_<set>.cpp, compiled for that set only) from one ops type of the set's vector
// operations: the GEMM's micro-kernel tile (microkernel_tile.h), the direct family's row kernels
// (row_kernels_impl.h, row_kernels_weight_input_impl.h), the Winograd transforms
// (winograd_transforms_impl.h), the AMX tiles' order on the set's FMAs (kernels/amx/amx_fma_tiles.h),
// the 16-bit conversions' table (kernels/common/convert.h: its functions are intrinsics only), and the
// deformable convolution's sampling loops (deform_kernels.h: files of their own, without contraction)
// and the quantized convolution's integer tile (quant_kernels.h).
// Adding an instruction set is one ops type and one kit file (docs/architecture.md, "Checklist: adding
// an instruction set"). Every kit gives the same bits (each template fixes its order of operations);
// they differ only in speed.
#pragma once

#include <vector>

#include "kernels/amx/amx.h"
#include "kernels/common/convert.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/kits/deform_kernels.h"
#include "kernels/kits/microkernel.h"
#include "kernels/kits/quant_kernels.h"
#include "kernels/kits/row_kernels.h"
#include "kernels/kits/winograd_transforms.h"

namespace aclnn_cpu {

struct IsaKit {
  Isa isa;
  MicroKernel gemm;
  RowKernels rows;
  WinogradTransforms winograd;
  // The AMX tiles' order on the set's FMAs (kernels/amx/amx_fma_tiles.h; AmxTiles::kFma*, dispatched by
  // kernels/matmul/bf16_pairs.cpp); none on x86-64's generic set, which has no FMA.
  AmxProducts fma_pairs;
  // FLOAT16/BF16 <-> float runs, row copies and gradBias lane sums on the set's registers
  // (CpuFeatures::conversions); null: the callers' portable paths (the generic kit).
  const Conversions16* conversions;
  // The deformable convolution's sampling loops (deform_kernels.h).
  const DeformKernels* deform;
  // The quantized convolution's integer tile (quant_kernels.h).
  const QuantKernels* quant;
};

extern const IsaKit kKitGeneric;  // kit_generic.cpp (the baseline: SSE2 on x86-64, NEON on aarch64)
#ifdef ACLNN_HAVE_X86_KERNELS
extern const IsaKit kKitAvx2;    // kit_avx2.cpp (-mavx2 -mfma -mf16c)
extern const IsaKit kKitAvx512;  // kit_avx512.cpp (-mavx512f -mfma)
// kit_avx512.cpp: the AVX-512 kit with AVX512_BF16's narrowing (convert_avx512_bf16.cpp), for CPUs
// that have AVX512_BF16 (and AVX512DQ, AVX512BW: cpu_has_avx512_bf16()).
extern const IsaKit kKitAvx512Bf16;
#endif

// The first kit of the one ordered table of kits (kit_generic.cpp: widest first, each with the CPU
// check it needs beyond its set) whose set is `isa` or an earlier one (Isa's order) and whose check
// the CPU passes: `isa` is the plan's (CpuFeatures::isa), which the CPU runs.
const IsaKit& isa_kit(Isa isa);
// Every kit of that table the plans of `isa` may take on this CPU, widest first (isa_kit(isa) is the
// first): e.g. each conversion path the CPU runs, for the tests.
std::vector<const IsaKit*> runnable_kits(Isa isa);

// CpuFeatures::current() with its kit (isa_kit(isa)) and the kit's conversions: the CPU a plan is made
// for (ConvPlan::build), detected at phase 1.
CpuFeatures cpu_features();

}  // namespace aclnn_cpu
