// ab_time: our full backward of each layer of a shapes file, timed alone (no other engine in the
// process), for before/after comparisons of a change: scripts/ab_bench.sh runs it against two builds
// of the library, layer by layer, interleaved.
//   ab_time [shapes.txt] [calls = 10] [name-filter] [dtype = float] [outputs = 111 | forward]
// Prints "<layer> <ms> <phase-1 ms>" per layer: the fastest of `calls` calls, each phase 1, phase 2 and
// the stream's synchronisation, as a training step pays, and the fastest phase 1 alone. name-filter: comma-separated
// substrings (conv_bench's). outputs: the output mask (gradInput, gradWeight, gradBias) as three digits, e.g. 100 for
// gradInput alone, to time one gradient (ConvTbcBackward has no mask: its layers always compute all three); forward:
// the layer's forward pass with its bias instead (conv_bench's forward direction).
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
    double plan = 0;
    const double best = best_call_seconds(l, t, stream, calls, outputs, forward, &plan);
    if (best < 0) {
      status = 1;
      continue;
    }
    std::printf("%s %.3f %.3f\n", l.name.c_str(), best * 1e3, plan * 1e3);
  }
  aclrtDestroyStream(stream);
  aclFinalize();
  return status;
}
