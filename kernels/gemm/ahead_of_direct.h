// Where the GEMM entries go ahead of the direct kernels (`direct`, `direct_forward`) in the forward and
// backward-data lists (kernels/conv/implementations.cpp): the same entries stand twice in those lists,
// once ahead of the direct kernels, taking only the layers below, and once behind them, taking what the
// direct kernels refuse. The list's order alone ranks them; no entry asks another.
//   - BF16 operands that the CPU multiplies in pairs in the AMX tiles' order: on AMX tiles 16 x 16 x 32
//     per instruction, on VDPBF16PS twice a float FMA's multiply-adds, and the same bits on both
//     (gemm_flipped_windows, else gemm_flipped_tiles or gemm_col2im where col2im's pair products fit;
//     forward: gemm_forward_windows).
//   - One row per plane as the direct kernels would take it (a 1-D layer; forward, one output row), where
//     the padded windows hold each row whole: their products compute no spill column and skip nothing the
//     direct kernels would, and the GEMM's register blocking runs them faster (conv1d_k5_c256: 0.93 of
//     direct's time).
#pragma once

#include "kernels/core/plan.h"
#include "kernels/matmul/bf16_pairs.h"

namespace aclnn_cpu {

// Whether gemm_col2im's pair products fit a direct layer of geometry g (kernels/gemm/gemm_col2im.cpp).
bool col2im_pair_products_fit(const ConvGeometry& g);

// Whether the pass's source and W are multiplied in pairs on this CPU.
inline bool bf16_pair_products(const ConvProblem& p, const CpuFeatures& cpu) {
  const View5& source = p.input_grad == InputGrad::kForward ? p.src : p.dst;
  return amx_pair_products(cpu.pairs, source, p.wei, p.math) != AmxTiles::kNone;
}

// Whether the rows the direct kernels would take are one per plane: the layer's own source rows (backward
// data), the flipped layer's (forward of stride 1 with padding within the kernel, `direct`), or one output
// row of a source of one row (other forward layers, `direct_forward`).
inline bool one_row_per_plane(const ConvProblem& p) {
  const ConvGeometry& g = p.geometry;
  if (p.input_grad != InputGrad::kForward) return g.src_size[0] == 1 && g.src_size[1] == 1;
  if (flippable(g)) return g.dst_size[0] == 1 && g.dst_size[1] == 1;
  return g.src_size[0] == 1 && g.src_size[1] == 1 && g.dst_size[1] == 1;
}

// The padded-window entries ahead of the direct kernels.
inline Support windows_ahead_of_direct(const ConvProblem& p, const CpuFeatures& cpu) {
  return bf16_pair_products(p, cpu) || one_row_per_plane(p) ? kSupported
                                                            : refuse("not BF16 pairs nor one row per plane");
}

// gemm_flipped_tiles ahead of `direct`: BF16 pairs that col2im's pair products fit (gemm_col2im's own
// entry ahead of `direct` asks its decision: where it takes pair products).
inline Support col2im_pairs_ahead_of_direct(const ConvProblem& p, const CpuFeatures& cpu) {
  return bf16_pair_products(p, cpu) && col2im_pair_products_fit(p.geometry) ? kSupported
                                                                            : refuse("not BF16 pairs that col2im fits");
}

}  // namespace aclnn_cpu
