// roofline: each layer's forward and each gradient of its backward timed alone through our public API,
// against the two roofs of this machine: the measured FMA peak (fma_peak.cpp) and the measured memory
// bandwidth (a copy between two 256 MiB buffers, STREAM's count: bytes read plus bytes written).
//   roofline [shapes.txt] [rounds = 3] [name-filter] [dtype = float] [calls = 3]
// Per layer and part (forward, gradInput, gradWeight, gradBias; `all` for a ConvTbc layer, whose API
// computes the three together) it prints the floating-point operations (2 per multiply-add; gradBias one
// add per gradOutput entry), the bytes that must move (every tensor the part reads, once, and every one it
// writes), their ratio (the arithmetic intensity), the time (the best call of the best round; rounds
// interleave the parts and layers, and measure both roofs again each, as the machine drifts), the
// GFLOP/s and their share of the FMA peak, the GB/s and their share of the bandwidth, which roof bounds
// the part (compute where its intensity is above the machine's peak / bandwidth), and the share of that
// bound's time the part reaches. Under ACLNN_CONVBWD_ISA=avx2 or generic the FMA peak is that set's too.
// The bytes are a floor: a small layer's tensors fit in the caches, where the bandwidth is higher.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench_layers.h"
#include "fma_peak.h"

namespace {

using namespace bench;

// Copy bandwidth (GB/s) with `threads` threads, each copying its own slice, best of 3.
double measure_bandwidth(int threads) {
  const size_t floats = size_t{64} << 20;  // 256 MiB a buffer
  std::vector<float> from(floats, 1.0f), to(floats, 0.0f);
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t begin = floats * t / threads, end = floats * (t + 1) / threads;
        std::copy(from.begin() + begin, from.begin() + end, to.begin() + begin);
      });
    }
    for (std::thread& t : pool) t.join();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (to[floats / 2] != 1.0f) std::fprintf(stderr, "bandwidth: the copy did not happen\n");
  return 2.0 * floats * sizeof(float) / best / 1e9;
}

// One part of a layer: what it computes, the work and traffic it must do.
struct Part {
  const char* name;
  bool outputs[3];  // gradInput, gradWeight, gradBias
  bool forward;
  double flops, bytes;
  double best = 1e30;  // seconds
};

std::vector<Part> parts_of(const Layer& l, size_t element) {
  const double conv = convolution_flops(l);  // (one convolution)
  const double x = double(count(l.input_shape())) * element, w = double(count(l.weight_shape())) * element,
               dy = double(count(l.grad_output_shape())) * element, bias = double(l.cout) * element;
  const double dy_entries = double(count(l.grad_output_shape()));
  if (l.tbc) return {{"all", {true, true, true}, false, 2 * conv + dy_entries, 2 * x + 2 * w + dy + bias}};
  return {{"forward", {false, false, false}, true, conv + dy_entries, x + w + bias + dy},
          {"gradInput", {true, false, false}, false, conv, dy + w + x},
          {"gradWeight", {false, true, false}, false, conv, x + dy + w},
          {"gradBias", {false, false, true}, false, dy_entries, dy + bias}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "shapes.txt";
  const int rounds = argc > 2 ? std::max(1, std::stoi(argv[2])) : 3;
  const std::string filter = argc > 3 ? argv[3] : "";
  const std::string dtype_name = argc > 4 ? argv[4] : "float";
  const int calls = argc > 5 ? std::max(1, std::stoi(argv[5])) : 3;
  const aclDataType dtype = dtype_name == "float16" ? ACL_FLOAT16 : dtype_name == "bf16" ? ACL_BF16 : ACL_FLOAT;
  const size_t element = dtype == ACL_FLOAT ? 4 : 2;
  const int threads = bench_threads();
  const char* isa_setting = std::getenv("ACLNN_CONVBWD_ISA");
  const char* widest = isa_setting != nullptr ? isa_setting : "";

  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  std::vector<Layer> layers;
  std::vector<std::vector<Part>> parts;
  for (const Layer& l : read_layers(file)) {
    if (!name_matches(l.name, filter)) continue;
    layers.push_back(l);
    parts.push_back(parts_of(l, element));
  }
  FmaPeak peak{"", 0.0};
  double bandwidth = 0;
  int status = 0;
  for (int round = 0; round < rounds; ++round) {
    const FmaPeak now = measure_fma_peak(threads, widest);
    if (now.gflops > peak.gflops) peak = now;
    bandwidth = std::max(bandwidth, measure_bandwidth(threads));
    for (size_t i = 0; i < layers.size(); ++i) {
      const LayerTensors t(layers[i], dtype);
      for (Part& part : parts[i]) {
        const double seconds = best_call_seconds(layers[i], t, stream, calls, part.outputs, part.forward);
        if (seconds < 0) status = 1;
        if (seconds > 0) part.best = std::min(part.best, seconds);
      }
    }
  }
  const double balance = peak.gflops / bandwidth;  // FLOP per byte where the two roofs meet
  std::printf(
      "threads %d, %s; FMA peak %.1f GFLOP/s (%s), copy bandwidth %.1f GB/s, balance %.1f FLOP/B; best of %d "
      "rounds of %d calls\n",
      threads, dtype_name.c_str(), peak.gflops, peak.isa, bandwidth, balance, rounds, calls);
  std::printf(
      "| layer | part | GFLOP | MB | FLOP/B | ms | GFLOP/s | %% FMA peak | GB/s | %% bandwidth | bound | %% of "
      "bound |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
  for (size_t i = 0; i < layers.size(); ++i) {
    for (const Part& part : parts[i]) {
      if (part.best >= 1e30) continue;  // (every call of it failed: said on stderr)
      const double gflops = part.flops / part.best / 1e9, gbs = part.bytes / part.best / 1e9;
      const double intensity = part.flops / part.bytes;
      const bool compute = intensity >= balance;
      const double floor = std::max(part.flops / (peak.gflops * 1e9), part.bytes / (bandwidth * 1e9));
      std::printf("| %s | %s | %.2f | %.1f | %.1f | %.3f | %.1f | %.1f | %.1f | %.1f | %s | %.1f |\n",
                  layers[i].name.c_str(), part.name, part.flops / 1e9, part.bytes / 1e6, intensity, part.best * 1e3,
                  gflops, 100.0 * gflops / peak.gflops, gbs, 100.0 * gbs / bandwidth, compute ? "compute" : "memory",
                  100.0 * floor / part.best);
    }
  }
  aclrtDestroyStream(stream);
  aclFinalize();
  return status;
}
