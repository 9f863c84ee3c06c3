// The bits every path gives on the benchmark suite's layers (tests/benchmark/shapes.txt), backward and
// forward (with its bias), held
// against committed hashes (tests/data/suite_hashes.txt): a change that is meant to keep the
// results (a refactoring, a new instruction set's kernels) proves it here, on every instruction set
// this CPU runs (x86-64: avx512, avx2, generic; aarch64: its own), all three dtypes. Every path
// that fuses its multiply-adds (AVX-512, AVX2, aarch64) gives the same bits ("fma" lines).
//
// The layers run scaled down (scaled_down()) so that the whole check takes seconds, also under qemu
// and the sanitizers.
// BF16 in the AMX tiles' order (kernels/amx/amx.h) has lines of its own ("tiles"), which every
// implementation of that order gives: the emulation and the float FMAs of each vector set (AVX-512,
// AVX2, aarch64) on every CPU, AVX512_BF16's pair instructions where the CPU has them (and the CPU's
// tiles: scripts/amx_check.sh).
// SUITE_HASHES_SCALE=full runs them as the suite has them (for a before/after check by hand);
// SUITE_HASHES_PRINT=1 prints every line (the file's format) to regenerate the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/bench_layers.h"
#include "support/hash_lines.h"

namespace {

using bench::AclTensor;
using bench::Layer;
using testing_support::dtype_name;

// The layer the check runs: batch 1 (TBC: 2), a quarter of the channels (per-group channels halved
// while at least 16, else groups), a quarter of each spatial axis (at least 5 positions, 1-D a
// sixteenth, at least 32); every kernel, stride, padding and dilation kept.
Layer scaled_down(Layer l) {
  l.n = l.tbc ? 2 : 1;
  for (int halving = 0; halving < 2; ++halving) {
    const int64_t per_group = std::min(l.cin, l.cout) / l.groups;
    if (per_group >= 16) {
      l.cin /= 2, l.cout /= 2;
    } else if (l.groups % 2 == 0) {
      l.cin /= 2, l.cout /= 2, l.groups /= 2;
    }
  }
  const bool one_d = l.spatial.size() == 1;
  for (int64_t& s : l.spatial) s = std::max(one_d ? (s + 15) / 16 : (s + 3) / 4, std::min<int64_t>(s, one_d ? 32 : 5));
  return l;
}

// The hash of a tensor's bytes.
std::string hash_of(const AclTensor& t) {
  std::vector<unsigned char> bytes(t.bytes);
  aclrtMemcpy(bytes.data(), bytes.size(), t.data, t.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  return testing_support::fnv1a_hex(bytes.data(), bytes.size());
}

// Phase 2 of a planned executor on a workspace of NaNs.
void execute(const Layer& l, bool forward, uint64_t size, aclOpExecutor* executor) {
  void* workspace = nullptr;
  if (size > 0) aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
  if (workspace != nullptr) aclrtMemset(workspace, size, 0xFF, size);  // NaN everywhere
  const aclnnStatus status = forward ? bench::run_forward(l, workspace, size, executor, nullptr)
                                     : bench::run_backward(l, workspace, size, executor, nullptr);
  EXPECT_EQ(status, ACL_SUCCESS) << l.name;
  aclrtSynchronizeStream(nullptr);
  if (workspace != nullptr) aclrtFree(workspace);
}

// "layer dtype gradInput gradWeight gradBias output" for one full backward of `l`, then its forward
// pass with the bias (into gradOutput's tensor, read by then).
std::string hashes(const Layer& l, aclDataType dtype) {
  const bench::LayerTensors t(l, dtype);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  EXPECT_EQ(t.plan(l, &size, &executor), ACL_SUCCESS) << l.name;
  execute(l, false, size, executor);
  const std::string backward = hash_of(t.gx) + " " + hash_of(t.gw) + " " + hash_of(t.gb);
  EXPECT_EQ(t.plan_forward_pass(l, &size, &executor), ACL_SUCCESS) << l.name;
  execute(l, true, size, executor);
  return l.name + " " + dtype_name(dtype) + " " + backward + " " + hash_of(t.gy);
}

std::map<std::string, std::string> committed() { return testing_support::committed_hash_lines(SUITE_HASHES_FILE); }

TEST(SuiteHashes, EveryInstructionSetGivesTheCommittedBits) {
  aclInit(nullptr);
  const bool full =
      std::getenv("SUITE_HASHES_SCALE") != nullptr && std::string(std::getenv("SUITE_HASHES_SCALE")) == "full";
  const bool print = std::getenv("SUITE_HASHES_PRINT") != nullptr;
  const std::map<std::string, std::string> expected = committed();
  const std::vector<Layer> layers = bench::read_layers(SHAPES_FILE);
  ASSERT_EQ(layers.size(), 16u) << SHAPES_FILE;  // (the suite's layers, read)
  if (!full && !print) {                         // fma and x86-generic lines, 3 dtypes each; tiles lines, BF16
    ASSERT_EQ(expected.size(), 2 * 16 * 3u + 16) << SUITE_HASHES_FILE;
  }
  // BF16 on the float kernels: pair products in the tiles' order have their own lines (below), whatever the
  // settings force, unless the hashes are only printed (scripts/amx_check.sh prints them on the tiles it asks for)
  setenv("ACLNN_CONVBWD_BF16_DOT", "0", 1);
  setenv("ACLNN_CONVBWD_AMX", "0", print ? 0 : 1);
  for (const std::string& isa : testing_support::runnable_isas()) {
    if (!isa.empty()) setenv("ACLNN_CONVBWD_ISA", isa.c_str(), 1);
    for (const Layer& layer : layers) {
      const Layer l = full ? layer : scaled_down(layer);
      for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        const std::string line = std::string(testing_support::path_word(isa)) + " " + hashes(l, dtype);
        if (print) std::printf("%s\n", line.c_str());
        if (full || print) continue;
        const auto it = expected.find(line.substr(0, line.find(' ') + 1) + l.name + " " + dtype_name(dtype));
        ASSERT_NE(it, expected.end()) << "no committed hashes for " << line;
        EXPECT_EQ(line, it->second) << "isa " << (isa.empty() ? "default" : isa);
      }
    }
  }
  unsetenv("ACLNN_CONVBWD_ISA");
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
  unsetenv("ACLNN_CONVBWD_AMX");
}

TEST(SuiteHashes, TheTilesOrderGivesTheCommittedBitsOnEveryPath) {
  const bool full =
      std::getenv("SUITE_HASHES_SCALE") != nullptr && std::string(std::getenv("SUITE_HASHES_SCALE")) == "full";
  const bool print = std::getenv("SUITE_HASHES_PRINT") != nullptr;
  const std::map<std::string, std::string> expected = committed();
  const std::vector<Layer> layers = bench::read_layers(SHAPES_FILE);
  if (std::getenv("ACLNN_CONVBWD_ISA") != nullptr) GTEST_SKIP() << "the tiles' lines hold the CPU's FMA kernels' bits";
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no FMA on this CPU";
  // (AVX512_BF16 where the OS saves the zmm state too: XCR0 bits 1, 2, 5, 6, 7)
  unsigned xcr0 = 0, high = 0;
  if (__builtin_cpu_supports("avx512f")) __asm__("xgetbv" : "=a"(xcr0), "=d"(high) : "c"(0));
  const bool vectors =
      __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") && (xcr0 & 0xE6) == 0xE6;
#else
  const bool vectors = false;
#endif
  // (ACLNN_CONVBWD_AMX=emulate: the emulation; =fma: the FMAs of the set ACLNN_CONVBWD_ISA names, or
  // of the CPU's best; =0 with ACLNN_CONVBWD_BF16_DOT=1: VDPBF16PS)
  struct Path {
    const char *name, *amx, *pairs, *isa;
  };
  std::vector<Path> paths = {{"emulated", "emulate", nullptr, nullptr}, {"fma", "fma", nullptr, nullptr}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) paths.push_back({"fma avx2", "fma", nullptr, "avx2"});
#endif
  if (vectors) paths.push_back({"avx512bf16", "0", "1", nullptr});
  for (const Path& path : paths) {
    setenv("ACLNN_CONVBWD_AMX", path.amx, 1);
    if (path.pairs != nullptr) setenv("ACLNN_CONVBWD_BF16_DOT", path.pairs, 1);
    if (path.isa != nullptr) setenv("ACLNN_CONVBWD_ISA", path.isa, 1);
    for (const Layer& layer : layers) {
      const std::string line = "tiles " + hashes(full ? layer : scaled_down(layer), ACL_BF16);
      if (print && path.name == paths[0].name) std::printf("%s\n", line.c_str());
      if (full || print) continue;
      const auto it = expected.find(line.substr(0, line.rfind(" bf16 ") + 5));
      ASSERT_NE(it, expected.end()) << "no committed hashes for " << line;
      EXPECT_EQ(line, it->second) << path.name;
    }
    unsetenv("ACLNN_CONVBWD_AMX");
    unsetenv("ACLNN_CONVBWD_BF16_DOT");
    unsetenv("ACLNN_CONVBWD_ISA");
  }
}

// winograd's bits on every instruction set. It takes forward 3x3 layers of 64 channels and more whose
// transformed weights the tiles amortize, none of the scaled-down suite's: a layer of its own, against
// committed hashes (one for the sets that fuse their multiply-adds, one for x86-64's generic path), the
// forward output with its bias. SUITE_HASHES_PRINT=1 prints them.
TEST(SuiteHashes, WinogradGivesTheCommittedBitsOnEveryPath) {
  Layer l;
  l.name = "winograd_c64";
  l.n = 2, l.cin = 64, l.cout = 72;
  l.spatial = {13, 14}, l.kernel = {3, 3}, l.stride = {1, 1}, l.pad = {1, 1}, l.dilation = {1, 1};
  l.output_padding = {0, 0};
  const char* const kFused = "winograd_c64 float fma 8688bd0b6d23d78c";
  const char* const kGeneric = "winograd_c64 float x86-generic a9ffc15fba53c688";
  setenv("ACLNN_CONVBWD_KERNELS", "winograd", 1);
  for (const std::string& isa : testing_support::runnable_isas()) {
    if (!isa.empty()) setenv("ACLNN_CONVBWD_ISA", isa.c_str(), 1);
    const bench::LayerTensors t(l, ACL_FLOAT);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    if (t.plan_forward_pass(l, &size, &executor) != ACL_SUCCESS) {  // (not ASSERT: the variables are unset below)
      ADD_FAILURE() << "phase 1 failed, isa " << isa;
      continue;
    }
    execute(l, true, size, executor);
    const std::string line = l.name + " float " + testing_support::path_word(isa) + " " + hash_of(t.gy);
    if (std::getenv("SUITE_HASHES_PRINT") != nullptr) std::printf("%s\n", line.c_str());
    EXPECT_EQ(line, isa == "generic" ? kGeneric : kFused) << "isa " << (isa.empty() ? "default" : isa);
  }
  unsetenv("ACLNN_CONVBWD_ISA");
  unsetenv("ACLNN_CONVBWD_KERNELS");
}

}  // namespace
