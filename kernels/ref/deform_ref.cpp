// The deformable convolution's reference entries: gather-form loops in double precision over the
// user's views (kernels/core/deform_problem.h gives the formulas), each result element formed by one
// task in a fixed order and rounded once into its dtype: bit-identical for any thread count. Last in
// every deformable list and the oracle of its other entries; clarity over speed.
//
// The sampling point h = (oh*s - p + k*d) + dy is formed in double (exactly for an integer and a shift
// of magnitudes within 2^29 of each other), then floor(h) and the fractions from it. The forward counts each neighbour
// outside the image as zero; the backward, as CANN's and torchvision's do, takes a point only where -1 < h < inH and -1
// < w < inW (the same values, but for an Inf or NaN neighbour the forward multiplies by a zero weight).
#include "kernels/ref/deform_ref.h"

#include <cmath>
#include <memory>
#include <vector>

#include "common/dtype.h"
#include "kernels/common/pack.h"
#include "kernels/common/tasks.h"

namespace aclnn_cpu {
namespace {

double at(const View5& v, int64_t n, int64_t c, int64_t h, int64_t w) {
  return load_element(v.data, v.dtype, v.element(n, c, 0, h, w));
}
void put(const View5& v, int64_t n, int64_t c, int64_t h, int64_t w, double value) {
  store_element(v.data, v.dtype, v.element(n, c, 0, h, w), value);
}

// One sampling point of deformable group `d`, kernel point (kh, kw), at output (oh, ow) of sample n.
struct SamplePoint {
  double h = 0, w = 0, mask = 0;
  int64_t h0 = 0, w0 = 0;  // floor(h), floor(w)
  double lh = 0, lw = 0;   // h - h0, w - w0

  SamplePoint(const DeformProblem& p, int64_t n, int64_t d, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
    const DeformGeometry& g = p.geometry;
    const int64_t k = kh * g.kernel[1] + kw;
    const double dx = at(p.offset, n, g.offset_channel(0, d, k), oh, ow);
    const double dy = at(p.offset, n, g.offset_channel(1, d, k), oh, ow);
    mask = at(p.offset, n, g.offset_channel(2, d, k), oh, ow);
    h = static_cast<double>(oh * g.stride[0] - g.pad[0] + kh * g.dilation[0]) + dy;
    w = static_cast<double>(ow * g.stride[1] - g.pad[1] + kw * g.dilation[1]) + dx;
    const double fh = std::floor(h), fw = std::floor(w);
    lh = h - fh, lw = w - fw;
    // (outside int64 only far outside the image: clamped, still outside)
    h0 = static_cast<int64_t>(std::fmax(-2.0, std::fmin(fh, 4e9)));
    w0 = static_cast<int64_t>(std::fmax(-2.0, std::fmin(fw, 4e9)));
  }
  // The backward's guard: -1 < h < inH and -1 < w < inW (NaN fails it).
  bool inside(const DeformGeometry& g) const {
    return h > -1 && h < static_cast<double>(g.in_size[0]) && w > -1 && w < static_cast<double>(g.in_size[1]);
  }
  // Neighbour i = 2*a + b is (h0 + a, w0 + b), with bilinear weight (a ? lh : 1-lh) * (b ? lw : 1-lw).
  int64_t row(int i) const { return h0 + i / 2; }
  int64_t column(int i) const { return w0 + i % 2; }
  double weight(int i) const { return (i / 2 ? lh : 1 - lh) * (i % 2 ? lw : 1 - lw); }
  bool in_image(const DeformGeometry& g, int i) const {
    return row(i) >= 0 && row(i) < g.in_size[0] && column(i) >= 0 && column(i) < g.in_size[1];
  }
  // x[n, c] bilinearly sampled here (neighbours outside the image count zero), times the mask.
  double value(const DeformProblem& p, int64_t n, int64_t c) const {
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
      if (in_image(p.geometry, i)) sum += weight(i) * at(p.input, n, c, row(i), column(i));
    }
    return mask * sum;
  }
};

// Outputs whose views may overlap themselves are written by one thread in view order (last write wins).
int threads_for(const DeformProblem& p, std::initializer_list<const View5*> outputs) {
  for (const View5* v : outputs) {
    if (may_overlap(*v)) return 1;
  }
  return p.max_threads;
}

// --- forward: out per (n, o) plane, then deformOut per (n, c) plane ------------------------------
class RefForward final : public OperatorStep {
 public:
  explicit RefForward(const DeformProblem& p) : p_(p), threads_(threads_for(p, {&p.output, &p.columns})) {}
  int run(const Workspace&) const override {
    const DeformGeometry& g = p_.geometry;
    int status = run_tasks(g.batch * g.out_channels, threads_, "reference", [&](int64_t t) {
      const int64_t n = t / g.out_channels, o = t % g.out_channels, first = o / g.out_per_group() * g.in_per_group();
      for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
        for (int64_t ow = 0; ow < g.out_size[1]; ++ow) {
          double sum = 0;
          for (int64_t ci = 0; ci < g.in_per_group(); ++ci) {
            const int64_t c = first + ci, d = c / g.in_per_deformable_group();
            for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
              for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
                sum += at(p_.weight, o, ci, kh, kw) * SamplePoint(p_, n, d, kh, kw, oh, ow).value(p_, n, c);
              }
            }
          }
          put(p_.output, n, o, oh, ow, sum + (p_.has_bias ? at(p_.bias, 0, o, 0, 0) : 0.0));
        }
      }
    });
    if (status != 0 || !p_.want_columns) return status;
    return run_tasks(g.batch * g.in_channels, threads_, "reference", [&](int64_t t) {
      const int64_t n = t / g.in_channels, c = t % g.in_channels, d = c / g.in_per_deformable_group();
      for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
        for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
          for (int64_t ow = 0; ow < g.out_size[1]; ++ow) {
            for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
              put(p_.columns, n, c, oh * g.kernel[0] + kh, ow * g.kernel[1] + kw,
                  SamplePoint(p_, n, d, kh, kw, oh, ow).value(p_, n, c));
            }
          }
        }
      }
    });
  }
  int64_t tasks() const override { return p_.geometry.batch * p_.geometry.out_channels; }

 private:
  DeformProblem p_;
  int threads_;
};

// gradOutput carried back to column (n, c, kh, kw) at (oh, ow): sum over the outputs of c's group of
// gradOutput times the weight.
double column_gradient(const DeformProblem& p, int64_t n, int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const DeformGeometry& g = p.geometry;
  const int64_t group = c / g.in_per_group(), ci = c % g.in_per_group();
  double sum = 0;
  for (int64_t o = group * g.out_per_group(); o < (group + 1) * g.out_per_group(); ++o)
    sum += at(p.grad_output, n, o, oh, ow) * at(p.weight, o, ci, kh, kw);
  return sum;
}

// --- backward data: gradInput per (n, c) plane (scattered into a double plane), then gradOffset per
// (n, block, deformable group) ------------------------------------------------------------------
class RefBackwardData final : public OperatorStep {
 public:
  RefBackwardData(const DeformProblem& p, StepBuilder& b)
      : p_(p), threads_(threads_for(p, {&p.grad_input, &p.grad_offset})) {
    const DeformGeometry& g = p.geometry;
    plane_ = b.book_scratch("deform_ref.plane", static_cast<uint64_t>(g.in_size[0] * g.in_size[1]), sizeof(double),
                            static_cast<uint64_t>(threads_));
  }
  int run(const Workspace& workspace) const override {
    const DeformGeometry& g = p_.geometry;
    const int64_t plane = g.in_size[0] * g.in_size[1];
    int status = run_tasks(g.batch * g.in_channels, threads_, "reference", [&](int64_t t) {
      const int64_t n = t / g.in_channels, c = t % g.in_channels, d = c / g.in_per_deformable_group();
      double* sums = workspace.at<double>(plane_, thread_index());
      std::fill(sums, sums + plane, 0.0);
      for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
        for (int64_t ow = 0; ow < g.out_size[1]; ++ow) {
          for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
            for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
              const SamplePoint s(p_, n, d, kh, kw, oh, ow);
              if (!s.inside(g)) continue;
              const double carried = s.mask * column_gradient(p_, n, c, kh, kw, oh, ow);
              for (int i = 0; i < 4; ++i) {
                if (s.in_image(g, i)) sums[s.row(i) * g.in_size[1] + s.column(i)] += carried * s.weight(i);
              }
            }
          }
        }
      }
      for (int64_t h = 0; h < g.in_size[0]; ++h) {
        for (int64_t w = 0; w < g.in_size[1]; ++w) put(p_.grad_input, n, c, h, w, sums[h * g.in_size[1] + w]);
      }
    });
    if (status != 0) return status;
    // gradOffset per (n, block, d): its channels in view order, so that one thread (an output that
    // overlaps itself) writes in view order; each task forms its block's value of every sampling point.
    return run_tasks(g.batch * 3 * g.deformable_groups, threads_, "reference", [&](int64_t t) {
      const int64_t n = t / (3 * g.deformable_groups), d = t % g.deformable_groups;
      const int block = static_cast<int>(t / g.deformable_groups % 3);
      for (int64_t k = 0; k < g.kernel_points(); ++k) {
        for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
          for (int64_t ow = 0; ow < g.out_size[1]; ++ow) {
            put(p_.grad_offset, n, g.offset_channel(block, d, k), oh, ow, offset_gradient(n, d, k, block, oh, ow));
          }
        }
      }
    });
  }
  int64_t tasks() const override { return p_.geometry.batch * p_.geometry.in_channels; }

 private:
  // The gradient of offset block `block` (0 dx, 1 dy, 2 the mask) of deformable group d, kernel point k
  // at (oh, ow): a sum over the group's channels.
  double offset_gradient(int64_t n, int64_t d, int64_t k, int block, int64_t oh, int64_t ow) const {
    const DeformGeometry& g = p_.geometry;
    const int64_t kh = k / g.kernel[1], kw = k % g.kernel[1];
    const SamplePoint s(p_, n, d, kh, kw, oh, ow);
    if (!s.inside(g)) return 0;
    double sum = 0;
    for (int64_t c = d * g.in_per_deformable_group(); c < (d + 1) * g.in_per_deformable_group(); ++c) {
      const double gradient = column_gradient(p_, n, c, kh, kw, oh, ow);
      double v[4] = {0, 0, 0, 0};
      for (int i = 0; i < 4; ++i) {
        if (s.in_image(g, i)) v[i] = at(p_.input, n, c, s.row(i), s.column(i));
      }
      // d(weight_i)/dw and d(weight_i)/dh, for the neighbours (h0,w0), (h0,w1), (h1,w0), (h1,w1)
      if (block == 0) sum += gradient * s.mask * ((v[1] - v[0]) * (1 - s.lh) + (v[3] - v[2]) * s.lh);
      if (block == 1) sum += gradient * s.mask * ((v[2] - v[0]) * (1 - s.lw) + (v[3] - v[1]) * s.lw);
      if (block == 2) {
        double sample = 0;
        for (int i = 0; i < 4; ++i) sample += s.weight(i) * v[i];
        sum += gradient * sample;
      }
    }
    return sum;
  }

  DeformProblem p_;
  int threads_;
  WorkspaceLedger::Handle plane_ = -1;
};

// --- gradWeight per (o, ci, kh, kw), gradBias per o ---------------------------------------------
class RefBackwardWeight final : public OperatorStep {
 public:
  explicit RefBackwardWeight(const DeformProblem& p) : p_(p), threads_(threads_for(p, {&p.grad_weight})) {}
  int run(const Workspace&) const override {
    const DeformGeometry& g = p_.geometry;
    return run_tasks(g.out_channels, threads_, "reference", [&](int64_t o) {
      const int64_t first = o / g.out_per_group() * g.in_per_group();
      for (int64_t ci = 0; ci < g.in_per_group(); ++ci) {
        for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
          for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
            double sum = 0;
            for (int64_t n = 0; n < g.batch; ++n) {
              for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
                for (int64_t ow = 0; ow < g.out_size[1]; ++ow) {
                  sum += at(p_.grad_output, n, o, oh, ow) *
                         at(p_.columns, n, first + ci, oh * g.kernel[0] + kh, ow * g.kernel[1] + kw);
                }
              }
            }
            put(p_.grad_weight, o, ci, kh, kw, sum);
          }
        }
      }
    });
  }
  int64_t tasks() const override { return p_.geometry.out_channels; }

 private:
  DeformProblem p_;
  int threads_;
};

class RefBias final : public OperatorStep {
 public:
  explicit RefBias(const DeformProblem& p) : p_(p), threads_(threads_for(p, {&p.grad_bias})) {}
  int run(const Workspace&) const override {
    const DeformGeometry& g = p_.geometry;
    return run_tasks(g.out_channels, threads_, "reference", [&](int64_t o) {
      double sum = 0;
      for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t oh = 0; oh < g.out_size[0]; ++oh) {
          for (int64_t ow = 0; ow < g.out_size[1]; ++ow) sum += at(p_.grad_output, n, o, oh, ow);
        }
      }
      put(p_.grad_bias, 0, o, 0, 0, sum);
    });
  }
  int64_t tasks() const override { return p_.geometry.out_channels; }

 private:
  DeformProblem p_;
  int threads_;
};

Support supports_all(const DeformProblem&, const CpuFeatures&) { return kSupported; }

}  // namespace

extern const DeformImpl kDeformRefForward = {
    "ref", "ref", DeformPass::kForward, supports_all,
    [](const DeformProblem& p, StepBuilder&) { return std::unique_ptr<OperatorStep>(new RefForward(p)); }};
extern const DeformImpl kDeformRefBackwardData = {
    "ref", "ref", DeformPass::kBackwardData, supports_all,
    [](const DeformProblem& p, StepBuilder& b) { return std::unique_ptr<OperatorStep>(new RefBackwardData(p, b)); }};
extern const DeformImpl kDeformRefBackwardWeight = {
    "ref", "ref", DeformPass::kBackwardWeight, supports_all,
    [](const DeformProblem& p, StepBuilder&) { return std::unique_ptr<OperatorStep>(new RefBackwardWeight(p)); }};
extern const DeformImpl kDeformRefBias = {
    "ref", "ref", DeformPass::kBias, supports_all,
    [](const DeformProblem& p, StepBuilder&) { return std::unique_ptr<OperatorStep>(new RefBias(p)); }};

}  // namespace aclnn_cpu
