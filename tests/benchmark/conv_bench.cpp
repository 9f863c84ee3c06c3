// Side-by-side benchmark: one full convolution backward (gradInput + gradWeight + gradBias, fp32), or
// the forward pass with its bias, through our public API and through oneDNN, on the layers of
// shapes.txt, in one run.
//
// Per layer, interleaved round by round (oneDNN kernels-only, oneDNN from plain tensors, ours, then
// again), each engine's best round of medians (this machine drifts): ours ms, GFLOP/s, % of the
// measured FMA peak, workspace MiB; oneDNN in its preferred layouts without reorders ("kernels")
// and from/to plain NCHW tensors ("plain": the better of its blocked layouts with the reorders in
// and out timed, and primitives created on the plain layouts); both ratios; then geomeans.
//
//   conv_bench [shapes.txt] [repeats per round = 5] [name-filter] [rounds = 3] [dtype = float]
//              [direction = backward | forward]
//
// name-filter: comma-separated substrings; a layer runs when its name contains one of them.
//
// dtype float16 or bf16 also times our library on tensors of that dtype (every tensor, cubeMathType 0),
// right after our fp32 in every round, and prints it beside our fp32 time (the bar: no slower)
// as the ratio of best rounds and as the median over rounds of each round's ratio ("paired": a best
// round may come from a fast moment of one engine alone, which two rounds timed back to back share),
// and beside oneDNN on tensors of that dtype where this oneDNN and CPU have the primitives: its kernels
// alone, and from/to plain tensors of that dtype (its reorders timed, as for fp32's "plain").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "bench_layers.h"
#include "fma_peak.h"

namespace {

using namespace bench;

// Median of `repeats` timed calls after a warm-up call (repeats 0: the warm-up call's time).
double median_seconds(int repeats, const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();  // warm-up
  if (repeats == 0) return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    start = std::chrono::steady_clock::now();
    body();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Our library, tensors and workspace made once: phase 1 + phase 2 + synchronize per call (what a
// training step pays).
class Ours {
 public:
  Ours(const Layer& l, aclrtStream stream, aclDataType dtype, bool forward)
      : l_(l), stream_(stream), tensors_(l, dtype), forward_(forward) {}
  ~Ours() {
    if (workspace_ != nullptr) aclrtFree(workspace_);
  }
  void run() {
    aclOpExecutor* executor = nullptr;
    forward_ ? tensors_.plan_forward_pass(l_, &size_, &executor) : tensors_.plan(l_, &size_, &executor);
    if (workspace_ == nullptr && size_ > 0) aclrtMalloc(&workspace_, size_, ACL_MEM_MALLOC_HUGE_FIRST);
    forward_ ? run_forward(l_, workspace_, size_, executor, stream_)
             : run_backward(l_, workspace_, size_, executor, stream_);
    aclrtSynchronizeStream(stream_);
  }
  uint64_t workspace_bytes() const { return size_; }

 private:
  Layer l_;
  aclrtStream stream_;
  LayerTensors tensors_;
  bool forward_;
  void* workspace_ = nullptr;
  uint64_t size_ = 0;
};

enum class OneDnnMode {
  kKernelsOnly,   // its preferred (blocked) layouts, data already in them: no reorders timed
  kWithReorders,  // plain tensors in and out: reorders to and from its preferred layouts timed
  kPlainLayout,   // primitives created directly on the plain layouts
};

// A backward-data and a backward-weights (+bias) primitive with their memories, created once, or
// (`forward`) the forward primitive with its bias; the returned function executes them (with the
// reorders `mode` asks for) and waits. Every tensor in `type` (f32, or bf16/f16 for the dtype rows).
std::function<void()> onednn_runner(const Layer& c, OneDnnMode mode, const dnnl::engine& eng, dnnl::stream& strm,
                                    bool forward, dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  using namespace dnnl;
  using tag = memory::format_tag;
  const bool grouped = c.groups > 1;
  const size_t sp = c.spatial.size();
  const tag data_tag = sp == 1 ? tag::ncw : sp == 2 ? tag::nchw : tag::ncdhw;
  const tag weight_tag = grouped ? (sp == 1   ? tag::goiw
                                    : sp == 2 ? tag::goihw
                                              : tag::goidhw)
                                 : (sp == 1   ? tag::oiw
                                    : sp == 2 ? tag::oihw
                                              : tag::oidhw);
  // oneDNN's view: src = the forward input, dst = the forward output. Deconvolution weights are
  // (g, oc, ic, k) in oneDNN; our (Cin, Cout/g, k) data is timed as is (same sizes).
  const memory::dims src_dims = c.input_shape(), dst_dims = c.grad_output_shape();
  memory::dims wei_dims =
      grouped ? memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups} : memory::dims{c.cout, c.cin};
  wei_dims.insert(wei_dims.end(), c.kernel.begin(), c.kernel.end());
  memory::dims strides = c.stride, dil, pad_l = c.pad, pad_r = c.pad;
  for (size_t i = 0; i < sp; ++i) {
    dil.push_back(c.dilation[i] - 1);  // oneDNN counts dilation from 0
    const Dims& big = c.transposed ? dst_dims : src_dims;
    const Dims& small = c.transposed ? src_dims : dst_dims;
    pad_r[i] = (small[2 + i] - 1) * c.stride[i] + (c.kernel[i] - 1) * c.dilation[i] + 1 - big[2 + i] - c.pad[i];
  }
  const bool plain = mode == OneDnnMode::kPlainLayout;
  const memory::desc src_plain(src_dims, type, data_tag);
  const memory::desc dst_plain(dst_dims, type, data_tag);
  const memory::desc wei_plain(wei_dims, type, weight_tag);
  const memory::desc src_md = plain ? src_plain : memory::desc(src_dims, type, tag::any);
  const memory::desc dst_md = plain ? dst_plain : memory::desc(dst_dims, type, tag::any);
  const memory::desc wei_md = plain ? wei_plain : memory::desc(wei_dims, type, tag::any);
  const memory::desc bias_md({c.cout}, type, tag::a);
  auto filled = [&eng, type](const memory::desc& md) {
    memory m(md, eng);
    const bool f32 = type == memory::data_type::f32;
    const auto v = random_values(static_cast<int64_t>(md.get_size() / (f32 ? 4 : 2)), 7);
    if (f32) {
      std::copy(v.begin(), v.end(), static_cast<float*>(m.get_data_handle()));
    } else {  // the same values rounded to 16 bits, as our tensors hold them
      auto* out = static_cast<unsigned char*>(m.get_data_handle());
      const aclDataType as = type == memory::data_type::bf16 ? ACL_BF16 : ACL_FLOAT16;
      for (size_t i = 0; i < v.size(); ++i) AclTensor::store_as(as, v[i], out + 2 * i);
    }
    return m;
  };
  struct Step {
    primitive prim;
    std::unordered_map<int, memory> args;
  };
  auto steps = std::make_shared<std::vector<Step>>();
  // One primitive: each argument in the layout the primitive chose; with kWithReorders, inputs
  // reordered from plain memories before it and outputs to plain memories after it.
  auto add = [&](primitive prim, const std::vector<std::pair<int, memory::desc>>& inputs,
                 const std::vector<std::pair<int, memory::desc>>& outputs,
                 const std::unordered_map<int, memory::desc>& plain_of) {
    Step main{prim, {}};
    std::vector<Step> after;
    for (bool is_input : {true, false}) {
      for (const auto& [id, chosen] : is_input ? inputs : outputs) {
        memory m = is_input ? filled(chosen) : memory(chosen, eng);
        main.args[id] = m;
        const auto p = plain_of.find(id);
        if (mode != OneDnnMode::kWithReorders || p == plain_of.end() || p->second == chosen) continue;
        if (is_input) {
          memory from = filled(p->second);
          steps->push_back({reorder(from, m), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, m}}});
        } else {
          memory to(p->second, eng);
          after.push_back({reorder(m, to), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, to}}});
        }
      }
    }
    steps->push_back(main);
    steps->insert(steps->end(), after.begin(), after.end());
  };
  const std::unordered_map<int, memory::desc> plain_data = {
      {DNNL_ARG_DIFF_DST, dst_plain}, {DNNL_ARG_WEIGHTS, wei_plain}, {DNNL_ARG_DIFF_SRC, src_plain}};
  const std::unordered_map<int, memory::desc> plain_weights = {
      {DNNL_ARG_SRC, src_plain}, {DNNL_ARG_DIFF_DST, dst_plain}, {DNNL_ARG_DIFF_WEIGHTS, wei_plain}};
  auto add_pair = [&](auto data, const auto& data_pd, auto weights, const auto& weights_pd) {
    add(data, {{DNNL_ARG_DIFF_DST, data_pd.diff_dst_desc()}, {DNNL_ARG_WEIGHTS, data_pd.weights_desc()}},
        {{DNNL_ARG_DIFF_SRC, data_pd.diff_src_desc()}}, plain_data);
    add(weights, {{DNNL_ARG_SRC, weights_pd.src_desc()}, {DNNL_ARG_DIFF_DST, weights_pd.diff_dst_desc()}},
        {{DNNL_ARG_DIFF_WEIGHTS, weights_pd.diff_weights_desc()}, {DNNL_ARG_DIFF_BIAS, bias_md}}, plain_weights);
  };
  const std::unordered_map<int, memory::desc> plain_forward = {
      {DNNL_ARG_SRC, src_plain}, {DNNL_ARG_WEIGHTS, wei_plain}, {DNNL_ARG_DST, dst_plain}};
  auto add_forward = [&](auto prim, const auto& pd) {
    add(prim, {{DNNL_ARG_SRC, pd.src_desc()}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_BIAS, bias_md}},
        {{DNNL_ARG_DST, pd.dst_desc()}}, plain_forward);
  };
  if (!c.transposed) {
    const auto fwd = convolution_forward::primitive_desc(
        convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, src_md, wei_md, bias_md,
                                  dst_md, strides, dil, pad_l, pad_r),
        eng);
    if (forward) {
      add_forward(convolution_forward(fwd), fwd);
      return [steps, &strm] {
        for (Step& step : *steps) step.prim.execute(strm, step.args);
        strm.wait();
      };
    }
    const auto bwd_d = convolution_backward_data::primitive_desc(
        convolution_backward_data::desc(algorithm::convolution_direct, src_md, wei_md, dst_md, strides, dil, pad_l,
                                        pad_r),
        eng, fwd);
    const auto bwd_w = convolution_backward_weights::primitive_desc(
        convolution_backward_weights::desc(algorithm::convolution_direct, src_md, wei_md, bias_md, dst_md, strides, dil,
                                           pad_l, pad_r),
        eng, fwd);
    add_pair(convolution_backward_data(bwd_d), bwd_d, convolution_backward_weights(bwd_w), bwd_w);
  } else {
    const auto fwd = deconvolution_forward::primitive_desc(
        deconvolution_forward::desc(prop_kind::forward_training, algorithm::deconvolution_direct, src_md, wei_md,
                                    bias_md, dst_md, strides, dil, pad_l, pad_r),
        eng);
    if (forward) {
      add_forward(deconvolution_forward(fwd), fwd);
      return [steps, &strm] {
        for (Step& step : *steps) step.prim.execute(strm, step.args);
        strm.wait();
      };
    }
    const auto bwd_d = deconvolution_backward_data::primitive_desc(
        deconvolution_backward_data::desc(algorithm::deconvolution_direct, src_md, wei_md, dst_md, strides, dil, pad_l,
                                          pad_r),
        eng, fwd);
    const auto bwd_w = deconvolution_backward_weights::primitive_desc(
        deconvolution_backward_weights::desc(algorithm::deconvolution_direct, src_md, wei_md, bias_md, dst_md, strides,
                                             dil, pad_l, pad_r),
        eng, fwd);
    add_pair(deconvolution_backward_data(bwd_d), bwd_d, deconvolution_backward_weights(bwd_w), bwd_w);
  }
  return [steps, &strm] {
    for (Step& step : *steps) step.prim.execute(strm, step.args);
    strm.wait();
  };
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "shapes.txt";
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 5;
  const std::string filter = argc > 3 ? argv[3] : "";
  const int rounds = argc > 4 ? std::stoi(argv[4]) : 3;
  const std::string dtype_name = argc > 5 ? argv[5] : "float";
  const aclDataType dtype = dtype_name == "float16" ? ACL_FLOAT16 : dtype_name == "bf16" ? ACL_BF16 : ACL_FLOAT;
  const bool half = dtype != ACL_FLOAT;
  const bool forward = argc > 6 && std::string(argv[6]) == "forward";
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const int threads = bench_threads();  // both engines use OpenMP's thread count
  // The FMA peak is measured in every round too (the machine drifts): the best one is the denominator.
  FmaPeak peak = measure_fma_peak(threads);
  struct Row {
    std::string name;
    double ours, kern, plain, flops, workspace_mib;
    char plain_kind;
    double ours_half;   // on `dtype` tensors (half only)
    double paired;      // the median over rounds of ours_half's round / ours' round (half only)
    double kern_half;   // oneDNN's kernels on `dtype` tensors (0: it does not support the case here)
    double plain_half;  // oneDNN from/to plain `dtype` tensors, its reorders timed (0: as kern_half)
  };
  std::vector<Row> rows;
  std::vector<double> plain_all, kern_all, plain_dense, kern_dense, half_all, paired_all;
  for (const Layer& l : read_layers(file)) {
    if (!name_matches(l.name, filter)) continue;
    Layer as_conv = l;  // oneDNN's view of ConvTbc: the 1-D convolution NCW with the same sizes
    as_conv.tbc = false;
    Ours ours(l, stream, ACL_FLOAT, forward);
    std::unique_ptr<Ours> ours_half(half ? new Ours(l, stream, dtype, forward) : nullptr);
    double t_half = 1e30, t_kern_half = 1e30, t_plain_half = 1e30;
    std::function<void()> kernels_half, reorders_half;  // oneDNN on `dtype` tensors, where it has the primitives
    if (half) {
      const auto type = dtype == ACL_BF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f16;
      try {
        kernels_half = onednn_runner(as_conv, OneDnnMode::kKernelsOnly, eng, strm, forward, type);
        reorders_half = onednn_runner(as_conv, OneDnnMode::kWithReorders, eng, strm, forward, type);
      } catch (const dnnl::error&) {
        kernels_half = reorders_half = nullptr;
      }
    }
    const auto kernels = onednn_runner(as_conv, OneDnnMode::kKernelsOnly, eng, strm, forward);
    const auto reorders = onednn_runner(as_conv, OneDnnMode::kWithReorders, eng, strm, forward);
    const auto plain = onednn_runner(as_conv, OneDnnMode::kPlainLayout, eng, strm, forward);
    double t_ours = 1e30, t_kern = 1e30, t_reorders = 1e30, t_plain = 1e30;
    std::vector<double> half_over_ours;  // each round's ratio
    // oneDNN's primitives on plain layouts are sometimes reference loops, 10-100x slower: those
    // are timed once (as the better of its two plain-tensor options they never win).
    const bool plain_is_slow = median_seconds(0, plain) > 4.0 * median_seconds(0, reorders);
    for (int round = 0; round < rounds; ++round) {
      t_kern = std::min(t_kern, median_seconds(repeats, kernels));
      const double ours_round = median_seconds(repeats, [&] { ours.run(); });
      t_ours = std::min(t_ours, ours_round);
      if (half) {
        const double half_round = median_seconds(repeats, [&] { ours_half->run(); });
        t_half = std::min(t_half, half_round);
        half_over_ours.push_back(half_round / ours_round);
      }
      if (kernels_half) t_kern_half = std::min(t_kern_half, median_seconds(repeats, kernels_half));
      if (reorders_half) t_plain_half = std::min(t_plain_half, median_seconds(repeats, reorders_half));
      t_reorders = std::min(t_reorders, median_seconds(repeats, reorders));
      if (!plain_is_slow) t_plain = std::min(t_plain, median_seconds(repeats, plain));
      const FmaPeak now = measure_fma_peak(threads);
      if (now.gflops > peak.gflops) peak = now;
    }
    const double t_dnnl_plain = std::min(t_reorders, t_plain);
    std::sort(half_over_ours.begin(), half_over_ours.end());
    const double paired = half_over_ours.empty() ? 0.0 : half_over_ours[half_over_ours.size() / 2];
    rows.push_back({l.name, t_ours, t_kern, t_dnnl_plain, (forward ? 1 : 2) * convolution_flops(l),
                    ours.workspace_bytes() / 1048576.0, t_reorders <= t_plain ? 'r' : 'p', t_half, paired,
                    kernels_half ? t_kern_half : 0.0, reorders_half ? t_plain_half : 0.0});
    if (half) half_all.push_back(t_half / t_ours), paired_all.push_back(paired);
    std::fprintf(stderr, "%s done\n", l.name.c_str());
    plain_all.push_back(t_ours / t_dnnl_plain);
    kern_all.push_back(t_ours / t_kern);
    if (l.groups == 1 && !l.tbc) {
      plain_dense.push_back(t_ours / t_dnnl_plain);
      kern_dense.push_back(t_ours / t_kern);
    }
  }
  std::printf("%s; ", forward ? "forward with bias" : "full backward");
  std::printf("threads %d, measured FMA peak %.1f GFLOP/s (%s); best of %d interleaved rounds, median of %d each\n",
              threads, peak.gflops, peak.isa, rounds, repeats);
  std::printf("%-20s %9s %8s %6s %7s %10s %10s %11s %10s\n", "layer", "ours ms", "GFLOP/s", "%peak", "ws MiB",
              "dnnl kern", "dnnl plain", "ours/plain", "ours/kern");
  for (const Row& r : rows) {
    const double gflops = r.flops / r.ours / 1e9;
    std::printf("%-20s %9.2f %8.1f %6.1f %7.1f %10.2f %9.2f%c %11.2f %10.2f\n", r.name.c_str(), r.ours * 1e3, gflops,
                100.0 * gflops / peak.gflops, r.workspace_mib, r.kern * 1e3, r.plain * 1e3, r.plain_kind,
                r.ours / r.plain, r.ours / r.kern);
  }
  if (half) {
    std::printf(
        "\nour library on %s tensors against our fp32 (same rounds), and oneDNN on %s tensors: its kernels\n"
        "alone and from/to plain tensors (reorders timed)\n",
        dtype_name.c_str(), dtype_name.c_str());
    std::printf("%-20s %10s %9s %10s %7s %10s %10s %10s %10s\n", "layer", (dtype_name + " ms").c_str(), "fp32 ms",
                "ratio", "paired", "dnnl kern", "dnnl plain", "ours/kern", "ours/plain");
    std::vector<double> versus_dnnl, versus_plain;
    for (const Row& r : rows) {
      std::printf("%-20s %10.2f %9.2f %10.2f %7.2f", r.name.c_str(), r.ours_half * 1e3, r.ours * 1e3,
                  r.ours_half / r.ours, r.paired);
      if (r.kern_half > 0) {
        std::printf(" %10.2f %10.2f %10.2f %10.2f\n", r.kern_half * 1e3, r.plain_half * 1e3, r.ours_half / r.kern_half,
                    r.ours_half / r.plain_half);
        versus_dnnl.push_back(r.ours_half / r.kern_half);
        versus_plain.push_back(r.ours_half / r.plain_half);
      } else {
        std::printf(" %10s %10s\n", "n/a", "n/a");
      }
    }
    std::printf("geomean %s/fp32: %.2f (paired %.2f); ", dtype_name.c_str(), bench::geomean(half_all),
                bench::geomean(paired_all));
    if (versus_dnnl.empty()) {
      std::printf("oneDNN has no %s kernels here\n\n", dtype_name.c_str());
    } else {
      std::printf("ours/oneDNN on %s, where it runs: kernels %.2f, plain %.2f (%zu layers)\n\n", dtype_name.c_str(),
                  bench::geomean(versus_dnnl), bench::geomean(versus_plain), versus_dnnl.size());
    }
  }
  std::printf("dnnl plain: r = its layouts with reorders timed, p = primitives on the plain layouts\n");
  std::printf("geomean ours/oneDNN plain: all %.2f, dense (groups 1, not TBC) %.2f\n", bench::geomean(plain_all),
              bench::geomean(plain_dense));
  std::printf("geomean ours/oneDNN kernels-only: all %.2f, dense %.2f\n", bench::geomean(kern_all),
              bench::geomean(kern_dense));
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
