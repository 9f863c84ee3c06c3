// gradBias: the sum of gradOutput over samples and positions per channel, in eight double lanes per
// channel (element w of a row goes to lane w % 8), the lanes added in order (declared in pack.h).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/dtype.h"
#include "kernels/common/convert.h"
#include "kernels/common/element_type.h"
#include "kernels/common/pack.h"

namespace aclnn_cpu {
namespace {

constexpr int64_t kMaxBiasBlock = 64;  // channels per gradBias task, at most (their lanes on the stack)

// out[c] = the sum of a channel's eight lanes (lane l at lanes[l * lane_step]), in lane order.
void store_lane_sum(const View5& out, int64_t c, const double* lanes, int64_t lane_step) {
  double sum = 0.0;
  for (int l = 0; l < 8; ++l) sum += lanes[l * lane_step];
  store_element(out.data, out.dtype, out.element(0, c, 0, 0, 0), sum);
}

// out[i] = in[i] as float (exact) for a run of FLOAT16 or BF16 values.
template <typename Half>
void widen_run(const Half* in, int64_t count, float* out, const Conversions16* conversions) {
  if (count >= 1 && conversions != nullptr) {
    const auto* bits = reinterpret_cast<const uint16_t*>(in);
    std::is_same_v<Half, Eigen::half> ? conversions->halves_to_floats(bits, out, count)
                                      : conversions->bf16_to_floats(bits, out, count);
    return;
  }
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
}

// lanes[w % 8] += plane (n, c) of dy's element (d, h, w), over d, h and w in that order (the lanes
// of one sample's channel; `vectors`, the kit's conversions: contiguous rows through their lane sums,
// the same order; null: the portable loop).
template <typename T>
void add_plane_lanes(const View5& dy, const T* base, int64_t n, int64_t c, const Conversions16* vectors,
                     double* lanes) {
  const int64_t width = dy.shape[4], rows = width == 0 ? 0 : dy.shape[2] * dy.shape[3];
  if constexpr (std::is_same_v<T, float>) {
    if (vectors != nullptr) {  // a plane's rows with the lanes in registers
      for (int64_t d = 0; rows > 0 && d < dy.shape[2]; ++d) {
        vectors->add_to_double_lanes(base + dy.element(n, c, d, 0, 0), dy.shape[3], dy.stride[3], width, lanes);
      }
      return;
    }
  }
  if constexpr (sizeof(T) == 2) {
    if (vectors != nullptr) {  // a plane's rows (FLOAT16, BF16) widened in registers, the lanes in registers
      for (int64_t d = 0; rows > 0 && d < dy.shape[2]; ++d) {
        vectors->add_halves_to_double_lanes(reinterpret_cast<const uint16_t*>(base + dy.element(n, c, d, 0, 0)),
                                            dy.dtype == ACL_BF16, dy.shape[3], dy.stride[3], width, lanes);
      }
      return;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = base + dy.element(n, c, r / dy.shape[3], r % dy.shape[3], 0);
    const int64_t step = dy.stride[4];
    int64_t w = 0;
    for (; w + 8 <= width; w += 8) {
      for (int j = 0; j < 8; ++j) lanes[j] += element_as_double(in[(w + j) * step]);
    }
    for (; w < width; ++w) lanes[w % 8] += element_as_double(in[w * step]);
  }
}

}  // namespace

void add_float_planes_lanes(const View5& plane, const float* data, int64_t channels, int64_t channel_stride,
                            double* lanes, const Conversions16* conversions) {
  if (conversions != nullptr && plane.stride[4] == 1) {  // the channels' rows side by side, the same lanes
    const int64_t width = plane.shape[4];
    for (int64_t d = 0; width > 0 && d < plane.shape[2]; ++d) {
      conversions->add_channels_to_double_lanes(data + d * plane.stride[2], channels, channel_stride, plane.shape[3],
                                                plane.stride[3], width, lanes);
    }
    return;
  }
  for (int64_t c = 0; c < channels; ++c) {
    add_plane_lanes(plane, data + c * channel_stride, 0, 0, nullptr, lanes + c * 8);
  }
}

void store_bias_lanes(const double* lanes, int64_t samples, const View5& out) {
  const int64_t channels = out.shape[1];
  for (int64_t c = 0; c < channels; ++c) {
    double sum[8] = {};
    for (int64_t n = 0; n < samples; ++n) {
      for (int l = 0; l < 8; ++l) sum[l] += lanes[(n * channels + c) * 8 + l];
    }
    store_lane_sum(out, c, sum, 1);
  }
}

void reduce_bias(const View5& dy, const View5& out, int threads, const Conversions16* conversions) {
  if (may_overlap(out)) threads = 1;  // one thread writes the channels in order
  (void)threads;
  // An empty gradOutput (its data may be null) sums to zeros: no element address is formed.
  const int64_t width = dy.shape[4], rows = width == 0 ? 0 : dy.shape[2] * dy.shape[3];
  if (dy.stride[1] == 1 && dy.stride[4] != 1 && dy.shape[1] > 1) {  // channels last (TBC): blocks of channels
    with_element_type(dy, [&](auto* base) {                         // side by side, the same lanes and order
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int64_t c0 = 0; c0 < dy.shape[1]; c0 += kMaxBiasBlock) {
        const int64_t count = std::min(kMaxBiasBlock, dy.shape[1] - c0);
        double lanes[8][kMaxBiasBlock] = {};  // lane-major: a position's channels add side by side
        float converted[kMaxBiasBlock];       // a FLOAT16/BF16 position's channels, widened exactly
        for (int64_t n = 0; n < dy.shape[0]; ++n) {
          double sample[8][kMaxBiasBlock] = {};  // this sample's lanes, added to the sum of the ones before
          for (int64_t r = 0; r < rows; ++r) {
            const auto* row = base + dy.element(n, c0, r / dy.shape[3], r % dy.shape[3], 0);
            for (int64_t w = 0; w < width; ++w) {
              const auto* in = row + w * dy.stride[4];
              // Positions are a row of B·C apart (TBC): the block's entries a page apart, which the
              // hardware prefetchers do not follow, so the ones 16 positions on are asked for here.
              if (w + 16 < width) {
                const char* ahead = reinterpret_cast<const char*>(in + 16 * dy.stride[4]);
                for (int64_t b = 0; b < count * int64_t(sizeof(*in)); b += 64) __builtin_prefetch(ahead + b);
              }
              double* lane = sample[w % 8];
              if constexpr (sizeof(*in) == 2) {  // converted as a run (the kit's where it has them), then added
                widen_run(in, count, converted, conversions);
                for (int64_t c = 0; c < count; ++c) lane[c] += converted[c];
              } else {
                for (int64_t c = 0; c < count; ++c) lane[c] += element_as_double(in[c]);
              }
            }
          }
          for (int l = 0; l < 8; ++l) {
            for (int64_t c = 0; c < count; ++c) lanes[l][c] += sample[l][c];
          }
        }
        for (int64_t c = 0; c < count; ++c) store_lane_sum(out, c0 + c, &lanes[0][c], kMaxBiasBlock);
      }
    });
    return;
  }
  // Contiguous rows through the kit's lane sums (FLOAT16 and BF16 widened exactly): the same lanes, the
  // same order.
  const bool vector_rows =
      dy.stride[4] == 1 && (dy.dtype == ACL_FLOAT || dy.dtype == ACL_FLOAT16 || dy.dtype == ACL_BF16);
  const Conversions16* row_sums = vector_rows ? conversions : nullptr;
  // Blocks of channels, each block's planes read sample by sample (memory order: one stream), each
  // channel's sum over its own lanes: the blocking changes no bit.
  const int64_t channels = dy.shape[1];
  const int64_t block =
      std::clamp<int64_t>((channels + 4 * threads - 1) / (4 * std::max(1, threads)), 1, kMaxBiasBlock);
  with_element_type(dy, [&](auto* base) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t c0 = 0; c0 < channels; c0 += block) {
      const int64_t c1 = std::min(channels, c0 + block);
      // Eight fixed lanes per channel (element w goes to lane w % 8): vectorises, same order every run.
      double all_lanes[kMaxBiasBlock * 8] = {};
      for (int64_t n = 0; n < dy.shape[0]; ++n) {
        for (int64_t c = c0; c < c1; ++c) {
          double lanes[8] = {};  // this sample's, added to the sum of the ones before
          add_plane_lanes(dy, base, n, c, row_sums, lanes);
          for (int l = 0; l < 8; ++l) all_lanes[(c - c0) * 8 + l] += lanes[l];
        }
      }
      for (int64_t c = c0; c < c1; ++c) store_lane_sum(out, c, all_lanes + (c - c0) * 8, 1);
    }
  });
}

}  // namespace aclnn_cpu
