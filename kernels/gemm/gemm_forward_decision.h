// What the forward GEMM entries (gemm_forward.cpp: gemm_flipped_* and gemm_forward_*) decide in
// supports() and plan from: from padded windows (*_windows) or from tiles of columns (*_tiles).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/core/plan.h"
#include "kernels/gemm/padded_window.h"
#include "kernels/matmul/sgemm.h"

namespace aclnn_cpu {

// What the *_windows entries decide in supports() and plan from: the pair products, the bands and
// their GEMM blocking, the blocks of output channels, and the order of the rows.
struct WindowsDecision final : EntryDecision {
  AmxTiles amx = AmxTiles::kNone;  // BF16 pair products in the AMX tiles' order, on these tiles (amx.h)
  GemmBlocking blocking;
  BandTiling bands;
  int64_t row_blocks = 1;    // blocks of output channels per band
  bool depth_major = false;  // float products with their rows in depth-major order (depth_row)
  ChoiceReasons reasons;
  std::string describe() const override {
    return "tiling: " + std::to_string(bands.bands()) + " bands of " + std::to_string(bands.columns()) +
           " columns and " + std::to_string(row_blocks) + " blocks of rows for the tasks" +
           (reasons.text.empty() ? "" : "; " + reasons.text);
  }
};

// The windows decision for the forward convolution of geometry g from `source`: BF16 source and
// weights (inputs as they are) take pair products in the AMX tiles' order where the CPU runs it
// (amx.h): the window staged as pairs of channels, W packed in tiles of pairs, the products in whole
// blocks of 32 rows and columns. Float products take blocks of rows where the plane is small; pair
// products every row per task (each window staged once), but where W is past kAmxWeightCache: each
// task's rows of W then stay in cache (the tiles are fast enough for reading W from farther to bound
// them).
Support decide_windows(const ConvGeometry& g, const View5& source, const ConvProblem& p, const CpuFeatures& cpu);

// What the *_tiles entries decide in supports() and plan from: the output tiles and their GEMM
// blocking, and how the source reaches the products: a 1x1 kernel's BF16 source and weights in pair
// products, its 16-bit rows widened in place by the micro-kernel, or the tiles' windows staged per task
// from the source's view (else a dense float copy of the source).
struct TilesDecision final : EntryDecision {
  int64_t tile = 1;
  GemmBlocking blocking;
  AmxTiles amx = AmxTiles::kNone;  // a 1x1 kernel's pair products, on these tiles (amx.h)
  bool staged = false, rows16 = false;
  ChoiceReasons reasons;
  std::string describe() const override { return reasons.text; }
};

// The tiles decision for the forward convolution of geometry g from `source`.
TilesDecision decide_tiles(const ConvGeometry& g, const View5& source, const ConvProblem& p, const CpuFeatures& cpu);

}  // namespace aclnn_cpu
