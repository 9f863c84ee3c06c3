// Phase 2 takes its scratch from the workspace: between aclnn*Backward (or a forward operator's run) and the stream's
// synchronisation the library allocates nothing of 1 KiB or more, on every kind of problem.
// malloc & co. are replaced in this executable (glibc allows it), so every allocation of the
// library, libstdc++, libgomp and Eigen is seen. Not built with sanitizers, which replace them too.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "support/run_conv.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* ptr);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_large{0};
std::atomic<size_t> g_largest{0};

void note(size_t size) {
  if (size < 1024 || !g_counting.load(std::memory_order_relaxed)) return;
  g_large.fetch_add(1);
  size_t seen = g_largest.load();
  while (size > seen && !g_largest.compare_exchange_weak(seen, size)) {
  }
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  note(size);
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  note(count * size);
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, size_t size) {
  note(size);
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
void* memalign(size_t alignment, size_t size) {
  note(size);
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  note(size);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  note(size);
  void* ptr = __libc_memalign(alignment, size);
  if (ptr == nullptr) return ENOMEM;
  *out = ptr;
  return 0;
}
}  // extern "C"

namespace testing_support {
namespace {

class Phase2Heap : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    aclInit(nullptr);
    aclrtSetDevice(0);
    // Warm-up: the default stream's worker, the compute thread and its OpenMP team start once.
    ConvSpec spec{2, 2, 8, 8, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}};
    RunOptions options;
    run_convolution_backward(spec, options, pattern(2 * 8 * 81, 1), pattern(8 * 8 * 9, 2), pattern(2 * 8 * 81, 3));
  }

  static RunOptions counted(RunOptions options = {}) {
    options.phase2_observer = [](bool running) {
      if (running) g_large = 0, g_largest = 0;
      g_counting = running;
    };
    return options;
  }

  static void expect_no_large_allocation(const RunResult& result, const std::string& what) {
    ASSERT_EQ(result.status, 0) << what << ": " << result.error;
    EXPECT_EQ(g_large.load(), 0) << what << ": phase 2 allocated " << g_large.load() << " blocks of >= 1 KiB (largest "
                                 << g_largest.load() << " bytes)";
  }

  static void check(const ConvSpec& spec, const RunOptions& options, const std::string& what) {
    const std::vector<int64_t> x = spec.input_shape(), w = spec.weight_shape(), gy = spec.grad_output_shape();
    const RunResult result = run_convolution_backward(spec, counted(options), pattern(product(x), 1),
                                                      pattern(product(w), 2), pattern(product(gy), 3));
    expect_no_large_allocation(result, what);
  }
};

TEST_F(Phase2Heap, Conv2d) {
  check({2, 4, 64, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}}, {}, "2-D 3x3 c64");
}

TEST_F(Phase2Heap, Conv3d) {
  check({3, 2, 8, 16, 1, {6, 7, 8}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, {}}, {}, "3-D");
}

TEST_F(Phase2Heap, Conv1d) { check({1, 2, 32, 48, 1, {500}, {5}, {1}, {1}, {2}, {2}, false, {}}, {}, "1-D"); }

TEST_F(Phase2Heap, Transposed) {
  check({2, 2, 16, 8, 1, {14, 14}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, {0, 0}}, {}, "transposed 2-D");
}

TEST_F(Phase2Heap, GroupedAndDepthwise) {
  check({2, 2, 32, 32, 4, {15, 15}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}}, {}, "4 groups");
  check({2, 2, 24, 24, 24, {20, 20}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, {}}, {}, "depthwise");
}

TEST_F(Phase2Heap, HalfPrecisionAndStridedViews) {
  const ConvSpec spec{2, 2, 16, 16, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}};
  for (aclDataType dtype : {ACL_FLOAT16, ACL_BF16}) {
    RunOptions o;
    o.grad_output_dtype = o.input_dtype = o.weight_dtype = dtype;
    o.grad_input_dtype = o.grad_weight_dtype = o.grad_bias_dtype = dtype;
    o.input_layout = o.output_layout = Layout::kStrided;
    check(spec, o, dtype == ACL_FLOAT16 ? "FLOAT16 strided" : "BF16 strided");
  }
  RunOptions fp16_math;
  fp16_math.cube_math_type = 2;  // USE_FP16: inputs rounded into the workspace
  check(spec, fp16_math, "cubeMathType USE_FP16");
}

TEST_F(Phase2Heap, ConvTbc) {
  const TbcSpec spec{64, 4, 32, 48, 5, 2};
  const RunResult result = run_conv_tbc_backward(spec, counted(), pattern(64 * 4 * 32, 1), pattern(5 * 32 * 48, 2),
                                                 pattern(spec.out_time() * 4 * 48, 3));
  expect_no_large_allocation(result, "ConvTbc");
}

// The forward operators, with a bias: direct, transposed, ConvTbc and ConvDepthwise2d (BF16, strided).
TEST_F(Phase2Heap, ForwardOperators) {
  ForwardOptions options;
  options.phase2_observer = counted().phase2_observer;
  auto expect_none = [](const ForwardResult& result, const std::string& what) {
    ASSERT_EQ(result.status, 0) << what << ": " << result.error;
    EXPECT_EQ(g_large.load(), 0) << what << ": phase 2 allocated " << g_large.load() << " blocks of >= 1 KiB";
  };
  for (bool transposed : {false, true}) {
    const ConvSpec spec{2, 2, 16, 24, 1, {12, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, transposed, {1, 1}};
    expect_none(run_convolution_forward(spec, options, pattern(product(spec.input_shape()), 1),
                                        pattern(product(spec.weight_shape()), 2), pattern(24, 4)),
                transposed ? "aclnnConvolution, transposed" : "aclnnConvolution");
  }
  const TbcSpec tbc{64, 4, 32, 48, 5, 2};
  expect_none(run_conv_tbc_forward(tbc, options, pattern(64 * 4 * 32, 1), pattern(5 * 32 * 48, 2), pattern(48, 4)),
              "aclnnConvTbc");
  ForwardOptions bf16 = options;
  bf16.input_dtype = bf16.weight_dtype = bf16.bias_dtype = bf16.output_dtype = ACL_BF16;
  bf16.input_layout = bf16.output_layout = Layout::kStrided;
  const ConvSpec depthwise{2, 2, 8, 16, 8, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}};
  expect_none(run_conv_depthwise2d(depthwise, bf16, pattern(2 * 8 * 400, 1), pattern(16 * 9, 2), pattern(16, 4)),
              "aclnnConvDepthwise2d");
}

TEST_F(Phase2Heap, ReferenceImplementations) {
  setenv("ACLNN_CONVBWD_KERNELS", "ref", 1);
  check({2, 2, 8, 8, 2, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, {}}, {}, "reference");
  unsetenv("ACLNN_CONVBWD_KERNELS");
}

// The counter itself works: a large allocation inside the window is seen.
TEST_F(Phase2Heap, CounterSeesAllocations) {
  g_large = 0;
  g_counting = true;
  void* block = std::malloc(4096);
  g_counting = false;
  std::free(block);
  EXPECT_EQ(g_large.load(), 1);
}

}  // namespace
}  // namespace testing_support
