// Side-by-side benchmark: one full convolution backward (gradInput + gradWeight + gradBias, fp32)
// through our public API and through oneDNN, on the layers of shapes.txt, in one run.
// Prints the median time of each and the ratio ours / oneDNN.
//
//   conv_bench [shapes.txt] [repeats] [name-filter]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "bench_layers.h"

namespace {

using namespace bench;

double median_seconds(int repeats, const std::function<void()>& body) {
  body();  // warm-up
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Our library: phase 1 + phase 2 + synchronize, every iteration (what a training step pays).
double time_ours(const Layer& l, int repeats, aclrtStream stream) {
  const Dims x_shape = l.input_shape(), w_shape = l.weight_shape(), gy_shape = l.grad_output_shape();
  const aclFormat f = l.tensor_format();
  AclTensor x(x_shape, random_values(count(x_shape), 1), f), w(w_shape, random_values(count(w_shape), 2), f);
  AclTensor gy(gy_shape, random_values(count(gy_shape), 3), f), b({l.cout}, random_values(l.cout, 4), ACL_FORMAT_ND);
  AclTensor gx(x_shape, {}, f), gw(w_shape, {}, f), gb({l.cout}, {}, ACL_FORMAT_ND);
  void* workspace = nullptr;
  uint64_t workspace_size = 0;
  const double seconds = median_seconds(repeats, [&] {
    aclOpExecutor* executor = nullptr;
    plan_backward(l, gy.tensor, x.tensor, w.tensor, b.tensor, gx.tensor, gw.tensor, gb.tensor, &workspace_size,
                  &executor);
    if (workspace == nullptr && workspace_size > 0) aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
    run_backward(l, workspace, workspace_size, executor, stream);
    aclrtSynchronizeStream(stream);
  });
  if (workspace != nullptr) aclrtFree(workspace);
  return seconds;
}

// oneDNN at its best: backward-data and backward-weights (+bias) primitives created once with
// the memory layouts they prefer (format "any"; the data is already in those layouts, no
// reorders are timed); each iteration executes both and waits. Our timing includes reading
// plain-layout tensors, so this baseline is strict.
double time_onednn(const Layer& l, int repeats) {
  using namespace dnnl;
  using tag = memory::format_tag;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  // ConvTbc is timed as the equivalent 1-D convolution in oneDNN's plain layout.
  Layer c = l;
  const bool grouped = l.groups > 1;
  const size_t sp = c.spatial.size();
  const tag data_tag = sp == 1 ? tag::ncw : sp == 2 ? tag::nchw : tag::ncdhw;
  const tag weight_tag = grouped ? (sp == 1   ? tag::goiw
                                    : sp == 2 ? tag::goihw
                                              : tag::goidhw)
                                 : (sp == 1   ? tag::oiw
                                    : sp == 2 ? tag::oihw
                                              : tag::oidhw);
  // oneDNN's view: src = the forward input, dst = the forward output.
  const memory::dims src_dims = c.input_shape(), dst_dims = c.grad_output_shape();
  memory::dims wei_dims =
      grouped ? memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups} : memory::dims{c.cout, c.cin};
  wei_dims.insert(wei_dims.end(), c.kernel.begin(), c.kernel.end());
  memory::dims strides = c.stride, dil, pad_l = c.pad, pad_r = c.pad;
  for (size_t i = 0; i < sp; ++i) {
    dil.push_back(c.dilation[i] - 1);  // oneDNN counts dilation from 0
    if (!c.transposed) {               // right padding that makes the sizes consistent
      pad_r[i] =
          (dst_dims[2 + i] - 1) * c.stride[i] + (c.kernel[i] - 1) * c.dilation[i] + 1 - src_dims[2 + i] - c.pad[i];
    } else {
      pad_r[i] =
          (src_dims[2 + i] - 1) * c.stride[i] + (c.kernel[i] - 1) * c.dilation[i] + 1 - dst_dims[2 + i] - c.pad[i];
    }
  }
  (void)data_tag;
  (void)weight_tag;
  const memory::desc src_md(src_dims, memory::data_type::f32, tag::any);
  const memory::desc dst_md(dst_dims, memory::data_type::f32, tag::any);
  const memory::desc wei_md(wei_dims, memory::data_type::f32, tag::any);
  const memory::desc bias_md({c.cout}, memory::data_type::f32, tag::a);
  // A memory in the layout a primitive chose, filled with random values.
  auto filled = [&eng](const memory::desc& md) {
    memory m(md, eng);
    const auto v = random_values(static_cast<int64_t>(md.get_size() / 4), 7);
    std::copy(v.begin(), v.end(), static_cast<float*>(m.get_data_handle()));
    return m;
  };
  // Executes a backward-data and a backward-weights primitive on memories in their chosen layouts.
  auto timed_pair = [&](auto data, const auto& data_pd, auto weights, const auto& weights_pd) {
    const std::unordered_map<int, memory> data_args = {{DNNL_ARG_DIFF_DST, filled(data_pd.diff_dst_desc())},
                                                       {DNNL_ARG_WEIGHTS, filled(data_pd.weights_desc())},
                                                       {DNNL_ARG_DIFF_SRC, filled(data_pd.diff_src_desc())}};
    const std::unordered_map<int, memory> weight_args = {
        {DNNL_ARG_SRC, filled(weights_pd.src_desc())},
        {DNNL_ARG_DIFF_DST, filled(weights_pd.diff_dst_desc())},
        {DNNL_ARG_DIFF_WEIGHTS, filled(weights_pd.diff_weights_desc())},
        {DNNL_ARG_DIFF_BIAS, filled(bias_md)}};
    return std::function<void()>([=, &strm]() mutable {
      data.execute(strm, data_args);
      weights.execute(strm, weight_args);
      strm.wait();
    });
  };
  std::function<void()> run;
  if (!c.transposed) {
    const auto fwd = convolution_forward::primitive_desc(
        convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, src_md, wei_md, bias_md,
                                  dst_md, strides, dil, pad_l, pad_r),
        eng);
    const auto bwd_d = convolution_backward_data::primitive_desc(
        convolution_backward_data::desc(algorithm::convolution_direct, src_md, wei_md, dst_md, strides, dil, pad_l,
                                        pad_r),
        eng, fwd);
    const auto bwd_w = convolution_backward_weights::primitive_desc(
        convolution_backward_weights::desc(algorithm::convolution_direct, src_md, wei_md, bias_md, dst_md, strides, dil,
                                           pad_l, pad_r),
        eng, fwd);
    auto pd = convolution_backward_data(bwd_d);
    auto pw = convolution_backward_weights(bwd_w);
    run = timed_pair(pd, bwd_d, pw, bwd_w);
  } else {
    // Deconvolution weights are (g, oc, ic, k) in oneDNN; our (Cin, Cout/g, k) data is timed as is.
    memory::dims dwei_dims =
        grouped ? memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups} : memory::dims{c.cout, c.cin};
    dwei_dims.insert(dwei_dims.end(), c.kernel.begin(), c.kernel.end());
    const memory::desc dwei_md(dwei_dims, memory::data_type::f32, tag::any);
    const auto fwd = deconvolution_forward::primitive_desc(
        deconvolution_forward::desc(prop_kind::forward_training, algorithm::deconvolution_direct, src_md, dwei_md,
                                    bias_md, dst_md, strides, dil, pad_l, pad_r),
        eng);
    const auto bwd_d = deconvolution_backward_data::primitive_desc(
        deconvolution_backward_data::desc(algorithm::deconvolution_direct, src_md, dwei_md, dst_md, strides, dil, pad_l,
                                          pad_r),
        eng, fwd);
    const auto bwd_w = deconvolution_backward_weights::primitive_desc(
        deconvolution_backward_weights::desc(algorithm::deconvolution_direct, src_md, dwei_md, bias_md, dst_md, strides,
                                             dil, pad_l, pad_r),
        eng, fwd);
    auto pd = deconvolution_backward_data(bwd_d);
    auto pw = deconvolution_backward_weights(bwd_w);
    run = timed_pair(pd, bwd_d, pw, bwd_w);
  }
  return median_seconds(repeats, run);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "shapes.txt";
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 5;
  const std::string filter = argc > 3 ? argv[3] : "";
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  std::printf("%-20s %12s %12s %8s\n", "layer", "ours ms", "oneDNN ms", "ratio");
  std::vector<double> ratios;
  for (const Layer& l : read_layers(file)) {
    if (!filter.empty() && l.name.find(filter) == std::string::npos) continue;
    // oneDNN's view of ConvTbc: a 1-D convolution NCW with the same sizes.
    Layer as_conv = l;
    if (l.tbc) as_conv.tbc = false;
    const double ours = time_ours(l, repeats, stream);
    const double theirs = time_onednn(as_conv, repeats);
    ratios.push_back(ours / theirs);
    std::printf("%-20s %12.2f %12.2f %8.2f\n", l.name.c_str(), ours * 1e3, theirs * 1e3, ours / theirs);
    std::fflush(stdout);
  }
  std::sort(ratios.begin(), ratios.end());
  if (!ratios.empty()) std::printf("median ratio ours/oneDNN: %.2f\n", ratios[ratios.size() / 2]);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
