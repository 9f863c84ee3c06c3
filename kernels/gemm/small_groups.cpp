#include "kernels/gemm/small_groups.h"

#include <algorithm>
#include <vector>

#include "kernels/gemm/im2col.h"
#include "kernels/gemm/tasks.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kMaxChannelProduct = 16;

struct Sizes {
  int64_t cin, cout, src_plane, dst_plane, kernel_volume;
  explicit Sizes(const ConvGeometry& g)
      : cin(g.src_channels_per_group),
        cout(g.dst_channels_per_group),
        src_plane(g.src_size[0] * g.src_size[1] * g.src_size[2]),
        dst_plane(g.dst_size[0] * g.dst_size[1] * g.dst_size[2]),
        kernel_volume(g.kernel[0] * g.kernel[1] * g.kernel[2]) {}
};

}  // namespace

bool use_direct_loops(const ConvGeometry& g) {
  return g.src_channels_per_group * g.dst_channels_per_group <= kMaxChannelProduct;
}

// One task per (sample, input channel): dx[ci] = sum over oc, taps of w * dy[oc] (scattered).
void direct_backward_data(const ConvGeometry& g, const float* w, const float* dy, float* dx, int threads) {
  const Sizes s(g);
  const int64_t channels = g.groups * s.cin;
  run_tasks(g.batch * channels, threads, [&](int64_t t) {
    const int64_t n = t / channels, ci = t % channels, grp = ci / s.cin, ic = ci % s.cin;
    float* out = dx + t * s.src_plane - ic * s.src_plane;  // channel 0 of the group slice
    std::fill_n(out + ic * s.src_plane, s.src_plane, 0.0f);
    for (int64_t oc = 0; oc < s.cout; ++oc) {
      const int64_t co = grp * s.cout + oc;
      const float* taps = w + (co * s.cin + ic) * s.kernel_volume;
      const float* grad = dy + (n * g.groups * s.cout + co) * s.dst_plane;
      for_each_run(
          g, ic * s.kernel_volume, (ic + 1) * s.kernel_volume, 0, s.dst_plane, [](int64_t, int64_t, int64_t) {},
          [&](int64_t r, int64_t o, int64_t to, int64_t step, int64_t count) {
            const float weight = taps[r % s.kernel_volume];
            for (int64_t i = 0; i < count; ++i) out[to + i * step] += weight * grad[o + i];
          });
    }
  });
}

// One task per (sample, output channel): y[co] = sum over ic, taps of w * x[ic] (gathered).
void direct_forward(const ConvGeometry& g, const float* x, const float* w, float* y, int threads) {
  const Sizes s(g);
  const int64_t channels = g.groups * s.cout;
  run_tasks(g.batch * channels, threads, [&](int64_t t) {
    const int64_t n = t / channels, co = t % channels, grp = co / s.cout;
    float* out = y + t * s.dst_plane;
    std::fill_n(out, s.dst_plane, 0.0f);
    const float* src = x + (n * g.groups + grp) * s.cin * s.src_plane;  // channel 0 of the group slice
    const float* taps = w + co * s.cin * s.kernel_volume;                // rows ic*K + k
    for_each_run(
        g, 0, s.cin * s.kernel_volume, 0, s.dst_plane, [](int64_t, int64_t, int64_t) {},
        [&](int64_t r, int64_t o, int64_t from, int64_t step, int64_t count) {
          const float weight = taps[r];
          for (int64_t i = 0; i < count; ++i) out[o + i] += weight * src[from + i * step];
        });
  });
}

// One task per output channel: dw[co, ic, k] = sum over samples and runs of dy[co] . x[ic].
void direct_backward_weight(const ConvGeometry& g, const float* x, const float* dy, float* dw, int threads) {
  const Sizes s(g);
  const int64_t channels = g.groups * s.cout;
  run_tasks(channels, threads, [&](int64_t co) {
    const int64_t grp = co / s.cout;
    float* out = dw + co * s.cin * s.kernel_volume;  // rows ic*K + k
    std::fill_n(out, s.cin * s.kernel_volume, 0.0f);
    for (int64_t n = 0; n < g.batch; ++n) {
      const float* src = x + (n * g.groups + grp) * s.cin * s.src_plane;
      const float* grad = dy + (n * channels + co) * s.dst_plane;
      for_each_run(
          g, 0, s.cin * s.kernel_volume, 0, s.dst_plane, [](int64_t, int64_t, int64_t) {},
          [&](int64_t r, int64_t o, int64_t from, int64_t step, int64_t count) {
            float sum = 0.0f;
            for (int64_t i = 0; i < count; ++i) sum += grad[o + i] * src[from + i * step];
            out[r] += sum;
          });
    }
  });
}

}  // namespace aclnn_cpu
