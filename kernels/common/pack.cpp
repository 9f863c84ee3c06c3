#include "kernels/common/pack.h"

#include "common/dtype.h"

namespace aclnn_cpu {

bool is_dense_float(const View5& view) {
  if (view.dtype != ACL_FLOAT) return false;
  int64_t expected = 1;
  for (int i = 4; i >= 0; --i) {
    if (view.shape[i] != 1 && view.stride[i] != expected) return false;
    expected *= view.shape[i];
  }
  return true;
}

float* dense_float_data(const View5& view) { return static_cast<float*>(view.data) + view.offset; }

template <typename T>
void pack_dense(const View5& view, MathMode math, T* out) {
  const int64_t inner = view.shape[2] * view.shape[3] * view.shape[4];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < view.shape[0]; ++n) {
    for (int64_t c = 0; c < view.shape[1]; ++c) {
      T* row = out + (n * view.shape[1] + c) * inner;
      for (int64_t d = 0; d < view.shape[2]; ++d) {
        for (int64_t h = 0; h < view.shape[3]; ++h) {
          for (int64_t w = 0; w < view.shape[4]; ++w) {
            double value = load_element(view.data, view.dtype, view.element(n, c, d, h, w));
            if (math == MathMode::kFp16Inputs) value = static_cast<float>(Eigen::half(static_cast<float>(value)));
            *row++ = static_cast<T>(value);
          }
        }
      }
    }
  }
}

template <typename T>
void store_dense(const T* values, const View5& out) {
  const int64_t inner = out.shape[2] * out.shape[3] * out.shape[4];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < out.shape[0]; ++n) {
    for (int64_t c = 0; c < out.shape[1]; ++c) {
      const T* row = values + (n * out.shape[1] + c) * inner;
      for (int64_t d = 0; d < out.shape[2]; ++d) {
        for (int64_t h = 0; h < out.shape[3]; ++h) {
          for (int64_t w = 0; w < out.shape[4]; ++w) {
            store_element(out.data, out.dtype, out.element(n, c, d, h, w), static_cast<double>(*row++));
          }
        }
      }
    }
  }
}

void reduce_bias(const View5& dy, const View5& out) {
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < dy.shape[1]; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < dy.shape[0]; ++n) {
      for (int64_t d = 0; d < dy.shape[2]; ++d) {
        for (int64_t h = 0; h < dy.shape[3]; ++h) {
          for (int64_t w = 0; w < dy.shape[4]; ++w) sum += load_element(dy.data, dy.dtype, dy.element(n, c, d, h, w));
        }
      }
    }
    store_element(out.data, out.dtype, out.element(0, c, 0, 0, 0), sum);
  }
}

template void pack_dense<double>(const View5&, MathMode, double*);
template void pack_dense<float>(const View5&, MathMode, float*);
template void store_dense<float>(const float*, const View5&);

}  // namespace aclnn_cpu
