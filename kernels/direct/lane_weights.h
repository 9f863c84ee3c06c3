// W packed for the direct row kernels (row_kernels.h, InputRows), whose lanes are 16 channels of the
// result and whose sum runs over the taps and the channels of the rows it reads: per group, blocks of
// 16 lane channels (zero past the last), a pair of blocks per task of 32; block b's vector of tap k and
// summed channel c at (k * C + c) * 16 of the block (C summed channels). W's axes are (summed, lanes,
// taps) for a direct layer's gradInput (the lanes its input channels, the sum over its output
// channels) or (lanes, summed, taps) for a forward convolution (the lanes its output channels); the
// taps in W's order or reversed (a flipped kernel).
#pragma once

#include <cstdint>

#include "kernels/core/conv_problem.h"
#include "kernels/core/plan.h"
#include "kernels/core/workspace.h"

namespace aclnn_cpu {

class LaneWeights {
 public:
  struct Layout {
    int64_t groups = 1, lanes = 0, summed = 0, taps = 1;  // channels per group, taps
    bool lanes_first = false;                             // W (G * lanes, summed, K), else (G * summed, lanes, K)
    bool reversed = false;                                // block tap k from W's tap K-1-k
  };
  static constexpr int64_t kTaskLanes = 32;  // lane channels per task: two blocks of 16

  LaneWeights() = default;
  // Books the packed weights (the step's scratch, read by all its threads) and, for weights other than
  // dense floats where W is dense, each thread's rows converted as they are packed (not a whole float
  // copy of W, written and read back); and the flags of W's values tested as they are packed (in the
  // shared area, `direct.weights_finite`: b.weights_tested, for gradInput's non-finite repair).
  LaneWeights(const View5& wei, MathMode math, const Layout& layout, PlanBuilder& b);

  int64_t tasks_per_group() const;  // blocks of 32 lane channels
  int64_t block_floats() const { return layout_.taps * layout_.summed * 16; }
  // Whether the plan must supply W as dense floats (StepInputs::f32.wei): not where it is converted here.
  bool wants_float_weights() const { return rows_ < 0; }
  // Packs every block on up to `threads` threads from `dense` (W as dense floats, where wanted), each
  // packing task then testing the values of W it packed for Inf and NaN while they are in its cache
  // (PlanBuilder::weights_tested, set by the constructor).
  int pack(const Workspace& w, const float* dense, int threads) const;
  // Task ct's two blocks of group grp.
  const float* blocks(const Workspace& w, int64_t grp, int64_t ct) const;

 private:
  void pack_block(const float* runs, int64_t channel, int64_t lane, int64_t c0, int64_t c1, int64_t lanes,
                  float* block) const;

  View5 wei_;
  MathMode math_ = MathMode::kFull;
  const Conversions16* conversions_ = nullptr;  // the plan's kit's
  Layout layout_;
  int64_t chunk_ = 0;                    // summed channels converted at a time
  WorkspaceLedger::Handle packed_ = -1;  // read by all the step's threads
  WorkspaceLedger::Handle rows_ = -1;    // per thread: the converted rows
  WorkspaceLedger::Handle tested_ = -1;  // a byte per packing task: 1 where its values were all finite
};

// Whether the direct row kernels' entries (direct, direct_forward) take geometry g, computed as
// staged rows in blocks of 16 lane channels: at least 16 channels per group in and out, a batch and
// groups, more than one tap (a 1x1 layer's GEMMs read their source in place), strides up to 4 (a row is
// taken in `stride` phases; past 4 their passes cost more than gemm_col2im's products, which do not
// depend on the stride), padding from 0 and kernel spans up to 2^30 (index sums stay small), rows up to
// 65 536 wide (the row buffers); else why not (before any size is computed from g).
Support direct_rows_fit(const ConvGeometry& g);

// The row kernels' result (channel blocks x positions x 16 lanes) into the channels' rows: channel i's
// position j at rows[i * row_stride + step * j], plus bias[i] where there is a bias (fl32(sum) + bias, the
// forward operators' rule). With unit step, 4 x 4 blocks transposed in vector registers (not a scalar
// copy), the rest one at a time.
void store_lane_tile(const float* tile, int64_t positions, int64_t channels, int64_t step, float* rows,
                     int64_t row_stride, const float* bias = nullptr);

}  // namespace aclnn_cpu
