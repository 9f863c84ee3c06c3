// The quantized convolution's benchmark (tests/benchmark/quant_shapes.txt): per layer, our
// aclnnQuantConvolution (INT8 input and weight, FLOAT per-channel scale and bias, FLOAT16 output in 2-D,
// BF16 in 3-D), oneDNN's int8 forward on the same layer (s8 source and weights, f32 bias, per-channel
// output scales, f32 destination) with its data already in its preferred layouts ("kernel") and with
// every tensor reordered from and to plain ones, weights too ("plain"), and our FLOAT forward
// (aclnnConvolution) of the layer; interleaved round by round, each the best of its rounds.
//   quant_bench SHAPES [rounds=5] [filter]
// GMAC counts the convolution's multiply-adds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "aclnnop/aclnn_quant_convolution.h"
#include "bench_layers.h"
#include "dnnl.hpp"

namespace {

using bench::Dims;
using bench::Layer;

double ms_of(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// A device buffer of `bytes` with a contiguous aclTensor of `dtype` over it, filled by `fill`.
struct RawTensor {
  void* data = nullptr;
  aclTensor* tensor = nullptr;
  RawTensor(const Dims& shape, aclDataType dtype, aclFormat format, size_t element_bytes,
            const std::vector<unsigned char>& host) {
    const size_t bytes = std::max<size_t>(4, static_cast<size_t>(bench::count(shape)) * element_bytes);
    aclrtMalloc(&data, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!host.empty()) aclrtMemcpy(data, bytes, host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE);
    tensor = aclCreateTensor(shape.data(), shape.size(), dtype, nullptr, 0, format, shape.data(), shape.size(), data);
  }
  RawTensor(const RawTensor&) = delete;
  RawTensor& operator=(const RawTensor&) = delete;
  ~RawTensor() {
    aclDestroyTensor(tensor);
    aclrtFree(data);
  }
};

std::vector<unsigned char> int8_values(int64_t n, unsigned seed) {
  std::vector<unsigned char> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>((i * 37 + seed * 101) % 251);
  return v;
}

std::vector<unsigned char> float_bytes(const std::vector<float>& values) {
  std::vector<unsigned char> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Our aclnnQuantConvolution of the layer: phase 1 once, then a function running phase 2.
struct OurQuant {
  RawTensor x, w, scale, bias, out;
  aclOpExecutor* executor = nullptr;
  uint64_t size = 0;
  void* workspace = nullptr;
  explicit OurQuant(const Layer& l)
      : x(l.input_shape(), ACL_INT8, l.tensor_format(), 1, int8_values(bench::count(l.input_shape()), 1)),
        w(l.weight_shape(), ACL_INT8, l.tensor_format(), 1, int8_values(bench::count(l.weight_shape()), 2)),
        scale({l.cout}, ACL_FLOAT, ACL_FORMAT_ND, 4, float_bytes(std::vector<float>(l.cout, 1.0f / 4096))),
        bias({l.cout}, ACL_FLOAT, ACL_FORMAT_ND, 4, float_bytes(bench::random_values(l.cout, 4))),
        out(l.grad_output_shape(), l.spatial.size() == 3 ? ACL_BF16 : ACL_FLOAT16, l.tensor_format(), 2, {}) {
    aclIntArray* stride = aclCreateIntArray(l.stride.data(), l.stride.size());
    aclIntArray* pad = aclCreateIntArray(l.pad.data(), l.pad.size());
    aclIntArray* dil = aclCreateIntArray(l.dilation.data(), l.dilation.size());
    if (aclnnQuantConvolutionGetWorkspaceSize(x.tensor, w.tensor, bias.tensor, scale.tensor, nullptr, stride, pad, dil,
                                              false, nullptr, l.groups, 0, nullptr, out.tensor, &size,
                                              &executor) != 0) {
      std::fprintf(stderr, "%s: planning failed: %s\n", l.name.c_str(), aclGetRecentErrMsg());
      std::exit(1);
    }
    aclDestroyIntArray(stride), aclDestroyIntArray(pad), aclDestroyIntArray(dil);
    if (size > 0) aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclSetAclOpExecutorRepeatable(executor);
  }
  ~OurQuant() {
    aclDestroyAclOpExecutor(executor);
    if (workspace != nullptr) aclrtFree(workspace);
  }
  void run() const {
    if (aclnnQuantConvolution(workspace, size, executor, nullptr) != 0 || aclrtSynchronizeStream(nullptr) != 0) {
      std::fprintf(stderr, "run failed: %s\n", aclGetRecentErrMsg());
      std::exit(1);
    }
  }
};

// Our FLOAT forward of the layer (aclnnConvolution), planned once.
struct OurFloat {
  bench::LayerTensors t;
  aclOpExecutor* executor = nullptr;
  uint64_t size = 0;
  void* workspace = nullptr;
  explicit OurFloat(const Layer& l) : t(l, ACL_FLOAT) {
    if (t.plan_forward_pass(l, &size, &executor) != 0) std::exit(1);
    if (size > 0) aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclSetAclOpExecutorRepeatable(executor);
  }
  ~OurFloat() {
    aclDestroyAclOpExecutor(executor);
    if (workspace != nullptr) aclrtFree(workspace);
  }
  void run(const Layer& l) const {
    bench::run_forward(l, workspace, size, executor, nullptr);
    aclrtSynchronizeStream(nullptr);
  }
};

// oneDNN's int8 forward: `plain` times reorders of src, weights and dst from and to plain layouts.
std::function<void()> onednn_int8(const Layer& l, bool plain, const dnnl::engine& eng, dnnl::stream& strm) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const size_t sp = l.spatial.size();
  const tag data_tag = sp == 2 ? tag::nchw : tag::ncdhw, weight_tag = sp == 2 ? tag::oihw : tag::oidhw;
  const memory::dims src_dims = l.input_shape(), dst_dims = l.grad_output_shape();
  memory::dims wei_dims = {l.cout, l.cin};
  wei_dims.insert(wei_dims.end(), l.kernel.begin(), l.kernel.end());
  memory::dims strides = l.stride, dil, pad_l = l.pad, pad_r = l.pad;
  for (size_t i = 0; i < sp; ++i) {
    dil.push_back(l.dilation[i] - 1);
    pad_r[i] = (dst_dims[2 + i] - 1) * l.stride[i] + (l.kernel[i] - 1) * l.dilation[i] + 1 - src_dims[2 + i] - l.pad[i];
  }
  primitive_attr attr;
  attr.set_output_scales(1 << 1, std::vector<float>(l.cout, 1.0f / 4096));
  const auto pd = convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                memory::desc(src_dims, dt::s8, tag::any), memory::desc(wei_dims, dt::s8, tag::any),
                                memory::desc({l.cout}, dt::f32, tag::a), memory::desc(dst_dims, dt::f32, tag::any),
                                strides, dil, pad_l, pad_r),
      attr, eng);
  struct Step {
    primitive prim;
    std::unordered_map<int, memory> args;
  };
  auto steps = std::make_shared<std::vector<Step>>();
  const auto filled = [&eng](const memory::desc& md, unsigned seed) {
    memory m(md, eng);
    const auto v = int8_values(static_cast<int64_t>(md.get_size()), seed);
    std::memcpy(m.get_data_handle(), v.data(), v.size());
    return m;
  };
  memory src(pd.src_desc(), eng), wei(pd.weights_desc(), eng), dst(pd.dst_desc(), eng);
  memory bias = filled(memory::desc({l.cout}, dt::f32, tag::a), 4);
  if (plain) {
    memory src_plain = filled(memory::desc(src_dims, dt::s8, data_tag), 1);
    memory wei_plain = filled(memory::desc(wei_dims, dt::s8, weight_tag), 2);
    steps->push_back({reorder(src_plain, src), {{DNNL_ARG_FROM, src_plain}, {DNNL_ARG_TO, src}}});
    steps->push_back({reorder(wei_plain, wei), {{DNNL_ARG_FROM, wei_plain}, {DNNL_ARG_TO, wei}}});
  } else {
    src = filled(pd.src_desc(), 1), wei = filled(pd.weights_desc(), 2);
  }
  steps->push_back({convolution_forward(pd),
                    {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}}});
  if (plain) {
    memory dst_plain(memory::desc(dst_dims, dt::f32, data_tag), eng);
    steps->push_back({reorder(dst, dst_plain), {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, dst_plain}}});
  }
  return [steps, &strm] {
    for (Step& step : *steps) step.prim.execute(strm, step.args);
    strm.wait();
  };
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "quant_shapes.txt";
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 5;
  const std::string filter = argc > 3 ? argv[3] : "";
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("%-20s %7s %9s %9s %9s %9s %8s %8s %8s\n", "layer", "GMAC", "int8_ms", "dnnl_kern", "dnnl_plain",
              "fp32_ms", "/kern", "/plain", "fp32/int8");
  std::vector<double> kern_ratios, plain_ratios, float_ratios;
  for (const Layer& l : bench::read_layers(file)) {
    if (!bench::name_matches(l.name, filter)) continue;
    const double gmac =
        static_cast<double>(bench::count(l.grad_output_shape())) * (l.cin / l.groups) * bench::count(l.kernel) / 1e9;
    OurQuant ours(l);
    OurFloat ours_float(l);
    const auto kern = onednn_int8(l, false, eng, strm), plain = onednn_int8(l, true, eng, strm);
    const std::function<void()> runs[] = {[&] { ours.run(); }, kern, plain, [&] { ours_float.run(l); }};
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (auto& run : runs) run();  // warm-up
    for (int r = 0; r < rounds; ++r) {
      for (int e = 0; e < 4; ++e) best[e] = std::min(best[e], ms_of(runs[e]));
    }
    kern_ratios.push_back(best[0] / best[1]), plain_ratios.push_back(best[0] / best[2]);
    float_ratios.push_back(best[3] / best[0]);
    std::printf("%-20s %7.3f %9.3f %9.3f %9.3f %9.3f %8.2f %8.2f %8.2f\n", l.name.c_str(), gmac, best[0], best[1],
                best[2], best[3], best[0] / best[1], best[0] / best[2], best[3] / best[0]);
    std::fflush(stdout);
  }
  std::printf("geomean: ours/oneDNN kernel %.2f, ours/oneDNN plain %.2f, our fp32/our int8 %.2f\n",
              bench::geomean(kern_ratios), bench::geomean(plain_ratios), bench::geomean(float_ratios));
  return 0;
}
