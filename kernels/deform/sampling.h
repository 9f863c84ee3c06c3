// Where the deformable convolution's fast entries sample: a point's position from the offsets, and its
// four neighbours' slots and weights in a sample's float planes (each plane followed by a zero slot,
// which every neighbour outside the image reads). Formed in double from the offsets, in the order
// written; the files that include this are compiled without contraction (src/CMakeLists.txt), so
// every CPU gives the same bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "common/dtype.h"
#include "kernels/core/deform_problem.h"

namespace aclnn_cpu {

// The product of sizes, or UINT64_MAX where it does not fit (the ledger then reports the workspace too large).
inline uint64_t size_product(std::initializer_list<int64_t> sizes) {
  uint64_t total = 1;
  for (int64_t size : sizes) {
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(std::max<int64_t>(size, 0)), &total)) return UINT64_MAX;
  }
  return total;
}

// Sampling point (deformable group d, kernel point k, output position (oh, ow)) of sample n: its
// position (h, w), the floor of each and the fractions, and its mask.
struct SamplingPoint {
  double h, w, mask, top, left, down, right;

  SamplingPoint(const DeformProblem& p, int64_t n, int64_t d, int64_t k, int64_t oh, int64_t ow) {
    const DeformGeometry& g = p.geometry;
    const View5& offset = p.offset;
    const auto value = [&](int block) {
      return load_element(offset.data, offset.dtype, offset.element(n, g.offset_channel(block, d, k), 0, oh, ow));
    };
    const int64_t kh = k / g.kernel[1], kw = k % g.kernel[1];
    h = static_cast<double>(oh * g.stride[0] - g.pad[0] + kh * g.dilation[0]) + value(1);
    w = static_cast<double>(ow * g.stride[1] - g.pad[1] + kw * g.dilation[1]) + value(0);
    mask = value(2);
    top = std::floor(h), left = std::floor(w);
    down = h - top, right = w - left;
  }
  // The backward's rule: a point counts only where -1 < h < inH and -1 < w < inW (NaN fails it).
  bool inside(const DeformGeometry& g) const {
    return h > -1 && h < static_cast<double>(g.in_size[0]) && w > -1 && w < static_cast<double>(g.in_size[1]);
  }
  // Neighbour i = 2*a + b is (top + a, left + b), with bilinear weight (a ? down : 1-down) * (b ? right : 1-right).
  double bilinear(int i) const { return (i / 2 ? down : 1 - down) * (i % 2 ? right : 1 - right); }
};

// A sampling point's four neighbours: their slots in the sample's float planes (plane-relative; the
// zero slot H*W for one outside the image) and weights (bilinear weight times the mask, rounded once).
struct Neighbours {
  int32_t slot[4];
  float weight[4];

  // Each neighbour outside the image reads the zero slot with weight 0.
  Neighbours(const SamplingPoint& s, const DeformGeometry& g) {
    const int64_t height = g.in_size[0], width = g.in_size[1];
    for (int i = 0; i < 4; ++i) {
      const double row = s.top + i / 2, column = s.left + i % 2;
      const bool in_image =
          row >= 0 && row < static_cast<double>(height) && column >= 0 && column < static_cast<double>(width);
      slot[i] = in_image ? static_cast<int32_t>(static_cast<int64_t>(row) * width + static_cast<int64_t>(column))
                         : static_cast<int32_t>(height * width);
      weight[i] = in_image ? static_cast<float>(s.mask * s.bilinear(i)) : 0.0f;
    }
  }
  Neighbours() = default;
};
static_assert(sizeof(Neighbours) == 8 * sizeof(float), "a table entry is 8 floats");

}  // namespace aclnn_cpu
