#include "kernels/common/pack.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "common/dtype.h"
#include "kernels/common/convert.h"
#include "kernels/common/element_type.h"
#include "kernels/common/runs.h"

namespace aclnn_cpu {

bool is_dense_float(const View5& view) { return view.dtype == ACL_FLOAT && is_dense(view); }

bool narrowable_rows(const View5& view) {
  return (view.dtype == ACL_FLOAT16 || view.dtype == ACL_BF16) && planes_contiguous(view);
}

bool float_in_place(const View5& view, MathMode math) { return math == MathMode::kFull && is_dense_float(view); }

namespace {
constexpr int64_t kDenseChunk = int64_t{1} << 16;  // elements per task of a whole-tensor conversion
}  // namespace

bool is_dense(const View5& view) {
  int64_t expected = 1;
  for (int i = 4; i >= 0; --i) {
    if (view.shape[i] != 1 && view.stride[i] != expected) return false;
    expected *= view.shape[i];
  }
  return true;
}

bool planes_contiguous(const View5& view) {
  // (W's stride must be 1 even when W is a unit dim: the run steps along it.)
  return view.stride[4] == 1 && (view.shape[3] == 1 || view.stride[3] == view.shape[4]) &&
         (view.shape[2] == 1 || view.stride[2] == view.shape[3] * view.shape[4]);
}

namespace {
// Whether planes (n, c0 .. c0 + channels - 1) of the view are each contiguous and inside it.
bool contiguous_planes_inside(const View5& view, int64_t n, int64_t c0, int64_t channels) {
  return view.data != nullptr && planes_contiguous(view) && n >= 0 && n < view.shape[0] && c0 >= 0 && channels > 0 &&
         channels <= view.shape[1] - c0;
}
}  // namespace

void prefetch_planes(const View5& view, int64_t n, int64_t c0, int64_t channels) {
  if (!contiguous_planes_inside(view, n, c0, channels)) return;
  const int64_t bytes = view.shape[2] * view.shape[3] * view.shape[4] * static_cast<int64_t>(dtype_size(view.dtype));
  for (int64_t c = c0; c < c0 + channels; ++c) {
    const char* plane = static_cast<const char*>(view.data) + view.element(n, c, 0, 0, 0) * dtype_size(view.dtype);
    for (int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(plane + at);
  }
}

void prefetch_plane_positions(const View5& view, int64_t n, int64_t c0, int64_t channels, int64_t first,
                              int64_t count) {
  const int64_t plane = view.shape[2] * view.shape[3] * view.shape[4];
  if (!contiguous_planes_inside(view, n, c0, channels) || first < 0 || count <= 0 || count > plane - first) return;
  const auto size = static_cast<int64_t>(dtype_size(view.dtype));
  for (int64_t c = c0; c < c0 + channels; ++c) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(view.data) + uintptr_t(view.element(n, c, 0, 0, first) * size);
    for (uintptr_t line = begin & ~uintptr_t{63}; line < begin + uintptr_t(count * size); line += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
  }
}

void store_zeros(const View5& out, int threads) {
  (void)threads;
  if (out.numel() == 0) return;
  const auto size = static_cast<int64_t>(dtype_size(out.dtype));
  const int64_t width = out.shape[4], rows = out.numel() / width;
  char* const base = static_cast<char*>(out.data);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = r % out.shape[3], d = r / out.shape[3] % out.shape[2];
    const int64_t c = r / (out.shape[3] * out.shape[2]) % out.shape[1],
                  n = r / (out.shape[3] * out.shape[2] * out.shape[1]);
    char* row = base + out.element(n, c, d, h, 0) * size;
    if (out.stride[4] == 1) {
      std::memset(row, 0, static_cast<size_t>(width * size));
    } else {
      for (int64_t w = 0; w < width; ++w) std::memset(row + w * out.stride[4] * size, 0, static_cast<size_t>(size));
    }
  }
}

PlanesRun planes_run(const View5& view, int64_t n, int64_t c0, int64_t channels) {
  const int64_t plane = view.shape[2] * view.shape[3] * view.shape[4];
  if (!contiguous_planes_inside(view, n, c0, channels) || (channels > 1 && view.stride[1] != plane)) return {};
  const int64_t size = static_cast<int64_t>(dtype_size(view.dtype));
  return {static_cast<const char*>(view.data) + view.element(n, c0, 0, 0, 0) * size, channels * plane * size};
}

float* dense_float_data(const View5& view) {
  return view.data == nullptr ? nullptr : static_cast<float*>(view.data) + view.offset;
}

bool may_overlap(const View5& view) {
  if (view.numel() == 0) return false;
  struct Dim {
    int64_t size, step;
  } dims[5];
  int count = 0;
  for (int i = 0; i < 5; ++i) {
    if (view.shape[i] > 1) dims[count++] = {view.shape[i], view.stride[i] < 0 ? -view.stride[i] : view.stride[i]};
  }
  for (int i = 1; i < count; ++i) {  // insertion sort by step (at most five dims)
    for (int j = i; j > 0 && dims[j].step < dims[j - 1].step; --j) std::swap(dims[j], dims[j - 1]);
  }
  // Injective when each step exceeds the farthest element the smaller dims reach.
  int64_t reach = 0;
  for (int i = 0; i < count; ++i) {
    int64_t span = 0;
    if (dims[i].step <= reach || __builtin_mul_overflow(dims[i].size - 1, dims[i].step, &span) ||
        __builtin_add_overflow(reach, span, &reach)) {
      return true;
    }
  }
  return false;
}

namespace {

// Writes values[dense index] to each element of `out`, one thread, in the user's dim order.
template <typename T>
void store_in_view_order(const T* values, const View5& out) {
  int64_t dense_stride[5];
  dense_stride[4] = 1;
  for (int i = 4; i > 0; --i) dense_stride[i - 1] = dense_stride[i] * out.shape[i];
  int64_t index[5] = {0, 0, 0, 0, 0};
  const int64_t total = out.numel();
  for (int64_t done = 0; done < total; ++done) {
    int64_t element = out.offset, dense = 0;
    for (int i = 0; i < 5; ++i) {
      element += index[i] * out.stride[i];
      dense += index[i] * dense_stride[i];
    }
    store_element(out.data, out.dtype, element, static_cast<double>(values[dense]));
    for (int k = 4; k >= 0; --k) {  // next index, the innermost user dim fastest
      const int dim = out.order[k];
      if (++index[dim] < out.shape[dim]) break;
      index[dim] = 0;
    }
  }
}

}  // namespace

void pack_plane(const View5& view, MathMode math, int64_t n, int64_t c, float* out, const Conversions16* conversions) {
  read_plane_floats(view, math, n, c, 0, view.shape[2] * view.shape[3] * view.shape[4], out, conversions);
}
void pack_plane(const View5& view, MathMode math, int64_t n, int64_t c, double* out) {
  with_element_type(view, [&](auto* base) {
    for (int64_t r = 0; r < view.shape[2] * view.shape[3]; ++r) {
      const auto* in = base + view.element(n, c, r / view.shape[3], r % view.shape[3], 0);
      for (int64_t w = 0; w < view.shape[4]; ++w) {
        const double value = element_as_double(in[w * view.stride[4]]);
        *out++ = math == MathMode::kFp16Inputs ? static_cast<float>(Eigen::half(static_cast<float>(value))) : value;
      }
    }
  });
}

template <typename T>
void pack_dense(const View5& view, MathMode math, T* out, int threads, const Conversions16* conversions) {
  (void)threads;                  // used by OpenMP only
  if (view.numel() == 0) return;  // (its data may be null: no element address is formed)
  if constexpr (std::is_same_v<T, float>) {
    if (is_dense(view)) {  // one run (e.g. a 3x3 kernel's weights: not runs of 9), in chunks
      const int64_t total = view.numel();
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int64_t i = 0; i < total; i += kDenseChunk)
        read_dense_floats(view, math, i, std::min(kDenseChunk, total - i), out + i, conversions);
      return;
    }
  }
  const int64_t plane = view.shape[2] * view.shape[3] * view.shape[4];
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t n = 0; n < view.shape[0]; ++n) {
    for (int64_t c = 0; c < view.shape[1]; ++c) {
      T* to = out + (n * view.shape[1] + c) * plane;
      if constexpr (std::is_same_v<T, float>) {
        pack_plane(view, math, n, c, to, conversions);
      } else {
        pack_plane(view, math, n, c, to);
      }
    }
  }
}

void read_dense_floats(const View5& view, MathMode math, int64_t first, int64_t count, float* out,
                       const Conversions16* conversions) {
  View5 flat = view;  // the same elements as one W row
  for (int i = 0; i < 4; ++i) flat.shape[i] = 1, flat.stride[i] = 0;
  flat.shape[4] = view.numel(), flat.stride[4] = 1;
  read_row_floats(flat, math, 0, 0, 0, 0, first, 1, count, out, conversions);
}

void read_plane_floats(const View5& view, MathMode math, int64_t n, int64_t c, int64_t first, int64_t count, float* out,
                       const Conversions16* conversions) {
  const int64_t height = view.shape[3];
  const int64_t width = planes_contiguous(view) ? first + count : view.shape[4];  // one run, or a run per row
  for (int64_t i = first; i < first + count;) {
    const int64_t line = i / width, w = i % width, run = std::min(width - w, first + count - i);
    read_row_floats(view, math, n, c, line / height, line % height, w, 1, run, out + (i - first), conversions);
    i += run;
  }
}

void read_row_floats(const View5& view, MathMode math, int64_t n, int64_t c, int64_t d, int64_t h, int64_t w0,
                     int64_t step, int64_t count, float* out, const Conversions16* conversions) {
  if (count <= 0) return;
  const int64_t first = view.element(n, c, d, h, w0), stride = view.stride[4] * step;
  if (view.dtype == ACL_FLOAT && stride == 1 && math != MathMode::kFp16Inputs) {  // the common case: a copy
    std::memcpy(out, static_cast<const float*>(view.data) + first, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  if (view.dtype == ACL_FLOAT && stride == 2 && math != MathMode::kFp16Inputs) {  // a stride-2 phase: even entries
    copy_run_even(static_cast<const float*>(view.data) + first, count, out);
    return;
  }
  if (view.dtype == ACL_BF16 && stride == 1 && math == MathMode::kFull) {  // widened inline (short rows)
    widen_bf16_run(static_cast<const uint16_t*>(view.data) + first, count, out);
    return;
  }
  if ((view.dtype == ACL_FLOAT16 || view.dtype == ACL_BF16) && stride == 1 && count >= 1 && math == MathMode::kFull &&
      conversions != nullptr) {
    const uint16_t* in = static_cast<const uint16_t*>(view.data) + first;
    view.dtype == ACL_FLOAT16 ? conversions->halves_to_floats(in, out, count)
                              : conversions->bf16_to_floats(in, out, count);
    return;
  }
  if ((view.dtype == ACL_FLOAT16 || view.dtype == ACL_BF16) && stride > 1 && math == MathMode::kFull &&
      conversions != nullptr) {  // a strided window's phase: its entries only, 8 per conversion
    conversions->widen_strided(static_cast<const uint16_t*>(view.data) + first, view.dtype == ACL_BF16, stride, count,
                               out);
    return;
  }
  with_element_type(view, [&](auto* base) {
    const auto* in = base + first;
    if (math == MathMode::kFp16Inputs) {
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(Eigen::half(static_cast<float>(in[i * stride])));
    } else if (stride == 1) {
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i * stride]);
    }
  });
}

void read_row_channels(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t channels, int64_t d, int64_t h,
                       int64_t w0, int64_t step, int64_t count, float* out, int64_t channel_stride) {
  if (count <= 0 || channels <= 0) return;
  const int64_t first = view.element(n, c0, d, h, w0), position = view.stride[4] * step, channel = view.stride[1];
  with_element_type(view, [&](auto* base) {
    for (int64_t i = 0; i < count; ++i) {
      const auto* in = base + first + i * position;
      for (int64_t k = 0; k < channels; ++k) {
        const float value = static_cast<float>(in[k * channel]);
        out[k * channel_stride + i] = math == MathMode::kFp16Inputs ? static_cast<float>(Eigen::half(value)) : value;
      }
    }
  });
}

namespace {

// to[i * step] = in[i] for i < count, rounded once to nearest even (contiguous runs of FLOAT16 and
// BF16 through the kit's conversions where it has them).
template <typename E>
void store_floats(const float* in, int64_t count, E* to, int64_t step, const Conversions16* conversions) {
  // (Runs of any length: the shortest, 7 x 7 planes' rows, through a zero-padded block of 8, or under
  // a mask, not one by one.)
  if (step == 1 && count >= 1 && conversions != nullptr) {
    if constexpr (std::is_same_v<E, Eigen::half>) {
      conversions->floats_to_halves(in, reinterpret_cast<uint16_t*>(to), count);
      return;
    } else if constexpr (std::is_same_v<E, Eigen::bfloat16>) {
      conversions->floats_to_bf16(in, reinterpret_cast<uint16_t*>(to), count);
      return;
    }
  }
  for (int64_t i = 0; i < count; ++i) to[i * step] = static_cast<E>(in[i]);
}

}  // namespace

void store_plane_floats(const float* values, const View5& out, int64_t n, int64_t c, int64_t first, int64_t count,
                        const Conversions16* conversions) {
  if (count <= 0) return;
  const int64_t height = out.shape[3];
  const int64_t width = planes_contiguous(out) ? first + count : out.shape[4];  // one run, or a run per row
  with_element_type(out, [&](auto* base) {
    for (int64_t i = first; i < first + count;) {
      const int64_t line = i / width, w = i % width, run = std::min(width - w, first + count - i);
      store_floats(values + (i - first), run, base + out.element(n, c, line / height, line % height, w), out.stride[4],
                   conversions);
      i += run;
    }
  });
}

void store_dense_floats(const float* values, const View5& out, int64_t first, int64_t count,
                        const Conversions16* conversions) {
  if (count <= 0) return;
  with_element_type(out, [&](auto* base) { store_floats(values, count, base + out.offset + first, 1, conversions); });
}

void store_rows_floats(const float* values, int64_t value_stride, int64_t channels, const View5& out, int64_t n,
                       int64_t c, int64_t first, int64_t count, const Conversions16* conversions) {
  if (narrowable_rows(out) && conversions != nullptr && channels > 0 && count > 0) {
    uint16_t* to = static_cast<uint16_t*>(out.data) + out.element(n, c, 0, 0, first);
    conversions->narrow_rows(values, value_stride, count, channels, to, out.stride[1], out.dtype == ACL_BF16);
    return;
  }
  for (int64_t i = 0; i < channels; ++i) {
    store_plane_floats(values + i * value_stride, out, n, c + i, first, count, conversions);
  }
}

float channel_bias(const View5& bias, int64_t c) {
  return static_cast<float>(load_element(bias.data, bias.dtype, bias.element(0, c, 0, 0, 0)));
}

void add_channel_bias(const View5& bias, int64_t c0, int64_t channels, float* values, int64_t value_stride,
                      int64_t count) {
  for (int64_t i = 0; i < channels; ++i) {
    const float b = channel_bias(bias, c0 + i);
    float* row = values + i * value_stride;
    for (int64_t j = 0; j < count; ++j) row[j] += b;
  }
}

namespace {
// out[j] = values[j] + bias for j < count.
void add_bias_row(const float* __restrict values, float bias, int64_t count, float* __restrict out) {
  for (int64_t j = 0; j < count; ++j) out[j] = values[j] + bias;
}
}  // namespace

void store_rows_with_bias(const float* values, int64_t value_stride, int64_t channels, const View5& out,
                          const View5& bias, int64_t n, int64_t c, int64_t first, int64_t count,
                          const Conversions16* conversions) {
  if (out.dtype == ACL_FLOAT && planes_contiguous(out)) {  // straight into the user's rows
    for (int64_t i = 0; i < channels; ++i) {
      float* to = static_cast<float*>(out.data) + out.element(n, c + i, 0, 0, first);
      add_bias_row(values + i * value_stride, channel_bias(bias, c + i), count, to);
    }
    return;
  }
  constexpr int64_t kChunk = 512;  // floats on the stack per store
  float sums[kChunk];
  for (int64_t i = 0; i < channels; ++i) {
    const float b = channel_bias(bias, c + i);
    for (int64_t j0 = 0; j0 < count; j0 += kChunk) {
      const int64_t run = std::min(kChunk, count - j0);
      add_bias_row(values + i * value_stride + j0, b, run, sums);
      store_plane_floats(sums, out, n, c + i, first + j0, run, conversions);
    }
  }
}

void add_bias_to_dense(const View5& bias, float* values, const View5& shape, int threads) {
  (void)threads;
  const int64_t channels = shape.shape[1], plane = shape.shape[2] * shape.shape[3] * shape.shape[4];
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t p = 0; p < shape.shape[0] * channels; ++p)
    add_channel_bias(bias, p % channels, 1, values + p * plane, plane, plane);
}

template <typename T>
void store_dense(const T* values, const View5& out, int threads, const Conversions16* conversions) {
  (void)threads;
  if (out.numel() == 0) return;
  if (may_overlap(out)) {
    store_in_view_order(values, out);
    return;
  }
  const int64_t width = out.shape[4], rows = out.shape[2] * out.shape[3];
  if (std::is_same_v<T, float> && out.dtype != ACL_DOUBLE) {
    // Float values into FLOAT/FLOAT16/BF16: one rounding to nearest even, as store_element's; a
    // whole plane per run where the view's planes are contiguous.
    const bool whole = planes_contiguous(out);
    const int64_t run = whole ? rows * width : width, runs = whole ? 1 : rows;
    if (is_dense(out)) {  // one run (e.g. a 3x3 kernel's weights: not runs of 9), in chunks
      const int64_t total = out.numel();
      with_element_type(out, [&](auto* base) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t i = 0; i < total; i += kDenseChunk) {
          store_floats(reinterpret_cast<const float*>(values) + i, std::min(kDenseChunk, total - i),
                       base + out.offset + i, 1, conversions);
        }
      });
      return;
    }
    with_element_type(out, [&](auto* base) {
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
      for (int64_t n = 0; n < out.shape[0]; ++n) {
        for (int64_t c = 0; c < out.shape[1]; ++c) {
          const T* row = values + (n * out.shape[1] + c) * rows * width;
          for (int64_t r = 0; r < runs; ++r, row += run) {
            store_floats(reinterpret_cast<const float*>(row), run,
                         base + out.element(n, c, r / out.shape[3], r % out.shape[3], 0), out.stride[4], conversions);
          }
        }
      }
    });
    return;
  }
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (int64_t n = 0; n < out.shape[0]; ++n) {
    for (int64_t c = 0; c < out.shape[1]; ++c) {
      const T* row = values + (n * out.shape[1] + c) * rows * width;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t first = out.element(n, c, r / out.shape[3], r % out.shape[3], 0);
        for (int64_t w = 0; w < width; ++w) {
          store_element(out.data, out.dtype, first + w * out.stride[4], static_cast<double>(*row++));
        }
      }
    }
  }
}

template void pack_dense<float>(const View5&, MathMode, float*, int, const Conversions16*);
template void store_dense<float>(const float*, const View5&, int, const Conversions16*);
template void store_dense<double>(const double*, const View5&, int, const Conversions16*);

}  // namespace aclnn_cpu
