// ab_time: our full backward of each layer of a shapes file, timed alone (no other engine in the
// process), for before/after comparisons of a change: scripts/ab_bench.sh runs it against two builds
// of the library, layer by layer, interleaved.
//   ab_time [shapes.txt] [calls = 10] [name-filter] [dtype = float] [outputs = 111 | forward]
// Prints "<layer> <ms> <phase-1 ms>" per layer: the fastest of `calls` calls, each phase 1, phase 2 and
// the stream's synchronisation, as a training step pays, and the fastest phase 1 alone. name-filter: comma-separated
// substrings (conv_bench's). outputs: the output mask (gradInput, gradWeight, gradBias) as three digits, e.g. 100 for
// gradInput alone, to time one gradient (ConvTbcBackward has no mask: its layers always compute all three); forward:
// the layer's forward pass with its bias instead (conv_bench's forward direction).
#include <chrono>
#include <cstdio>
#include <string>

#include "bench_layers.h"

int main(int argc, char** argv) {
  using namespace bench;
  const std::string file = argc > 1 ? argv[1] : "shapes.txt";
  const int calls = argc > 2 ? std::max(1, std::stoi(argv[2])) : 10;
  const std::string filter = argc > 3 ? argv[3] : "";
  const std::string dtype_name = argc > 4 ? argv[4] : "float";
  const aclDataType dtype = dtype_name == "float16" ? ACL_FLOAT16 : dtype_name == "bf16" ? ACL_BF16 : ACL_FLOAT;
  const std::string mask = argc > 5 ? argv[5] : "111";
  bool outputs[3] = {true, true, true};
  const bool forward = mask == "forward";
  for (size_t i = 0; i < 3 && i < mask.size() && !forward; ++i) outputs[i] = mask[i] == '1';
  aclInit(nullptr);
  aclrtSetDevice(0);
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  int status = 0;
  for (const Layer& l : read_layers(file)) {
    if (!name_matches(l.name, filter)) continue;
    const LayerTensors t(l, dtype);
    void* workspace = nullptr;
    uint64_t booked = 0;
    double best = 0, best_plan = 0;
    for (int call = 0; call < calls; ++call) {
      const auto start = std::chrono::steady_clock::now();
      uint64_t size = 0;
      aclOpExecutor* executor = nullptr;
      if ((forward ? t.plan_forward_pass(l, &size, &executor) : t.plan(l, &size, &executor, outputs)) != ACL_SUCCESS) {
        std::fprintf(stderr, "%s: phase 1 failed\n", l.name.c_str());
        status = 1;
        break;
      }
      const auto planned = std::chrono::steady_clock::now();
      if (size > booked) {  // (allocated outside the timed parts: a training loop keeps its workspace)
        if (workspace != nullptr) aclrtFree(workspace);
        aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
        booked = size;
      }
      const auto allocated = std::chrono::steady_clock::now();
      if ((forward ? run_forward(l, workspace, size, executor, stream)
                   : run_backward(l, workspace, size, executor, stream)) != ACL_SUCCESS) {
        std::fprintf(stderr, "%s: phase 2 failed\n", l.name.c_str());
        status = 1;
        break;
      }
      aclrtSynchronizeStream(stream);
      const auto end = std::chrono::steady_clock::now();
      const double ms = std::chrono::duration<double, std::milli>((planned - start) + (end - allocated)).count();
      const double plan_ms = std::chrono::duration<double, std::milli>(planned - start).count();
      if (call == 0 || ms < best) best = ms;
      if (call == 0 || plan_ms < best_plan) best_plan = plan_ms;
    }
    if (workspace != nullptr) aclrtFree(workspace);
    std::printf("%s %.3f %.3f\n", l.name.c_str(), best, best_plan);
  }
  aclrtDestroyStream(stream);
  aclFinalize();
  return status;
}
