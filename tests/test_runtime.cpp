// Host runtime: init, devices, memory, streams, system options, recent error message.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "common/log.h"
#include "kernels/common/tasks.h"
#include "meta/plan_executor.h"
#include "runtime/device_backend.h"
#include "runtime/runtime.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

std::string recent_error() {
  const char* message = aclGetRecentErrMsg();
  return message == nullptr ? std::string() : std::string(message);
}

// Queues a task that holds `stream` until `release` is set.
int enqueue_blocker(aclrtStream stream, const std::atomic<bool>& release) {
  return aclnn_cpu::enqueue_on_stream(
      stream,
      [&release] {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return 0;
      },
      "test");
}

TEST(Runtime, InitFinalizeOrder) {
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  EXPECT_NE(recent_error().find("aclInit"), std::string::npos);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  EXPECT_EQ(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
}

TEST(Runtime, RecentErrorIsPerThreadAndClearedOnRead) {
  EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
  std::string other_thread = "unset";
  std::thread([&] { other_thread = recent_error(); }).join();
  EXPECT_EQ(other_thread, "");
  const std::string message = recent_error();
  EXPECT_NE(message.find("aclrtFree"), std::string::npos) << message;
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
}

TEST(Runtime, Devices) {
  uint32_t count = 0;
  ASSERT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
  int32_t device = -5;
  std::thread([&] { EXPECT_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL); }).join();
  EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  ASSERT_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST(Runtime, MallocIsAlignedAndTracked) {
  for (size_t size : {1u, 3u, 64u, 1000u, 1u << 20}) {
    void* ptr = nullptr;
    ASSERT_EQ(aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 64, 0u);
    std::memset(ptr, 0xAB, size);
    EXPECT_EQ(aclrtFree(ptr), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(ptr), ACL_ERROR_INVALID_PARAM);  // double free is reported, not executed
  }
  void* ptr = nullptr;
  EXPECT_EQ(aclrtMalloc(&ptr, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(&ptr, 16, static_cast<aclrtMemMallocPolicy>(99)), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtMalloc(&ptr, 16,
                        static_cast<aclrtMemMallocPolicy>(ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH)),
            ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(ptr), ACL_ERROR_INVALID_PARAM);  // not a host allocation
  EXPECT_EQ(aclrtFree(ptr), ACL_SUCCESS);
  int on_stack = 0;
  EXPECT_EQ(aclrtFree(&on_stack), ACL_ERROR_INVALID_PARAM);
  void* host = nullptr;
  ASSERT_EQ(aclrtMallocHost(&host, 100), ACL_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
  EXPECT_EQ(aclrtFreeHost(host), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocHost(&host, 0), ACL_ERROR_INVALID_PARAM);
}

#if defined(__linux__) && defined(__x86_64__)  // (qemu-user, which runs the aarch64 tests, ignores the hint)
// The VmFlags line of the mapping of this process that holds `address` (/proc/self/smaps), or "".
std::string mapping_flags(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find('-') < line.find(' ')) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line + " ";
    }
  }
  return "";
}
#endif

// The huge-page policies put a block of 2 MiB or more on a 2 MiB boundary and ask Linux for transparent
// huge pages (its mapping then carries the "hg" flag); NORMAL_ONLY blocks keep 64-byte alignment.
TEST(Runtime, MallocHugePagePoliciesAlignLargeBlocksToHugePages) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const auto with_flags = [](int policy, int flags) { return static_cast<aclrtMemMallocPolicy>(policy | flags); };
  for (auto policy : {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
                      with_flags(ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_TYPE_HIGH_BAND_WIDTH)}) {
    void* block = nullptr;
    ASSERT_EQ(aclrtMalloc(&block, 3 * kHugePage / 2 + 5, policy), ACL_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kHugePage, 0u) << policy;
    std::memset(block, 0x5A, 3 * kHugePage / 2 + 5);
#if defined(__linux__) && defined(__x86_64__)
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0) {
      const std::string flags = mapping_flags(block);
      if (!flags.empty()) {  // (none where smaps shows no VmFlags)
        EXPECT_NE(flags.find(" hg "), std::string::npos) << flags;
      }
    }
#endif
    EXPECT_EQ(aclrtFree(block), ACL_SUCCESS);
#if defined(__linux__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
    // (a mapping of its own, gone with the block: nothing maps its address any more)
    EXPECT_EQ(mapping_flags(block), "") << "block not unmapped by aclrtFree";
#endif
  }
  void* small = nullptr;  // below a huge page: the usual alignment, no rounding up
  ASSERT_EQ(aclrtMalloc(&small, kHugePage - 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  for (auto policy :
       {ACL_MEM_MALLOC_NORMAL_ONLY, with_flags(ACL_MEM_MALLOC_NORMAL_ONLY_P2P, ACL_MEM_TYPE_LOW_BAND_WIDTH)}) {
    void* normal = nullptr;
    ASSERT_EQ(aclrtMalloc(&normal, 3 * kHugePage, policy), ACL_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(normal) % 64, 0u);
    std::memset(normal, 0x5A, 3 * kHugePage);
#if defined(__linux__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
    // (no huge-page hint: the C heap's, or its own mapping's, without the hg flag)
    EXPECT_EQ(mapping_flags(normal).find(" hg "), std::string::npos) << policy;
#endif
    EXPECT_EQ(aclrtFree(normal), ACL_SUCCESS);
  }
  EXPECT_EQ(aclrtFree(small), ACL_SUCCESS);
}

// Sizes whose rounding to the alignment would wrap, or that no object can have, are refused
// before anything is allocated: never a small block behind a huge size.
TEST(Runtime, MallocRefusesSizesThatOverflow) {
  void* const untouched = reinterpret_cast<void*>(uintptr_t{0x1234});
  for (size_t size : {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 62, SIZE_MAX - 63, SIZE_MAX / 2 + 1}) {
    void* ptr = untouched;
    EXPECT_EQ(aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_BAD_ALLOC) << size;
    EXPECT_EQ(ptr, untouched) << size;
    std::string message = recent_error();
    EXPECT_NE(message.find("aclrtMalloc: size " + std::to_string(size)), std::string::npos) << message;
    void* host = untouched;
    EXPECT_EQ(aclrtMallocHost(&host, size), ACL_ERROR_BAD_ALLOC) << size;
    EXPECT_EQ(host, untouched) << size;
    message = recent_error();
    EXPECT_NE(message.find("aclrtMallocHost: size " + std::to_string(size)), std::string::npos) << message;
  }
  void* ptr = nullptr;
  ASSERT_EQ(aclrtMalloc(&ptr, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemset(ptr, 4096, 0x5A, 4096), ACL_SUCCESS);
  EXPECT_EQ(static_cast<const uint8_t*>(ptr)[4095], 0x5A);
  EXPECT_EQ(aclrtFree(ptr), ACL_SUCCESS);
}

// A range that would wrap past the end of the address space is refused, not copied or filled.
TEST(Runtime, MemcpyAndMemsetRefuseRangesThatWrap) {
  void* const high = reinterpret_cast<void*>(UINTPTR_MAX - 15);
  char buffer[64] = {};
  EXPECT_EQ(aclrtMemset(high, SIZE_MAX, 0, 32), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtMemset: devPtr"), std::string::npos);
  EXPECT_EQ(aclrtMemsetAsync(high, SIZE_MAX, 0, 32, nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtMemsetAsync: devPtr"), std::string::npos);
  EXPECT_EQ(aclrtMemcpy(high, SIZE_MAX, buffer, 32, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtMemcpy: dst"), std::string::npos);
  EXPECT_EQ(aclrtMemcpy(buffer, sizeof buffer, high, 32, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtMemcpy: src"), std::string::npos);
  EXPECT_EQ(aclrtMemcpyAsync(high, SIZE_MAX, buffer, 32, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtMemcpyAsync: dst"), std::string::npos);
}

TEST(Runtime, MemcpyKindsAndBounds) {
  std::vector<float> host(16);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 1.5f;
  void* dev = nullptr;
  const size_t bytes = host.size() * sizeof(float);
  ASSERT_EQ(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  for (int kind = ACL_MEMCPY_HOST_TO_HOST; kind <= ACL_MEMCPY_INTER_DEVICE_TO_DEVICE; ++kind) {
    std::vector<float> back(host.size(), -1.0f);
    ASSERT_EQ(aclrtMemcpy(dev, bytes, host.data(), bytes, static_cast<aclrtMemcpyKind>(kind)), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(back.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(back, host) << "kind " << kind;
  }
  EXPECT_EQ(aclrtMemcpy(dev, bytes - 1, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("destMax"), std::string::npos);
  EXPECT_EQ(aclrtMemcpy(dev, bytes, host.data(), bytes, static_cast<aclrtMemcpyKind>(8)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(dev, bytes, host.data(), bytes, static_cast<aclrtMemcpyKind>(-1)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(nullptr, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(dev, bytes, nullptr, bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(dev, bytes, host.data(), 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
}

TEST(Runtime, Memset) {
  void* dev = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 32, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemset(dev, 32, 0x7F, 32), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemset(dev, 32, 0x01, 8), ACL_SUCCESS);
  const auto* bytes = static_cast<const uint8_t*>(dev);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(bytes[i], i < 8 ? 0x01 : 0x7F);
  EXPECT_EQ(aclrtMemset(dev, 8, 0, 9), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemset(nullptr, 8, 0, 8), ACL_ERROR_INVALID_PARAM);
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemsetAsync(dev, 32, 0x22, 32, stream), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(bytes[i], 0x22);
  EXPECT_EQ(aclrtMemsetAsync(dev, 4, 0, 8, stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
}

TEST(Runtime, StreamRunsTasksInOrderOffTheCallersThread) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  std::vector<int> order;
  std::atomic<bool> off_thread{true};
  const auto caller = std::this_thread::get_id();
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                  stream,
                  [&order, &off_thread, caller, i] {
                    if (std::this_thread::get_id() == caller) off_thread = false;
                    order.push_back(i);
                    return 0;
                  },
                  "test"),
              ACL_SUCCESS);
  }
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(off_thread);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

TEST(Runtime, MemcpyAsyncOrderedAfterEarlierWork) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  std::vector<int> source(1024, 7), target(1024, 0);
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                stream,
                [&source] {
                  std::this_thread::sleep_for(std::chrono::milliseconds(20));
                  source.assign(source.size(), 9);
                  return 0;
                },
                "test"),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpyAsync(target.data(), target.size() * 4, source.data(), source.size() * 4,
                             ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  EXPECT_EQ(target, std::vector<int>(1024, 9));
  EXPECT_EQ(aclrtMemcpyAsync(target.data(), 4, source.data(), 8, ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

TEST(Runtime, TwoStreamsProgressIndependently) {
  aclrtStream blocked = nullptr, free_stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&blocked), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateStream(&free_stream), ACL_SUCCESS);
  std::atomic<bool> release{false};
  std::atomic<bool> second_done{false};
  ASSERT_EQ(enqueue_blocker(blocked, release), ACL_SUCCESS);
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                free_stream,
                [&second_done] {
                  second_done = true;
                  return 0;
                },
                "test"),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(free_stream), ACL_SUCCESS);  // finishes while the other is blocked
  EXPECT_TRUE(second_done);
  release = true;
  ASSERT_EQ(aclrtSynchronizeStream(blocked), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(blocked), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(free_stream), ACL_SUCCESS);
}

// aclrtSynchronizeDevice waits for every stream without holding the runtime: while it waits on a
// blocked stream, other threads create streams, launch work and synchronise it.
TEST(Runtime, SynchronizeDeviceLetsOtherThreadsLaunch) {
  aclrtStream blocked = nullptr;
  ASSERT_EQ(aclrtCreateStream(&blocked), ACL_SUCCESS);
  std::atomic<bool> release{false}, device_synchronized{false};
  ASSERT_EQ(enqueue_blocker(blocked, release), ACL_SUCCESS);
  std::thread waiter([&] {
    EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
    device_synchronized = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the waiter is now inside
  for (int launcher = 0; launcher < 3; ++launcher) {
    std::thread([&] {
      aclrtStream own = nullptr;
      ASSERT_EQ(aclrtCreateStream(&own), ACL_SUCCESS);
      std::atomic<int> ran{0};
      for (int i = 0; i < 5; ++i) {
        ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                      own,
                      [&ran] {
                        ++ran;
                        return 0;
                      },
                      "test"),
                  ACL_SUCCESS);
      }
      EXPECT_EQ(aclrtSynchronizeStream(own), ACL_SUCCESS);
      EXPECT_EQ(ran, 5);
      EXPECT_EQ(aclrtDestroyStream(own), ACL_SUCCESS);
    }).join();
  }
  EXPECT_FALSE(device_synchronized);  // still waiting for the blocked stream
  release = true;
  waiter.join();
  EXPECT_TRUE(device_synchronized);
  EXPECT_EQ(aclrtDestroyStream(blocked), ACL_SUCCESS);
}

TEST(Runtime, SynchronizeReturnsFirstAsyncFailureWithItsMessage) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  int ran_after = 0;
  auto failing = [](int code) {
    return [code] {
      aclrtFree(nullptr);  // leaves a message on the worker thread
      return code;
    };
  };
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(stream, failing(ACL_ERROR_INVALID_PARAM), "test"), ACL_SUCCESS);
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(stream, failing(ACL_ERROR_INTERNAL_ERROR), "test"), ACL_SUCCESS);
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                stream,
                [&ran_after] {
                  ++ran_after;
                  return 0;
                },
                "test"),
            ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtFree"), std::string::npos);
  EXPECT_EQ(ran_after, 1);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);  // the failure is reported once
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

TEST(Runtime, DestroyDrainsPendingWork) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                  stream,
                  [&done] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    ++done;
                    return 0;
                  },
                  "test"),
              ACL_SUCCESS);
  }
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
  EXPECT_EQ(done.load(), 20);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_ERROR_INVALID_PARAM);  // already destroyed
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST(Runtime, NullStreamIsTheDefaultStream) {
  int value = 0;
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                nullptr,
                [&value] {
                  value = 42;
                  return 0;
                },
                "test"),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  EXPECT_EQ(value, 42);
}

TEST(Runtime, SysParamOptions) {
  int64_t value = -1;
  EXPECT_EQ(aclrtGetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, &value), ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
  ASSERT_EQ(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), ACL_SUCCESS);
  ASSERT_EQ(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value), ACL_SUCCESS);
  EXPECT_EQ(value, 1);
  ASSERT_EQ(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value), ACL_SUCCESS);
  EXPECT_EQ(value, 0);
  EXPECT_EQ(aclrtSetSysParamOpt(static_cast<aclSysParamOpt>(7), 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, nullptr), ACL_ERROR_INVALID_PARAM);
}

// A phase-2 failure inside a plan reaches the caller through the stream, with its message.
class FailingPlan final : public aclnn_cpu::OperatorPlan {
 public:
  uint64_t workspace_bytes() const override { return 0; }
  std::string describe() const override { return "failing"; }
  int execute(void*) const override {
    aclnn_cpu::report_error("failing plan: injected phase-2 failure");
    return ACLNN_ERR_INNER;
  }
};

TEST(Runtime, PhaseTwoFailureReachesSynchronize) {
  aclOpExecutor* executor = aclnn_cpu::register_executor(std::make_unique<aclnn_cpu::PlanExecutor>(
      std::make_unique<FailingPlan>(), "aclnnConvolutionBackward", "test", aclnn_cpu::Refusal{}));
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  EXPECT_EQ(aclnnConvolutionBackward(nullptr, 0, executor, stream), ACLNN_SUCCESS);  // queued
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACLNN_ERR_INNER);
  EXPECT_EQ(recent_error(), "failing plan: injected phase-2 failure");
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);  // reported once
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

// A task that throws inside an OpenMP region fails the run with a message; nothing escapes.
TEST(Runtime, ThrowingParallelTaskFailsTheRun) {
  std::atomic<int> ran{0};
  const int status = aclnn_cpu::run_tasks(16, 2, "probe kernel", [&](int64_t t) {
    ran.fetch_add(1);
    if (t == 5) throw std::runtime_error("boom");
  });
  EXPECT_EQ(status, ACLNN_ERR_INNER);
  EXPECT_EQ(ran.load(), 16);
  EXPECT_NE(recent_error().find("probe kernel"), std::string::npos);
}

// Records its index when run: shows the order in which one stream's plans ran.
class OrderPlan final : public aclnn_cpu::OperatorPlan {
 public:
  OrderPlan(std::vector<int>* log, int index) : log_(log), index_(index) {}
  uint64_t workspace_bytes() const override { return 0; }
  std::string describe() const override { return "order"; }
  int execute(void*) const override {
    log_->push_back(index_);
    return 0;
  }

 private:
  std::vector<int>* log_;
  int index_;
};

// Several streams share one compute thread; work from each still runs and in each stream's order.
TEST(Runtime, StreamsShareTheComputeThread) {
  constexpr int kStreams = 4, kTasks = 20;
  aclrtStream streams[kStreams];
  std::vector<int> order[kStreams];
  for (aclrtStream& s : streams) ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  for (int t = 0; t < kTasks; ++t) {
    for (int s = 0; s < kStreams; ++s) {
      aclnn_cpu::enqueue_on_stream(
          streams[s], [&order, s, t] { return aclnn_cpu::device_backend().launch(OrderPlan(&order[s], t), nullptr); },
          "test");
    }
  }
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  for (int s = 0; s < kStreams; ++s) {
    ASSERT_EQ(order[s].size(), static_cast<size_t>(kTasks));
    for (int t = 0; t < kTasks; ++t) EXPECT_EQ(order[s][static_cast<size_t>(t)], t);
    EXPECT_EQ(aclrtDestroyStream(streams[s]), ACL_SUCCESS);
  }
}

// A plan that runs `body` on the compute thread.
class FunctionPlan final : public aclnn_cpu::OperatorPlan {
 public:
  explicit FunctionPlan(std::function<int()> body) : body_(std::move(body)) {}
  uint64_t workspace_bytes() const override { return 0; }
  std::string describe() const override { return "function"; }
  int execute(void*) const override { return body_(); }

 private:
  std::function<int()> body_;
};

// Runs, from `stream`, a parallel loop of two threads on the compute thread; returns the size of
// the team that ran it (1 without OpenMP), or -1 on failure.
int compute_team_size(aclrtStream stream) {
  std::atomic<int> team{0};
  const FunctionPlan probe([&team] {
    return aclnn_cpu::run_tasks(64, 2, "team probe", [&team](int64_t) {
#ifdef _OPENMP
      team = omp_get_num_threads();
#else
      team = 1;
#endif
    });
  });
  const int queued = aclnn_cpu::enqueue_on_stream(
      stream, [&probe] { return aclnn_cpu::device_backend().launch(probe, nullptr); }, "test");
  if (queued != ACL_SUCCESS || aclrtSynchronizeStream(stream) != ACL_SUCCESS) return -1;
  return team;
}

// The team compute_team_size() sees.
#ifdef _OPENMP
constexpr int kExpectedTeam = 2;
#else
constexpr int kExpectedTeam = 1;
#endif

// The three gradients of a small 2-D convolution (input 2x8x12x12, eight 3x3 filters, padding 1)
// through the public API on `stream`, one after another; empty when a call fails.
std::vector<float> convolution_gradients(aclrtStream stream) {
  const std::vector<int64_t> image{2, 8, 12, 12}, filters{8, 8, 3, 3}, bias{8};
  std::vector<float> input(2 * 8 * 12 * 12), weight(8 * 8 * 3 * 3), grad_output(input.size());
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 13) * 0.25f - 1.5f;
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>(i % 7) * 0.125f - 0.375f;
  for (size_t i = 0; i < grad_output.size(); ++i) grad_output[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
  std::vector<float> grad_input(input.size()), grad_weight(weight.size()), grad_bias(8);
  auto tensor = [](const std::vector<int64_t>& dims, std::vector<float>& data) {
    return aclCreateTensor(dims.data(), dims.size(), ACL_FLOAT, nullptr, 0,
                           dims.size() == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND, dims.data(), dims.size(), data.data());
  };
  aclTensor* tensors[] = {tensor(image, grad_output), tensor(image, input),         tensor(filters, weight),
                          tensor(image, grad_input),  tensor(filters, grad_weight), tensor(bias, grad_bias)};
  const int64_t ones[] = {1, 1}, zeros[] = {0, 0};
  const bool mask[] = {true, true, true};
  aclIntArray* bias_sizes = aclCreateIntArray(bias.data(), 1);
  aclIntArray* unit = aclCreateIntArray(ones, 2);  // stride, padding and dilation
  aclIntArray* output_padding = aclCreateIntArray(zeros, 2);
  aclBoolArray* output_mask = aclCreateBoolArray(mask, 3);
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  void* workspace = nullptr;
  bool ok = aclnnConvolutionBackwardGetWorkspaceSize(tensors[0], tensors[1], tensors[2], bias_sizes, unit, unit, unit,
                                                     false, output_padding, 1, output_mask, 0, tensors[3], tensors[4],
                                                     tensors[5], &workspace_size, &executor) == ACLNN_SUCCESS;
  if (ok && workspace_size > 0) ok = aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
  ok = ok && aclnnConvolutionBackward(workspace, workspace_size, executor, stream) == ACLNN_SUCCESS;
  ok = ok && aclrtSynchronizeStream(stream) == ACL_SUCCESS;
  if (workspace != nullptr) aclrtFree(workspace);
  for (aclTensor* t : tensors) aclDestroyTensor(t);
  aclDestroyIntArray(bias_sizes);
  aclDestroyIntArray(unit);
  aclDestroyIntArray(output_padding);
  aclDestroyBoolArray(output_mask);
  if (!ok) return {};
  std::vector<float> grads = grad_input;
  grads.insert(grads.end(), grad_weight.begin(), grad_weight.end());
  grads.insert(grads.end(), grad_bias.begin(), grad_bias.end());
  return grads;
}

// Runs `body` in a fork()ed child and returns its exit status; a child still running after 20 s
// is killed (a hang fails the test instead of stalling the suite) and -1 is returned.
int exit_status_of_child(const std::function<int()>& body) {
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    int status = 1;
    try {
      status = body();
    } catch (...) {
    }
    _exit(status);  // no exit handlers or GoogleTest teardown in the child
  }
  for (int waited_ms = 0; waited_ms < 20000; waited_ms += 10) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

// GoogleTest's assertions do not reach the parent from a child: a failed check is named on stderr
// and the child exits with status 1.
#define CHILD_CHECK(condition)                                            \
  do {                                                                    \
    if (!(condition)) {                                                   \
      std::fprintf(stderr, "child, line %d: %s\n", __LINE__, #condition); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

// The forked child has only the thread that called fork(): the runtime starts new stream workers
// and a new compute thread (with a new OpenMP team) there. Streams created before the fork keep
// working in the child; the work they had queued or running belongs to the parent, is dropped in
// the child, and the stream's next synchronize there reports it.
TEST(Fork, ChildRunsOperatorsOnItsOwnThreads) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer refuses to start threads in the child of a multithreaded fork()";
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  GTEST_SKIP() << "ThreadSanitizer refuses to start threads in the child of a multithreaded fork()";
#endif
#endif
#ifdef ACLNN_TEST_EMULATED
  GTEST_SKIP() << "qemu-user aborts in the child of a multithreaded fork() (cross builds' emulator)";
#endif
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  const std::vector<float> expected = convolution_gradients(nullptr);
  ASSERT_FALSE(expected.empty());
  aclrtStream idle = nullptr, busy = nullptr;
  ASSERT_EQ(aclrtCreateStream(&idle), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateStream(&busy), ACL_SUCCESS);
  EXPECT_EQ(convolution_gradients(idle), expected);
  EXPECT_EQ(compute_team_size(idle), kExpectedTeam);
  // At the fork, `busy` has a plan running on the compute thread and a task queued behind it.
  std::atomic<bool> started{false}, release{false};
  std::atomic<int> queued_ran{0};
  const FunctionPlan blocker([&started, &release] {
    started = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 0;
  });
  ASSERT_EQ(aclnn_cpu::enqueue_on_stream(
                busy, [&blocker] { return aclnn_cpu::device_backend().launch(blocker, nullptr); }, "test"),
            ACL_SUCCESS);
  EXPECT_EQ(aclnn_cpu::enqueue_on_stream(
                busy,
                [&queued_ran] {
                  ++queued_ran;
                  return 0;
                },
                "test"),
            ACL_SUCCESS);
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const int child = exit_status_of_child([&]() -> int {
    CHILD_CHECK(convolution_gradients(nullptr) == expected);  // the default stream
    aclrtStream fresh = nullptr;
    CHILD_CHECK(aclrtCreateStream(&fresh) == ACL_SUCCESS);
    CHILD_CHECK(convolution_gradients(fresh) == expected);
    CHILD_CHECK(compute_team_size(fresh) == kExpectedTeam);
    CHILD_CHECK(aclrtDestroyStream(fresh) == ACL_SUCCESS);
    CHILD_CHECK(convolution_gradients(idle) == expected);
    CHILD_CHECK(aclrtSynchronizeStream(busy) == ACL_ERROR_RT_FAILURE);  // the parent's work, dropped
    CHILD_CHECK(recent_error().find("fork") != std::string::npos);
    CHILD_CHECK(aclrtSynchronizeStream(busy) == ACL_SUCCESS);  // reported once
    CHILD_CHECK(convolution_gradients(busy) == expected);
    CHILD_CHECK(queued_ran == 0);
    CHILD_CHECK(aclrtDestroyStream(busy) == ACL_SUCCESS);
    CHILD_CHECK(aclrtDestroyStream(idle) == ACL_SUCCESS);
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    CHILD_CHECK(aclInit(nullptr) == ACL_SUCCESS);
    CHILD_CHECK(convolution_gradients(nullptr) == expected);
    CHILD_CHECK(aclrtSynchronizeDevice() == ACL_SUCCESS);
    CHILD_CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
  });
  release = true;
  EXPECT_EQ(child, 0) << "-1: the child hung and was killed; 1: a check failed (stderr); above 128: a signal";
  EXPECT_EQ(aclrtSynchronizeStream(busy), ACL_SUCCESS);
  EXPECT_EQ(queued_ran, 1);  // the parent's queued work ran once, in the parent
  EXPECT_EQ(convolution_gradients(busy), expected);
  EXPECT_EQ(aclrtDestroyStream(busy), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(idle), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

}  // namespace

namespace {

// "[ERROR] ACLNN(<pid>,test_runtime):yyyy-mm-dd-hh:mm:ss.mmm.uuu <message>\n"
void expect_log_line(const std::string& line, const std::string& message) {
  const std::string head = "[ERROR] ACLNN(" + std::to_string(getpid()) + ",test_runtime):";
  ASSERT_EQ(line.compare(0, head.size(), head), 0) << line;
  const std::string stamp = line.substr(head.size(), 27);
  ASSERT_EQ(stamp.size(), 27u) << line;
  const char* shape = "dddd-dd-dd-dd:dd:dd.ddd.ddd";
  for (size_t i = 0; i < stamp.size(); ++i) {
    if (shape[i] == 'd') {
      EXPECT_TRUE(stamp[i] >= '0' && stamp[i] <= '9') << line;
    } else {
      EXPECT_EQ(stamp[i], shape[i]) << line;
    }
  }
  EXPECT_EQ(line.substr(head.size() + 27), " " + message + "\n");
}

TEST(Logging, OneLineFormatOnStderrByDefault) {
  unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
  unsetenv("ASCEND_PROCESS_LOG_PATH");
  ::testing::internal::CaptureStderr();
  aclnn_cpu::report_error("probe: a logged message");
  expect_log_line(::testing::internal::GetCapturedStderr(), "probe: a logged message");
  EXPECT_EQ(recent_error(), "probe: a logged message");
}

TEST(Logging, PrintToStdout) {
  setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  aclnn_cpu::report_error("probe: to stdout");
  const std::string out = ::testing::internal::GetCapturedStdout(), err = ::testing::internal::GetCapturedStderr();
  unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
  expect_log_line(out, "probe: to stdout");
  EXPECT_EQ(err, "");
}

TEST(Logging, ProcessLogPath) {
  char directory[] = "/tmp/aclnn_log_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  setenv("ASCEND_PROCESS_LOG_PATH", directory, 1);
  ::testing::internal::CaptureStderr();
  aclnn_cpu::report_error("probe: to a file");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  unsetenv("ASCEND_PROCESS_LOG_PATH");
  const std::string plog = std::string(directory) + "/plog";
  DIR* listing = opendir(plog.c_str());
  ASSERT_NE(listing, nullptr);
  std::string name;
  while (dirent* entry = readdir(listing)) {
    if (std::string(entry->d_name).rfind("plog-" + std::to_string(getpid()) + "_", 0) == 0) name = entry->d_name;
  }
  closedir(listing);
  ASSERT_FALSE(name.empty());
  EXPECT_EQ(name.size(), std::string("plog-_yyyymmddhhmmssmmm.log").size() + std::to_string(getpid()).size());
  std::ifstream file(plog + "/" + name);
  std::stringstream contents;
  contents << file.rdbuf();
  expect_log_line(contents.str(), "probe: to a file");
}

TEST(Logging, LevelFilter) {
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
  ::testing::internal::CaptureStderr();
  aclnn_cpu::report_error("probe: filtered");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
  EXPECT_EQ(recent_error(), "probe: filtered");  // still recorded for aclGetRecentErrMsg
}

}  // namespace
