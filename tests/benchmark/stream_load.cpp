// Load benchmark: S host threads, each with its own stream, run the suite's layers at once (one
// full backward each), against the same S x layers backwards back to back on one stream. All
// streams share one compute thread, so the concurrent run should cost about what the serial one
// does (no oversubscription), and every result must be bit-identical to the serial run's.
// Prints both times (best of the rounds, the two ways interleaved), their ratio, and the check.
//
//   stream_load [shapes.txt] [streams=4] [rounds=3]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bench_layers.h"

namespace {

using namespace bench;

// A layer's inputs, shared by every stream (read only).
struct LayerInputs {
  Layer layer;
  Dims x_shape, w_shape, gy_shape;
  aclFormat format;
  std::unique_ptr<AclTensor> x, w, gy, bias;
  explicit LayerInputs(const Layer& l) : layer(l) {
    x_shape = l.input_shape(), w_shape = l.weight_shape(), gy_shape = l.grad_output_shape();
    format = l.tensor_format();
    x = std::make_unique<AclTensor>(x_shape, random_values(count(x_shape), 1), format);
    w = std::make_unique<AclTensor>(w_shape, random_values(count(w_shape), 2), format);
    gy = std::make_unique<AclTensor>(gy_shape, random_values(count(gy_shape), 3), format);
    bias = std::make_unique<AclTensor>(Dims{l.cout}, random_values(l.cout, 4), ACL_FORMAT_ND);
  }
};

// One stream's outputs and workspace for a layer.
struct LayerOutputs {
  std::unique_ptr<AclTensor> gx, gw, gb;
  void* workspace = nullptr;
  uint64_t workspace_size = 0;
  explicit LayerOutputs(const LayerInputs& in) {
    gx = std::make_unique<AclTensor>(in.x_shape, std::vector<float>{}, in.format);
    gw = std::make_unique<AclTensor>(in.w_shape, std::vector<float>{}, in.format);
    gb = std::make_unique<AclTensor>(Dims{in.layer.cout}, std::vector<float>{}, ACL_FORMAT_ND);
  }
  ~LayerOutputs() {
    if (workspace != nullptr) aclrtFree(workspace);
  }
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> all;
    for (const AclTensor* t : {gx.get(), gw.get(), gb.get()}) {
      std::vector<uint8_t> host(t->bytes);
      aclrtMemcpy(host.data(), host.size(), t->data, t->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
      all.insert(all.end(), host.begin(), host.end());
    }
    return all;
  }
};

// Plans one full backward (phase 1) and queues it on `stream` (phase 2).
void launch(const LayerInputs& in, LayerOutputs& out, aclrtStream stream) {
  aclOpExecutor* executor = nullptr;
  uint64_t size = 0;
  plan_backward(in.layer, in.gy->tensor, in.x->tensor, in.w->tensor, in.bias->tensor, out.gx->tensor, out.gw->tensor,
                out.gb->tensor, &size, &executor);
  if (size > out.workspace_size) {
    if (out.workspace != nullptr) aclrtFree(out.workspace);
    aclrtMalloc(&out.workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
    out.workspace_size = size;
  }
  run_backward(in.layer, out.workspace, size, executor, stream);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "shapes.txt";
  const int streams = argc > 2 ? std::stoi(argv[2]) : 4;
  const int rounds = argc > 3 ? std::stoi(argv[3]) : 3;
  aclInit(nullptr);
  aclrtSetDevice(0);
  std::vector<std::unique_ptr<LayerInputs>> inputs;
  for (const Layer& l : read_layers(file)) inputs.push_back(std::make_unique<LayerInputs>(l));
  // outputs[s][i]: stream s, layer i. The serial run writes its own copy.
  std::vector<std::vector<std::unique_ptr<LayerOutputs>>> outputs(static_cast<size_t>(streams)), serial(1);
  for (auto& per_stream : outputs) {
    for (const auto& in : inputs) per_stream.push_back(std::make_unique<LayerOutputs>(*in));
  }
  for (const auto& in : inputs) serial[0].push_back(std::make_unique<LayerOutputs>(*in));
  std::vector<aclrtStream> handles(static_cast<size_t>(streams));
  for (aclrtStream& h : handles) aclrtCreateStream(&h);

  double best_serial = 1e30, best_concurrent = 1e30;
  bool identical = true;
  for (int round = 0; round <= rounds; ++round) {  // round 0 warms up
    // Serial: streams x layers backwards, one after another on one stream.
    auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < streams; ++s) {
      for (size_t i = 0; i < inputs.size(); ++i) launch(*inputs[i], *serial[0][i], handles[0]);
    }
    aclrtSynchronizeStream(handles[0]);
    if (round > 0) best_serial = std::min(best_serial, seconds_since(start));
    // Concurrent: one host thread and one stream each, all at once.
    start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int s = 0; s < streams; ++s) {
      threads.emplace_back([&, s] {
        for (size_t i = 0; i < inputs.size(); ++i) launch(*inputs[i], *outputs[s][i], handles[s]);
        aclrtSynchronizeStream(handles[s]);
      });
    }
    for (std::thread& t : threads) t.join();
    if (round > 0) best_concurrent = std::min(best_concurrent, seconds_since(start));
    for (int s = 0; s < streams; ++s) {
      for (size_t i = 0; i < inputs.size(); ++i)
        identical = identical && outputs[s][i]->bytes() == serial[0][i]->bytes();
    }
  }
  std::printf("streams %d, layers %zu, rounds %d (best of each)\n", streams, inputs.size(), rounds);
  std::printf("one stream, back to back: %10.1f ms\n", best_serial * 1e3);
  std::printf("%d streams at once:       %10.1f ms\n", streams, best_concurrent * 1e3);
  std::printf("ratio concurrent / serial: %.3f\n", best_concurrent / best_serial);
  std::printf("results bit-identical to the serial run: %s\n", identical ? "yes" : "NO");
  for (aclrtStream h : handles) aclrtDestroyStream(h);
  aclrtResetDevice(0);
  aclFinalize();
  return identical ? 0 : 1;
}
