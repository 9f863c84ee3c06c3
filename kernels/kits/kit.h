// One kit per instruction set: every vector kernel shape the families call, instantiated in one file
// per set (kit_<set>.cpp, compiled for that set only) from one ops type of the set's vector
// operations: the GEMM's micro-kernel tile (microkernel_tile.h), the direct family's row kernels
// (row_kernels_impl.h, row_kernels_weight_input_impl.h), the Winograd transforms
// (winograd_transforms_impl.h) and the AMX tiles' order on the set's FMAs (kernels/amx/amx_fma_tiles.h).
// Adding an instruction set is one ops type and one kit file (docs/architecture.md, "Checklist: adding
// an instruction set"). Every kit gives the same bits (each template fixes its order of operations);
// they differ only in speed.
#pragma once

#include "kernels/amx/amx.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/kits/microkernel.h"
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
};

extern const IsaKit kKitGeneric;  // kit_generic.cpp (the baseline: SSE2 on x86-64, NEON on aarch64)
#ifdef ACLNN_HAVE_X86_KERNELS
extern const IsaKit kKitAvx2;    // kit_avx2.cpp (-mavx2 -mfma -mf16c)
extern const IsaKit kKitAvx512;  // kit_avx512.cpp (-mavx512f -mfma)
#endif

// The widest kit built whose set is `isa` or an earlier one (Isa's order), from the one ordered table
// of kits (kit_generic.cpp): `isa` is the plan's (CpuFeatures::isa), which the CPU runs.
const IsaKit& isa_kit(Isa isa);

}  // namespace aclnn_cpu
