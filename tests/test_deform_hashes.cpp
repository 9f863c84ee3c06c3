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

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// FNV-1a over the values' bytes (each result read back exactly, as double), as 16 hex digits.
std::string hash_of(const std::vector<double>& values) {
  uint64_t h = 1469598103934665603ull;
  for (double v : values) {
    unsigned char bytes[sizeof(double)];
    std::memcpy(bytes, &v, sizeof(v));
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
  return text;
}

const char* dtype_name(aclDataType dtype) {
  return dtype == ACL_FLOAT ? "float" : dtype == ACL_FLOAT16 ? "float16" : "bf16";
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

// The committed lines ("path layer dtype ..."), by "path layer dtype".
std::map<std::string, std::string> committed() {
  std::ifstream in(DEFORM_HASHES_FILE);
  std::map<std::string, std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string path, layer, dtype;
    words >> path >> layer >> dtype;
    lines[path + " " + layer + " " + dtype] = line;
  }
  return lines;
}

// The instruction sets this build and CPU run (ACLNN_CONVBWD_ISA values), or the one ACLNN_CONVBWD_ISA names.
std::vector<std::string> isas() {
  if (const char* isa = std::getenv("ACLNN_CONVBWD_ISA")) return {isa};
#if defined(__x86_64__)
  std::vector<std::string> out = {"generic"};
  __builtin_cpu_init();
  unsigned a = 0, b = 0, c = 0, d = 0;  // (cpuid leaf 1 ECX: F16C, which the vector kits also need)
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  const bool vectors = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  if (vectors) out.push_back("avx2");
  if (vectors && __builtin_cpu_supports("avx512f")) out.push_back("avx512");
  return out;
#else
  return {""};  // the one path this build has
#endif
}

TEST(DeformHashes, EveryInstructionSetGivesTheCommittedBits) {
  const bool print = std::getenv("SUITE_HASHES_PRINT") != nullptr;
  const std::map<std::string, std::string> expected = committed();
  const std::vector<DeformLayer> layers = scaled_down_layers();
  ASSERT_EQ(layers.size(), 5u) << DCN_SHAPES_FILE;
  if (!print) {  // fma and x86-generic lines, 3 dtypes each
    ASSERT_EQ(expected.size(), 2 * 5 * 3u) << DEFORM_HASHES_FILE;
  }
  const char* before = std::getenv("ACLNN_CONVBWD_ISA");
  const std::string saved = before != nullptr ? before : "";
  for (const std::string& isa : isas()) {
    if (!isa.empty()) setenv("ACLNN_CONVBWD_ISA", isa.c_str(), 1);
    for (const DeformLayer& l : layers) {
      for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        const std::string line = std::string(isa == "generic" ? "x86-generic " : "fma ") + hashes(l, dtype);
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
