// What the deformable convolution's "gemm" entries (columns_forward.cpp, columns_backward.cpp) share:
// where they sample (a point's position from the offsets, and its four neighbours' weights and place in
// a sample's padded float planes: formed in double from the offsets, in the order written; the files that
// include this are compiled without contraction, src/CMakeLists.txt, so every CPU gives the same bits),
// those planes, and the weights packed once for their GEMMs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "common/dtype.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"
#include "kernels/core/deform_problem.h"
#include "kernels/kits/kit.h"
#include "kernels/matmul/sgemm.h"

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

// A sample's input planes as floats, each padded with zeros: row r, column x of the image at slot
// (r + 1) * pitch + x + 1 of its plane, with pitch = W + 2 and H + 3 rows (a zero row above the image,
// two below, a zero column on each side). Every point whose neighbours may touch the image (top in
// [-1, H-1], left in [-1, W-1]) then finds its four at base, base + 1, base + pitch and base + pitch + 1;
// every other point reads the 2 x 2 zeros at zero_base() (below the image).
struct PaddedPlanes {
  int64_t height = 0, width = 0, pitch = 0, slots = 0;

  PaddedPlanes() = default;
  explicit PaddedPlanes(const DeformGeometry& g)
      : height(g.in_size[0]), width(g.in_size[1]), pitch(g.in_size[1] + 2), slots((g.in_size[0] + 3) * pitch) {}
  int64_t zero_base() const { return (height + 1) * pitch; }
  // The slot of image row r, column x.
  int64_t slot(int64_t r, int64_t x) const { return (r + 1) * pitch + x + 1; }
};

// A sampling point's four neighbours in the padded planes: the slot of the first (top, left), the others
// 1, pitch and pitch + 1 past it, and their weights (the bilinear weight times the mask, rounded once;
// 0 for a neighbour outside the image, which reads a zero).
struct Neighbours {
  int32_t base;
  float weight[4];

  Neighbours(const SamplingPoint& s, const DeformGeometry& g, const PaddedPlanes& planes) {
    const auto height = static_cast<double>(g.in_size[0]), width = static_cast<double>(g.in_size[1]);
    const bool near = s.top >= -1 && s.top < height && s.left >= -1 && s.left < width;  // (NaN fails it)
    base = static_cast<int32_t>(near ? planes.slot(static_cast<int64_t>(s.top), static_cast<int64_t>(s.left))
                                     : planes.zero_base());
    for (int i = 0; i < 4; ++i) {
      const double row = s.top + i / 2, column = s.left + i % 2;
      const bool in_image = row >= 0 && row < height && column >= 0 && column < width;
      weight[i] = in_image ? static_cast<float>(s.mask * s.bilinear(i)) : 0.0f;
    }
  }
  // A point that reads nothing: the zeros, with weight 0.
  explicit Neighbours(const PaddedPlanes& planes) : base(static_cast<int32_t>(planes.zero_base())), weight{} {}
};

// A table of sampling points' neighbours in 32-bit words, a row of `width` points per (deformable group,
// kernel point): the points' base slots, then each of their four weights, stride() entries apart, as the
// kits' sampling loops read them (kernels/kits/deform_kernels.h). The stride is padded past the width, so
// that the five arrays of a row do not lie a multiple of 4 KiB apart (where the loads of one and the
// stores of another would be taken as the same address).
class NeighbourTable {
 public:
  NeighbourTable(void* words, int64_t width) : words_(static_cast<char*>(words)), stride_(width + kPad) {}
  // The words of `rows` rows of `width` points.
  static uint64_t words(int64_t rows, int64_t width) { return size_product({rows, 5, width + kPad}); }
  int64_t stride() const { return stride_; }
  int32_t* base(int64_t row) const { return reinterpret_cast<int32_t*>(words_ + row * 5 * stride_ * 4); }
  float* weights(int64_t row) const { return reinterpret_cast<float*>(words_ + (row * 5 + 1) * stride_ * 4); }
  void set(int64_t row, int64_t j, const Neighbours& n) const {
    base(row)[j] = n.base;
    for (int i = 0; i < 4; ++i) weights(row)[i * stride_ + j] = n.weight[i];
  }

 private:
  static constexpr int64_t kPad = 16;  // (a cache line)
  char* words_;
  int64_t stride_;
};

// Sample n's input planes as padded floats (PaddedPlanes), `planes.slots` apart.
inline int read_sample_planes(const DeformProblem& p, int64_t n, const PaddedPlanes& planes, float* out, int threads,
                              const Conversions16* conversions) {
  return run_tasks(p.geometry.in_channels, threads, "deformable convolution", [&](int64_t c) {
    float* plane = out + c * planes.slots;
    std::fill(plane, plane + planes.pitch, 0.0f);
    for (int64_t r = 0; r < planes.height; ++r) {
      float* row = plane + planes.slot(r, 0);
      row[-1] = 0.0f, row[planes.width] = 0.0f;
      read_plane_floats(p.input, MathMode::kFull, n, c, r * planes.width, planes.width, row, conversions);
    }
    std::fill(plane + planes.zero_base(), plane + planes.slots, 0.0f);
  });
}

// The weights of each group packed once per run for every block's product: W_g (OCg x Cg*K) or, transposed,
// W_g^T (Cg*K x OCg), as the GEMM's PackedLeft; read through a dense float copy where they are not one.
class PackedWeights {
 public:
  PackedWeights() = default;
  PackedWeights(const DeformProblem& p, StepBuilder& b, const GemmBlocking& blocking, bool transposed)
      : weight_(p.weight), groups_(p.geometry.groups), blocking_(blocking), transposed_(transposed) {
    const DeformGeometry& g = p.geometry;
    outputs_ = g.out_per_group(), depth_ = g.in_per_group() * g.kernel_points();
    floats_ =
        transposed ? packed_left_floats(blocking, depth_, outputs_) : packed_left_floats(blocking, outputs_, depth_);
    if (!float_in_place(p.weight, MathMode::kFull))
      dense_ = b.book_scratch("deform.weights", size_product({p.weight.numel()}), sizeof(float));
    packed_ = b.book_scratch("deform.packed_weights", size_product({g.groups, floats_}), sizeof(float));
  }
  int pack(const Workspace& w, int threads, const Conversions16* conversions) const {
    if (outputs_ == 0 || depth_ == 0) return 0;  // (no product to pack for)
    const float* weights = dense_float_data(weight_);
    if (dense_ >= 0) {
      pack_dense(weight_, MathMode::kFull, w.at<float>(dense_), threads, conversions);
      weights = w.at<float>(dense_);
    }
    float* packed = w.at<float>(packed_);
    return run_tasks(groups_, threads, "deformable convolution", [&](int64_t group) {
      const MatrixRef matrix{weights + group * outputs_ * depth_, depth_, transposed_};
      pack_left(blocking_, transposed_ ? depth_ : outputs_, transposed_ ? outputs_ : depth_, matrix,
                packed + group * floats_, transposed_ ? outputs_ : depth_, 0);
    });
  }
  PackedLeft group(const Workspace& w, int64_t group) const {
    return PackedLeft{w.at<float>(packed_) + group * floats_, transposed_ ? outputs_ : depth_, 0};
  }

 private:
  View5 weight_;
  int64_t groups_ = 0;
  GemmBlocking blocking_;
  bool transposed_ = false;
  int64_t outputs_ = 0, depth_ = 0, floats_ = 0;
  WorkspaceLedger::Handle dense_ = -1, packed_ = -1;
};

}  // namespace aclnn_cpu
