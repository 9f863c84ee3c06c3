// The bits every path gives on the deformable benchmark's layers (tests/benchmark/dcn_shapes.txt),
// forward (out and deformOut, with the bias) and backward (gradInput, gradWeight, gradOffset, gradBias,
// from the forward's deformOut), held against committed hashes (tests/data/deform_hashes.txt): a change
// meant to keep the results (a vectorized sampling loop, a new instruction set) proves it here, on every
// instruction set this CPU runs (x86-64: avx512, avx2, generic; aarch64: its own), all three dtypes. The
// sampling, scatter and gradOffset sums never fuse their multiply-adds; the GEMMs do on every vector path,
// so the paths that fuse (AVX-512, AVX2, aarch64) share the "fma" lines and x86-64's generic path has its own.
//
// The layers run scaled down (batch 1, a quarter of the channels, a quarter of each spatial axis), so that
// the check takes seconds, also under qemu and the sanitizers. SUITE_HASHES_PRINT=1 prints every line
// (the file's format) to regenerate the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/hash_lines.h"
#include "support/run_deform.h"

namespace testing_support {
namespace {

struct DeformLayer {
  std::string name;
  DeformSpec spec;
};

// dcn_shapes.txt's layers ("name N Cin Cout H W deformableGroups": 3x3, stride 1, padding 1), scaled down.
std::vector<DeformLayer> scaled_down_layers() {
  std::ifstream in(DCN_SHAPES_FILE);
  std::vector<DeformLayer> layers;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    DeformLayer l;
    int64_t batch = 0, cin = 0, cout = 0, h = 0, w = 0, dg = 0;
    std::istringstream words(line);
    if (!(words >> l.name >> batch >> cin >> cout >> h >> w >> dg)) continue;
    DeformSpec& s = l.spec;
    s.batch = 1, s.in_channels = cin / 4, s.out_channels = cout / 4, s.in_h = (h + 3) / 4, s.in_w = (w + 3) / 4;
    s.kh = s.kw = 3;
    for (int64_t& p : s.padding) p = 1;
    s.deformable_groups = dg;
    layers.push_back(l);
  }
  return layers;
}

// n values in [-scale, scale), a fixed pattern per seed.
std::vector<double> pattern(size_t n, int seed, double scale) {
  std::vector<double> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = scale * (static_cast<double>((i * 37 + seed * 11) % 97) / 48.0 - 1.0);
  return values;
}

size_t count_of(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  return n;
}

// The hash of the values' bytes (each result read back exactly, as double).
std::string hash_of(const std::vector<double>& values) {
  return fnv1a_hex(reinterpret_cast<const unsigned char*>(values.data()), values.size() * sizeof(double));
}

// "layer dtype out deformOut gradInput gradWeight gradOffset gradBias": shifts and masks within +-1.9
// (multiples of 1.9/48: most points off the integer grid), the backward taking the forward's deformOut.
std::string hashes(const DeformLayer& l, aclDataType dtype) {
  const DeformSpec& s = l.spec;
  DeformInputs in;
  in.x = pattern(count_of(s.x_shape()), 1, 1.0);
  in.weight = pattern(count_of(s.weight_shape()), 2, 0.1);
  in.offset = pattern(count_of(s.offset_shape()), 3, 1.9);
  in.bias = pattern(static_cast<size_t>(s.out_channels), 4, 0.1);
  in.grad_output = pattern(count_of(s.out_shape()), 7, 0.1);
  const DeformResult forward = run_deformable_forward(s, dtype, Layout::kContiguous, in);
  EXPECT_EQ(forward.status, 0) << l.name << ": " << forward.error;
  in.offset_out = forward.deform_out;
  const DeformResult backward = run_deformable_backward(s, dtype, Layout::kContiguous, in);
  EXPECT_EQ(backward.status, 0) << l.name << ": " << backward.error;
  return l.name + " " + dtype_name(dtype) + " " + hash_of(forward.out) + " " + hash_of(forward.deform_out) + " " +
         hash_of(backward.grad_input) + " " + hash_of(backward.grad_weight) + " " + hash_of(backward.grad_offset) +
         " " + hash_of(backward.grad_bias);
}

TEST(DeformHashes, EveryInstructionSetGivesTheCommittedBits) {
  const bool print = std::getenv("SUITE_HASHES_PRINT") != nullptr;
  const std::map<std::string, std::string> expected = committed_hash_lines(DEFORM_HASHES_FILE);
  const std::vector<DeformLayer> layers = scaled_down_layers();
  ASSERT_EQ(layers.size(), 5u) << DCN_SHAPES_FILE;
  if (!print) {  // fma and x86-generic lines, 3 dtypes each
    ASSERT_EQ(expected.size(), 2 * 5 * 3u) << DEFORM_HASHES_FILE;
  }
  const char* before = std::getenv("ACLNN_CONVBWD_ISA");
  const std::string saved = before != nullptr ? before : "";
  for (const std::string& isa : runnable_isas()) {
    if (!isa.empty()) setenv("ACLNN_CONVBWD_ISA", isa.c_str(), 1);
    for (const DeformLayer& l : layers) {
      for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        const std::string line = std::string(path_word(isa)) + " " + hashes(l, dtype);
        if (print) {
          std::printf("%s\n", line.c_str());
          continue;
        }
        const auto it = expected.find(line.substr(0, line.find(' ') + 1) + l.name + " " + dtype_name(dtype));
        ASSERT_NE(it, expected.end()) << "no committed hashes for " << line;
        EXPECT_EQ(line, it->second) << "isa " << (isa.empty() ? "default" : isa);
      }
    }
  }
  if (before != nullptr) {
    setenv("ACLNN_CONVBWD_ISA", saved.c_str(), 1);
  } else {
    unsetenv("ACLNN_CONVBWD_ISA");
  }
}

}  // namespace
}  // namespace testing_support
