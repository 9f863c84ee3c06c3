// What the deformable convolution's entries compute (aclnnDeformableConv2d and its backward,
// docs/deformable_conv2d.md): the operator's own problem, passes, entries and steps, so that no
// convolution entry is ever handed a deformable problem (the lists are typed by the problem).
//
// With K = KH*KW kernel points, Cg = inC / groups, Cd = inC / deformableGroups, and for input channel c
// its deformable group d = c / Cd, kernel point k = kh*KW + kw and output position (oh, ow):
//   h = oh*strideH - padTop + kh*dilationH + offset[n, dg*K + d*K + k, oh, ow]        (the dy block)
//   w = ow*strideW - padLeft + kw*dilationW + offset[n, d*K + k, oh, ow]               (the dx block)
//   m = offset[n, 2*dg*K + d*K + k, oh, ow]                                             (the mask block)
//   columns[n, c, oh*KH + kh, ow*KW + kw] = m * bilinear(x[n, c], h, w)                 (deformOut)
//   out[n, o, oh, ow] = bias[o] + sum_{ci < Cg, kh, kw} weight[o, ci, kh, kw]
//                                   * columns[n, (o / (outC/groups))*Cg + ci, oh*KH + kh, ow*KW + kw]
// bilinear() weighs the four neighbours (floor(h) + {0,1}, floor(w) + {0,1}) by (1 - |dh|)(1 - |dw|),
// a neighbour outside the image counting zero.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/entry_list.h"
#include "kernels/core/list_plan.h"

namespace aclnn_cpu {

struct DeformGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0, out_channels = 0;
  int64_t groups = 1, deformable_groups = 1;
  int64_t in_size[2] = {0, 0};   // inH, inW
  int64_t out_size[2] = {0, 0};  // outH, outW
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t pad[2] = {0, 0};  // top, left (bottom and right only size the output)
  int64_t dilation[2] = {1, 1};

  int64_t kernel_points() const { return kernel[0] * kernel[1]; }
  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  int64_t in_per_deformable_group() const { return in_channels / deformable_groups; }
  // offset's channel of the dx (block 0), dy (block 1) or mask (block 2) value of deformable group d,
  // kernel point k.
  int64_t offset_channel(int block, int64_t d, int64_t k) const {
    return (block * deformable_groups + d) * kernel_points() + k;
  }
};

// The passes of the deformable convolution, each with its own ordered list of entries
// (kernels/deform/implementations.cpp).
enum class DeformPass {
  kForward,         // out, and deformOut where asked
  kBackwardData,    // gradInput and gradOffset (the dx, dy and mask gradients), from one scatter of the columns
  kBackwardWeight,  // gradWeight: gradOutput correlated with offsetOut
  kBias,            // gradBias: gradOutput summed over N and space
};
constexpr DeformPass kDeformPasses[] = {DeformPass::kForward, DeformPass::kBackwardData, DeformPass::kBackwardWeight,
                                        DeformPass::kBias};

// Every tensor as a View5 (N, C, 1, H, W); 1-D ones as (1, C, 1, 1, 1).
struct DeformProblem {
  DeformGeometry geometry;
  bool backward = false;
  View5 input;   // x
  View5 weight;  // (outC, Cg, 1, KH, KW)
  View5 offset;  // (N, 3*dg*K, 1, outH, outW)
  // The forward: out, its bias (where given) and deformOut (where asked).
  View5 output;
  bool has_bias = false;
  View5 bias;
  bool want_columns = false;
  View5 columns;  // deformOut (N, inC, 1, outH*KH, outW*KW); the backward reads it as offsetOut
  // The backward: its input gradOutput (N, outC, 1, outH, outW) and its four results.
  View5 grad_output;
  View5 grad_input, grad_weight, grad_offset, grad_bias;
  int max_threads = 1;  // threads phase 2 may use, fixed at phase 1
};

// An entry of one pass's list (entry_list.h's choose_from walks them).
struct DeformImpl {
  const char* name;
  const char* family;
  DeformPass pass;
  Support (*supports)(const DeformProblem& problem, const CpuFeatures& cpu);
  std::unique_ptr<OperatorStep> (*plan)(const DeformProblem& problem, StepBuilder& builder);
};

}  // namespace aclnn_cpu
