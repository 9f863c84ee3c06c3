#include "support/conv_oracle.h"

#include <cstddef>

namespace testing_support {
namespace {

// Unit-padded 3-D spatial description.
struct Space {
  int64_t size[3] = {1, 1, 1};
  int64_t count() const { return size[0] * size[1] * size[2]; }
  int64_t index(const int64_t (&p)[3]) const { return (p[0] * size[1] + p[1]) * size[2] + p[2]; }
};

Space space_of(const std::vector<int64_t>& sizes) {
  Space s;
  const size_t first = 3 - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) s.size[first + i] = sizes[i];
  return s;
}

int64_t at3(const std::vector<int64_t>& values, size_t i, int64_t fallback) {
  const size_t first = 3 - values.size();
  return i < first ? fallback : values[i - first];
}

}  // namespace

int64_t product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

std::vector<int64_t> ConvSpec::output_size() const {
  std::vector<int64_t> out(input_size.size());
  for (size_t i = 0; i < input_size.size(); ++i) {
    const int64_t span = dilation[i] * (kernel[i] - 1) + 1;
    out[i] = transposed ? (input_size[i] - 1) * stride[i] - pad_lo[i] - pad_hi[i] + span + output_padding[i]
                        : (input_size[i] + pad_lo[i] + pad_hi[i] - span) / stride[i] + 1;
  }
  return out;
}

std::vector<int64_t> ConvSpec::input_shape() const {
  std::vector<int64_t> shape = {batch, in_channels};
  shape.insert(shape.end(), input_size.begin(), input_size.end());
  return shape;
}

std::vector<int64_t> ConvSpec::weight_shape() const {
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{in_channels, out_channels / groups}
                                          : std::vector<int64_t>{out_channels, in_channels / groups};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  return shape;
}

std::vector<int64_t> ConvSpec::grad_output_shape() const {
  std::vector<int64_t> shape = {batch, out_channels};
  const std::vector<int64_t> out = output_size();
  shape.insert(shape.end(), out.begin(), out.end());
  return shape;
}

namespace {

// Calls pair(xi, yi, wi) for every product x[xi] * w[wi] that the forward relation adds into y[yi].
template <typename Pair>
void for_each_product(const ConvSpec& c, Pair pair) {
  const Space xs = space_of(c.input_size), ys = space_of(c.output_size()), ks = space_of(c.kernel);
  const int64_t cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  // The forward relation pairs a "from" position f with a "to" position t = f*s - p + k*d:
  // direct: f runs over the output (gradOutput), t over the input; transposed: f over the input,
  // t over the output, and the weight's first dim indexes input channels.
  const Space& from = c.transposed ? xs : ys;
  const Space& to = c.transposed ? ys : xs;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t grp = 0; grp < c.groups; ++grp) {
      for (int64_t ic = 0; ic < cin_g; ++ic) {
        for (int64_t oc = 0; oc < cout_g; ++oc) {
          const int64_t ci = grp * cin_g + ic, co = grp * cout_g + oc;
          const int64_t w_base = c.transposed ? (ci * cout_g + oc) * ks.count() : (co * cin_g + ic) * ks.count();
          for (int64_t f = 0; f < from.count(); ++f) {
            const int64_t fp[3] = {f / (from.size[1] * from.size[2]), f / from.size[2] % from.size[1],
                                   f % from.size[2]};
            for (int64_t k = 0; k < ks.count(); ++k) {
              const int64_t kp[3] = {k / (ks.size[1] * ks.size[2]), k / ks.size[2] % ks.size[1], k % ks.size[2]};
              int64_t tp[3];
              bool inside = true;
              for (size_t a = 0; a < 3; ++a) {
                tp[a] = fp[a] * at3(c.stride, a, 1) - at3(c.pad_lo, a, 0) + kp[a] * at3(c.dilation, a, 1);
                inside = inside && tp[a] >= 0 && tp[a] < to.size[a];
              }
              if (!inside) continue;
              const int64_t xi = (n * c.in_channels + ci) * xs.count() + (c.transposed ? f : to.index(tp));
              const int64_t yi = (n * c.out_channels + co) * ys.count() + (c.transposed ? to.index(tp) : f);
              pair(xi, yi, w_base + k);
            }
          }
        }
      }
    }
  }
}

}  // namespace

ConvSpec make_spec(int spatial, int64_t n, int64_t cin, int64_t cout, int64_t groups, std::vector<int64_t> size,
                   std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> lo, std::vector<int64_t> hi,
                   std::vector<int64_t> d, bool transposed, std::vector<int64_t> op) {
  ConvSpec c;
  c.spatial = spatial;
  c.batch = n;
  c.in_channels = cin;
  c.out_channels = cout;
  c.groups = groups;
  c.input_size = std::move(size);
  c.kernel = std::move(k);
  c.stride = std::move(s);
  c.pad_lo = std::move(lo);
  c.pad_hi = std::move(hi);
  c.dilation = std::move(d);
  c.transposed = transposed;
  c.output_padding = op.empty() ? std::vector<int64_t>(c.input_size.size(), 0) : std::move(op);
  return c;
}

ConvGrads oracle_backward(const ConvSpec& c, const std::vector<double>& x, const std::vector<double>& w,
                          const std::vector<double>& gy) {
  const int64_t plane = space_of(c.output_size()).count();
  ConvGrads g;
  g.grad_input.assign(x.size(), 0.0);
  g.grad_weight.assign(w.size(), 0.0);
  g.grad_bias.assign(static_cast<size_t>(c.out_channels), 0.0);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t co = 0; co < c.out_channels; ++co) {
      for (int64_t o = 0; o < plane; ++o) g.grad_bias[co] += gy[(n * c.out_channels + co) * plane + o];
    }
  }
  for_each_product(c, [&](int64_t xi, int64_t yi, int64_t wi) {
    g.grad_input[xi] += gy[yi] * w[wi];
    g.grad_weight[wi] += gy[yi] * x[xi];
  });
  return g;
}

std::vector<double> oracle_forward(const ConvSpec& c, const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& bias) {
  const int64_t plane = space_of(c.output_size()).count();
  std::vector<double> y(static_cast<size_t>(c.batch * c.out_channels * plane), 0.0);
  for_each_product(c, [&](int64_t xi, int64_t yi, int64_t wi) { y[yi] += x[xi] * w[wi]; });
  if (!bias.empty()) {
    for (size_t i = 0; i < y.size(); ++i) y[i] += bias[i / plane % c.out_channels];
  }
  return y;
}

}  // namespace testing_support
