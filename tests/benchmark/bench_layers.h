// The benchmark suite's layers (../shared/bench/shapes.txt format) and the tensors that run them
// through our public API; shared by conv_bench, ab_time and stream_load.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"

namespace bench {

using Dims = std::vector<int64_t>;

struct Layer {
  std::string name;
  int64_t n = 0, cin = 0, cout = 0, groups = 1;
  Dims spatial, kernel, stride, pad, dilation, output_padding;
  bool transposed = false, tbc = false;

  Dims out_spatial() const {
    Dims out;
    for (size_t i = 0; i < spatial.size(); ++i) {
      const int64_t span = dilation[i] * (kernel[i] - 1) + 1;
      out.push_back(transposed ? (spatial[i] - 1) * stride[i] - 2 * pad[i] + span + output_padding[i]
                               : (spatial[i] + 2 * pad[i] - span) / stride[i] + 1);
    }
    return out;
  }
  // The operator's tensors. Convolution: (N, C, spatial...); TBC: input (T, B, Cin), weight
  // (K, Cin, Cout), gradOutput (T + 2p + 1 - K, B, Cout).
  Dims input_shape() const { return tbc ? Dims{spatial[0], n, cin} : concat({n, cin}, spatial); }
  Dims grad_output_shape() const { return tbc ? Dims{out_spatial()[0], n, cout} : concat({n, cout}, out_spatial()); }
  Dims weight_shape() const {
    if (tbc) return {kernel[0], cin, cout};
    return concat(transposed ? Dims{cin, cout / groups} : Dims{cout, cin / groups}, kernel);
  }
  aclFormat tensor_format() const {
    const size_t dims = spatial.size() + 2;
    return tbc ? ACL_FORMAT_ND : dims == 3 ? ACL_FORMAT_NCL : dims == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_NCDHW;
  }
  static Dims concat(Dims a, const Dims& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

inline Dims split(const std::string& field) {
  Dims values;
  std::stringstream in(field);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::stoll(item));
  return values;
}

inline std::vector<Layer> read_layers(const std::string& file) {
  std::ifstream in(file);
  std::vector<Layer> layers;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream words(line);
    Layer l;
    std::string spatial, kernel, stride, pad, dil, tr, op;
    words >> l.name >> l.n >> l.cin >> l.cout >> spatial >> kernel >> stride >> pad >> dil >> l.groups >> tr >> op;
    l.spatial = split(spatial), l.kernel = split(kernel), l.stride = split(stride), l.pad = split(pad);
    l.dilation = split(dil), l.output_padding = split(op);
    l.tbc = tr == "tbc";
    l.transposed = tr == "1";
    if (l.output_padding.size() < l.spatial.size()) l.output_padding.assign(l.spatial.size(), 0);
    layers.push_back(l);
  }
  return layers;
}

inline int64_t count(const Dims& d) {
  int64_t c = 1;
  for (int64_t v : d) c *= v;
  return c;
}

// Device buffer holding `values`, with a contiguous aclTensor over it.
struct AclTensor {
  void* data = nullptr;
  size_t bytes = 0;
  aclTensor* tensor = nullptr;
  // `values` empty: an uninitialised output. FLOAT16 and BF16 values are rounded to nearest-even.
  AclTensor(const Dims& shape, const std::vector<float>& values, aclFormat format, aclDataType dtype = ACL_FLOAT) {
    int64_t elements = 1;
    for (int64_t d : shape) elements *= d;
    const size_t size = dtype == ACL_FLOAT ? 4 : 2;
    bytes = std::max<size_t>(4, static_cast<size_t>(elements) * size);
    aclrtMalloc(&data, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!values.empty()) {
      std::vector<unsigned char> stored(values.size() * size);
      for (size_t i = 0; i < values.size(); ++i) store_as(dtype, values[i], stored.data() + i * size);
      aclrtMemcpy(data, bytes, stored.data(), stored.size(), ACL_MEMCPY_HOST_TO_DEVICE);
    }
    tensor = aclCreateTensor(shape.data(), shape.size(), dtype, nullptr, 0, format, shape.data(), shape.size(), data);
  }
  // FLOAT16 bits of a finite float, rounded to nearest even (overflow to infinity, underflow to
  // subnormals or zero).
  static uint16_t half_bits(float value) {
    uint32_t x = 0;
    std::memcpy(&x, &value, 4);
    const uint32_t sign = (x >> 16) & 0x8000u, mantissa = (x & 0x7FFFFFu) | 0x800000u;
    const int exponent = static_cast<int>((x >> 23) & 0xFF) - 127 + 15;  // FLOAT16's biased exponent
    if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
    const int shift = exponent > 0 ? 13 : 14 - exponent;  // mantissa bits dropped
    if (shift > 24) return static_cast<uint16_t>(sign);
    uint32_t bits = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (bits & 1u))) ++bits;  // a carry moves into the exponent
    if (exponent > 0) bits = bits + (static_cast<uint32_t>(exponent) << 10) - 0x400u;  // implicit bit -> exponent
    return static_cast<uint16_t>(sign | bits);
  }
  static void store_as(aclDataType dtype, float value, unsigned char* out) {
    if (dtype == ACL_FLOAT) {
      std::memcpy(out, &value, 4);
    } else if (dtype == ACL_FLOAT16) {
      const uint16_t half = half_bits(value);
      std::memcpy(out, &half, 2);
    } else {  // BF16: the top half of the float, rounded to nearest-even (values here are finite)
      uint32_t bits = 0;
      std::memcpy(&bits, &value, 4);
      const uint16_t top = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
      std::memcpy(out, &top, 2);
    }
  }
  AclTensor(const AclTensor&) = delete;
  AclTensor& operator=(const AclTensor&) = delete;
  ~AclTensor() {
    aclDestroyTensor(tensor);
    aclrtFree(data);
  }
};

inline std::vector<float> random_values(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// Phase 1 of one full backward (gradInput, gradWeight, gradBias) of `l`: aclnnConvTbcBackward
// for TBC layers (bias is its bias tensor; always all three), aclnnConvolutionBackward otherwise, with
// the gradients `outputs` asks for (null: all three).
inline aclnnStatus plan_backward(const Layer& l, const aclTensor* gy, const aclTensor* x, const aclTensor* w,
                                 const aclTensor* bias, aclTensor* gx, aclTensor* gw, aclTensor* gb, uint64_t* size,
                                 aclOpExecutor** executor, const bool* outputs = nullptr) {
  if (l.tbc) return aclnnConvTbcBackwardGetWorkspaceSize(gy, x, w, bias, l.pad[0], 0, gx, gw, gb, size, executor);
  aclIntArray* stride = aclCreateIntArray(l.stride.data(), l.stride.size());
  aclIntArray* pad = aclCreateIntArray(l.pad.data(), l.pad.size());
  aclIntArray* dil = aclCreateIntArray(l.dilation.data(), l.dilation.size());
  aclIntArray* op = aclCreateIntArray(l.output_padding.data(), l.output_padding.size());
  const int64_t bias_size = l.cout;
  aclIntArray* bias_sizes = aclCreateIntArray(&bias_size, 1);
  const bool all[3] = {true, true, true};
  aclBoolArray* mask = aclCreateBoolArray(outputs != nullptr ? outputs : all, 3);
  const aclnnStatus status =
      aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, bias_sizes, stride, pad, dil, l.transposed, op,
                                               static_cast<int>(l.groups), mask, 0, gx, gw, gb, size, executor);
  aclDestroyIntArray(stride), aclDestroyIntArray(pad), aclDestroyIntArray(dil), aclDestroyIntArray(op);
  aclDestroyIntArray(bias_sizes), aclDestroyBoolArray(mask);
  return status;
}

// The geometric mean of positive ratios (0 for none).
inline double geomean(const std::vector<double>& values) {
  double log_sum = 0.0;
  for (double v : values) log_sum += std::log(v);
  return values.empty() ? 0.0 : std::exp(log_sum / values.size());
}

// Whether `name` contains one of the comma-separated substrings of `filter` (an empty filter: all).
inline bool name_matches(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  for (size_t start = 0; start <= filter.size();) {
    const size_t end = std::min(filter.find(',', start), filter.size());
    if (end > start && name.find(filter.substr(start, end - start)) != std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

// Phase 2 of what plan_backward planned.
inline aclnnStatus run_backward(const Layer& l, void* workspace, uint64_t size, aclOpExecutor* executor,
                                aclrtStream stream) {
  return l.tbc ? aclnnConvTbcBackward(workspace, size, executor, stream)
               : aclnnConvolutionBackward(workspace, size, executor, stream);
}

// Phase 1 of the forward pass of `l` with its bias into `y` (shaped like gradOutput): aclnnConvTbc for
// TBC layers, aclnnConvolution otherwise.
inline aclnnStatus plan_forward(const Layer& l, const aclTensor* x, const aclTensor* w, const aclTensor* bias,
                                aclTensor* y, uint64_t* size, aclOpExecutor** executor) {
  if (l.tbc) return aclnnConvTbcGetWorkspaceSize(x, w, bias, l.pad[0], y, 0, size, executor);
  aclIntArray* stride = aclCreateIntArray(l.stride.data(), l.stride.size());
  aclIntArray* pad = aclCreateIntArray(l.pad.data(), l.pad.size());
  aclIntArray* dil = aclCreateIntArray(l.dilation.data(), l.dilation.size());
  aclIntArray* op = aclCreateIntArray(l.output_padding.data(), l.output_padding.size());
  const aclnnStatus status =
      aclnnConvolutionGetWorkspaceSize(x, w, bias, stride, pad, dil, l.transposed, op, l.groups, y, 0, size, executor);
  aclDestroyIntArray(stride), aclDestroyIntArray(pad), aclDestroyIntArray(dil), aclDestroyIntArray(op);
  return status;
}

// Phase 2 of what plan_forward planned.
inline aclnnStatus run_forward(const Layer& l, void* workspace, uint64_t size, aclOpExecutor* executor,
                               aclrtStream stream) {
  return l.tbc ? aclnnConvTbc(workspace, size, executor, stream) : aclnnConvolution(workspace, size, executor, stream);
}

// A layer's tensors in `dtype`: the inputs from the suite's fixed seeds (x 1, weight 2, gradOutput 3,
// bias 4) and the three gradients; plan() is plan_backward on them, plan_forward_pass() plan_forward.
struct LayerTensors {
  AclTensor x, w, gy, b, gx, gw, gb;
  LayerTensors(const Layer& l, aclDataType dtype)
      : x(l.input_shape(), random_values(count(l.input_shape()), 1), l.tensor_format(), dtype),
        w(l.weight_shape(), random_values(count(l.weight_shape()), 2), l.tensor_format(), dtype),
        gy(l.grad_output_shape(), random_values(count(l.grad_output_shape()), 3), l.tensor_format(), dtype),
        b({l.cout}, random_values(l.cout, 4), ACL_FORMAT_ND, dtype),
        gx(l.input_shape(), {}, l.tensor_format(), dtype),
        gw(l.weight_shape(), {}, l.tensor_format(), dtype),
        gb({l.cout}, {}, ACL_FORMAT_ND, dtype) {}
  aclnnStatus plan(const Layer& l, uint64_t* size, aclOpExecutor** executor, const bool* outputs = nullptr) const {
    return plan_backward(l, gy.tensor, x.tensor, w.tensor, b.tensor, gx.tensor, gw.tensor, gb.tensor, size, executor,
                         outputs);
  }
  // The forward pass instead, written into gy's tensor.
  aclnnStatus plan_forward_pass(const Layer& l, uint64_t* size, aclOpExecutor** executor) const {
    return plan_forward(l, x.tensor, w.tensor, b.tensor, gy.tensor, size, executor);
  }
};

// Floating-point operations of one convolution of layer `l` (2 per multiply-add): the direct convolution's
// output plane (gradOutput's, or the input's for a transposed layer) by the products per entry. A full
// backward is two (gradInput and gradWeight).
inline double convolution_flops(const Layer& l) {
  const Dims plane = l.transposed ? l.spatial : l.out_spatial();
  return 2.0 * double(l.n) * l.cout * (l.cin / l.groups) * count(l.kernel) * count(plane);
}

// The threads the benchmarks run on: OMP_NUM_THREADS (our library's and oneDNN's count), else the CPU's.
inline int bench_threads() {
  const char* omp = std::getenv("OMP_NUM_THREADS");
  return omp != nullptr && std::atoi(omp) > 0 ? std::atoi(omp) : int(std::max(1u, std::thread::hardware_concurrency()));
}

// The fastest of `calls` calls of our operator on layer `l` (phase 1, phase 2 and the stream's
// synchronisation, as a training step pays; the workspace allocated outside the timed parts, as a training
// loop keeps its own), in seconds, or a negative value where a phase failed. `outputs`: the gradients
// (null: all three); `forward`: the forward pass with its bias instead. `plan_seconds`: the fastest phase 1.
inline double best_call_seconds(const Layer& l, const LayerTensors& t, aclrtStream stream, int calls,
                                const bool* outputs = nullptr, bool forward = false, double* plan_seconds = nullptr) {
  void* workspace = nullptr;
  uint64_t booked = 0;
  double best = -1, best_plan = -1;
  for (int call = 0; call < calls; ++call) {
    const auto start = std::chrono::steady_clock::now();
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    if ((forward ? t.plan_forward_pass(l, &size, &executor) : t.plan(l, &size, &executor, outputs)) != ACL_SUCCESS) {
      std::fprintf(stderr, "%s: phase 1 failed\n", l.name.c_str());
      best = -1;
      break;
    }
    const auto planned = std::chrono::steady_clock::now();
    if (size > booked) {
      if (workspace != nullptr) aclrtFree(workspace);
      aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
      booked = size;
    }
    const auto allocated = std::chrono::steady_clock::now();
    if ((forward ? run_forward(l, workspace, size, executor, stream)
                 : run_backward(l, workspace, size, executor, stream)) != ACL_SUCCESS) {
      std::fprintf(stderr, "%s: phase 2 failed\n", l.name.c_str());
      best = -1;
      break;
    }
    aclrtSynchronizeStream(stream);
    const auto end = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>((planned - start) + (end - allocated)).count();
    const double plan = std::chrono::duration<double>(planned - start).count();
    if (call == 0 || seconds < best) best = seconds;
    if (call == 0 || plan < best_plan) best_plan = plan;
  }
  if (workspace != nullptr) aclrtFree(workspace);
  if (plan_seconds != nullptr) *plan_seconds = best_plan;
  return best;
}

}  // namespace bench
