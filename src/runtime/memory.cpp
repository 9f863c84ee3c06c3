// AscendCL memory API: device and host allocations, copies and fills (sync and async).
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "acl/acl.h"
#include "common/fork.h"
#include "common/guard.h"
#include "common/log.h"
#include "runtime/device_backend.h"
#include "runtime/runtime.h"

namespace aclnn_cpu {
namespace {

constexpr size_t kAlignment = 64;
// No object may be larger than PTRDIFF_MAX bytes (differences of pointers into it must be
// defined). Below it, rounding a size up to kAlignment cannot wrap.
constexpr size_t kMaxAllocation = PTRDIFF_MAX;

// Live allocations by address, so frees of foreign or stale pointers are reported, not executed; with
// what the backend needs to release each.
struct Block {
  size_t size;
  bool huge_pages;
};
struct AllocationTable {
  ForkSafeMutex mutex{ForkStage::kAllocations};
  std::map<void*, Block> device;
  std::map<void*, Block> host;
};

AllocationTable& allocations() {
  static AllocationTable table;
  return table;
}

aclError fail(aclError code, const std::string& message) {
  report_error(message);
  return code;
}

bool valid_policy(const aclrtMemMallocPolicy& policy) {
  const unsigned value = static_cast<uint32_t>(raw_enum(policy));
  const unsigned flags =
      ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH | ACL_MEM_ACCESS_USER_SPACE_READONLY;
  return (value & 0xFFu) <= ACL_MEM_MALLOC_HUGE1G_ONLY_P2P && (value & ~0xFFu & ~flags) == 0;
}

bool valid_kind(const aclrtMemcpyKind& kind) {
  const int value = raw_enum(kind);
  return value >= ACL_MEMCPY_HOST_TO_HOST && value <= ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
}

// Whether a policy asks for huge pages first or only (every policy but the NORMAL_ONLY ones).
bool huge_pages(const aclrtMemMallocPolicy& policy) {
  const unsigned kind = static_cast<uint32_t>(raw_enum(policy)) & 0xFFu;
  return kind != ACL_MEM_MALLOC_NORMAL_ONLY && kind != ACL_MEM_MALLOC_NORMAL_ONLY_P2P;
}

aclError allocate(void** ptr, size_t size, bool device, bool huge, const char* api) {
  if (ptr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, format("%s: output pointer is nullptr", api));
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, format("%s: size is 0 (must be > 0)", api));
  if (size > kMaxAllocation) {
    return fail(ACL_ERROR_BAD_ALLOC,
                format("%s: size %zu exceeds the largest possible allocation, %zu bytes (PTRDIFF_MAX)", api, size,
                       kMaxAllocation));
  }
  void* memory = device_backend().allocate(size, kAlignment, huge);
  if (memory == nullptr) return fail(ACL_ERROR_BAD_ALLOC, format("%s: out of memory allocating %zu bytes", api, size));
  AllocationTable& table = allocations();
  std::lock_guard<ForkSafeMutex> lock(table.mutex);
  (device ? table.device : table.host)[memory] = Block{size, huge};
  *ptr = memory;
  return ACL_SUCCESS;
}

aclError release(void* ptr, bool device, const char* api) {
  if (ptr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, format("%s: pointer is nullptr", api));
  AllocationTable& table = allocations();
  Block block{};
  {
    std::lock_guard<ForkSafeMutex> lock(table.mutex);
    auto& live = device ? table.device : table.host;
    auto found = live.find(ptr);
    if (found == live.end()) {
      return fail(ACL_ERROR_INVALID_PARAM, format("%s: %p was not returned by %s or was already freed", api, ptr,
                                                  device ? "aclrtMalloc" : "aclrtMallocHost"));
    }
    block = found->second;
    live.erase(found);
  }
  device_backend().release(ptr, block.size, block.huge_pages);
  return ACL_SUCCESS;
}

// Whether [ptr, ptr + count) runs past the end of the address space (no such range is memory).
bool wraps(const void* ptr, size_t count) {
  uintptr_t end;
  return __builtin_add_overflow(reinterpret_cast<uintptr_t>(ptr), count, &end);
}

aclError check_copy(void* dst, size_t destMax, const void* src, size_t count, const aclrtMemcpyKind& kind,
                    const char* api) {
  if (dst == nullptr) return fail(ACL_ERROR_INVALID_PARAM, format("%s: dst is nullptr", api));
  if (src == nullptr) return fail(ACL_ERROR_INVALID_PARAM, format("%s: src is nullptr", api));
  if (!valid_kind(kind)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                format("%s: kind %d is not an aclrtMemcpyKind value (0..7)", api, raw_enum(kind)));
  }
  if (count > destMax) {
    return fail(ACL_ERROR_INVALID_PARAM, format("%s: count %zu exceeds destMax %zu", api, count, destMax));
  }
  if (wraps(dst, count)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                format("%s: dst %p + count %zu wraps past the end of the address space", api, dst, count));
  }
  if (wraps(src, count)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                format("%s: src %p + count %zu wraps past the end of the address space", api, src, count));
  }
  return ACL_SUCCESS;
}

aclError check_fill(void* devPtr, size_t maxCount, size_t count, const char* api) {
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, format("%s: devPtr is nullptr", api));
  if (count > maxCount) {
    return fail(ACL_ERROR_INVALID_PARAM, format("%s: count %zu exceeds maxCount %zu", api, count, maxCount));
  }
  if (wraps(devPtr, count)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                format("%s: devPtr %p + count %zu wraps past the end of the address space", api, devPtr, count));
  }
  return ACL_SUCCESS;
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return guard<aclError>("aclrtMalloc", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (!valid_policy(policy)) {
      return fail(ACL_ERROR_INVALID_PARAM, format("aclrtMalloc: policy %#x is not an aclrtMemMallocPolicy value",
                                                  static_cast<uint32_t>(raw_enum(policy))));
    }
    return allocate(devPtr, size, true, huge_pages(policy), "aclrtMalloc");
  });
}

aclError aclrtFree(void* devPtr) {
  return guard<aclError>("aclrtFree", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR,
                         [&]() -> aclError { return release(devPtr, true, "aclrtFree"); });
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  return guard<aclError>("aclrtMallocHost", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR,
                         [&]() -> aclError { return allocate(hostPtr, size, false, false, "aclrtMallocHost"); });
}

aclError aclrtFreeHost(void* hostPtr) {
  return guard<aclError>("aclrtFreeHost", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR,
                         [&]() -> aclError { return release(hostPtr, false, "aclrtFreeHost"); });
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  return guard<aclError>("aclrtMemcpy", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    const aclError status = check_copy(dst, destMax, src, count, kind, "aclrtMemcpy");
    if (status != ACL_SUCCESS) return status;
    device_backend().copy(dst, src, count, kind);
    return ACL_SUCCESS;
  });
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  return guard<aclError>("aclrtMemcpyAsync", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    const aclError status = check_copy(dst, destMax, src, count, kind, "aclrtMemcpyAsync");
    if (status != ACL_SUCCESS) return status;
    return enqueue_on_stream(
        stream,
        [dst, src, count, kind] {
          device_backend().copy(dst, src, count, kind);
          return ACL_SUCCESS;
        },
        "aclrtMemcpyAsync");
  });
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  return guard<aclError>("aclrtMemset", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    const aclError status = check_fill(devPtr, maxCount, count, "aclrtMemset");
    if (status != ACL_SUCCESS) return status;
    device_backend().fill(devPtr, static_cast<uint8_t>(value), count);
    return ACL_SUCCESS;
  });
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  return guard<aclError>("aclrtMemsetAsync", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    const aclError status = check_fill(devPtr, maxCount, count, "aclrtMemsetAsync");
    if (status != ACL_SUCCESS) return status;
    return enqueue_on_stream(
        stream,
        [devPtr, value, count] {
          device_backend().fill(devPtr, static_cast<uint8_t>(value), count);
          return ACL_SUCCESS;
        },
        "aclrtMemsetAsync");
  });
}

}  // extern "C"
