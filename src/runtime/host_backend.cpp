// Host CPU device backend: device memory is aligned host memory, copies are memmove, streams are
// worker threads, and operators run through the implementation lists on one shared compute thread.
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define ACLNN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ACLNN_ASAN 1
#endif
#endif
#ifdef ACLNN_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

#include "runtime/compute_thread.h"
#include "runtime/device_backend.h"
#include "runtime/stream.h"

namespace aclnn_cpu {
namespace {

class HostBackend final : public DeviceBackend {
 public:
  // The transparent huge page of x86-64, and of aarch64 kernels with 4 KiB pages.
  static constexpr size_t kHugePage = size_t{2} << 20;

  const char* name() const override { return "host-cpu"; }
  uint32_t device_count() const override { return 1; }

  void* allocate(size_t bytes, size_t alignment, bool huge_pages) override {
    if (on_huge_pages(bytes, huge_pages)) return allocate_huge(bytes, std::max(alignment, kHugePage));
    // aligned_alloc takes a multiple of the alignment; a size that cannot be rounded up has no block.
    size_t rounded;
    if (__builtin_add_overflow(bytes, alignment - 1, &rounded)) return nullptr;
    return std::aligned_alloc(alignment, rounded - rounded % alignment);
  }
  void release(void* ptr, size_t bytes, bool huge_pages) override {
    if (on_huge_pages(bytes, huge_pages) && !kHugeFromHeap) {
      munmap(ptr, whole_huge_pages(bytes));
    } else {
      std::free(ptr);
    }
  }
  void copy(void* dst, const void* src, size_t bytes, aclrtMemcpyKind) override { std::memmove(dst, src, bytes); }
  void fill(void* dst, uint8_t value, size_t bytes) override { std::memset(dst, value, bytes); }

  std::unique_ptr<Stream> create_stream() override {
    try {
      return std::make_unique<HostStream>();
    } catch (const std::system_error&) {
      return nullptr;
    }
  }

  std::unique_ptr<OperatorPlan> plan(const OperatorProblem& problem, const char* api) override {
    return problem.plan_on_host(compute_threads(), api);
  }

  int launch(const OperatorPlan& plan, void* workspace) override {
    return compute().run([&plan, workspace] { return plan.execute(workspace); });
  }

 private:
  // A block of a huge page or more asked for on huge pages: whole huge pages from a boundary, in a mapping of
  // its own, and Linux asked to back them with transparent huge pages (a hint: with THP off they stay base
  // pages). The kernels read tensors of megabytes a plane of each channel at a time; on 4 KiB pages nearly
  // every plane is a TLB miss of its own. (Its own mapping: the hint ends with the block, where on the C heap
  // it would stay on memory that later small allocations reuse.)
  static void* allocate_huge(size_t bytes, size_t boundary) {
    if (bytes > kMaxBytes || boundary > kMaxBytes) return nullptr;  // (no object is that large: no wrap below)
    const size_t rounded = whole_huge_pages(bytes);
#ifdef ACLNN_ASAN
    // (under AddressSanitizer from its heap, the bytes past the asked-for ones unaddressable, so that an overrun
    // of a tensor or a workspace is still reported)
    void* block = std::aligned_alloc(boundary, (rounded + boundary - 1) / boundary * boundary);
    if (block != nullptr) ASAN_POISON_MEMORY_REGION(static_cast<char*>(block) + bytes, rounded - bytes);
#else
    // (a boundary's more than the block, to find the boundary in; the rest unmapped)
    void* mapped = mmap(nullptr, rounded + boundary, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return nullptr;
    const uintptr_t at = reinterpret_cast<uintptr_t>(mapped);
    const uintptr_t begin = (at + boundary - 1) & ~uintptr_t{boundary - 1};
    if (begin > at) munmap(mapped, begin - at);
    if (begin + rounded < at + rounded + boundary)
      munmap(reinterpret_cast<void*>(begin + rounded), at + rounded + boundary - (begin + rounded));
    void* block = reinterpret_cast<void*>(begin);
#endif
#ifdef MADV_HUGEPAGE
    if (block != nullptr) madvise(block, rounded, MADV_HUGEPAGE);  // (refused: the pages stay small)
#endif
    return block;
  }
  static constexpr size_t kMaxBytes = PTRDIFF_MAX;
  // Whether allocate() gives a block its huge pages (allocate_huge), and where from: a mapping of its own, or
  // under AddressSanitizer its heap.
  static bool on_huge_pages(size_t bytes, bool huge_pages) { return huge_pages && bytes >= kHugePage; }
#ifdef ACLNN_ASAN
  static constexpr bool kHugeFromHeap = true;
#else
  static constexpr bool kHugeFromHeap = false;
#endif
  // bytes rounded up to whole huge pages (bytes at most kMaxBytes: no wrap).
  static size_t whole_huge_pages(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
  static ComputeThread& compute() {
    static ComputeThread* thread = new ComputeThread();  // never destroyed: its thread outlives statics
    return *thread;
  }
};

}  // namespace

DeviceBackend& device_backend() {
  static HostBackend backend;
  return backend;
}

}  // namespace aclnn_cpu
