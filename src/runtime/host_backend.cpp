// Host CPU device backend: device memory is aligned host memory, copies are memmove.
#include <cstdlib>
#include <cstring>

#include "runtime/device_backend.h"

namespace aclnn_cpu {
namespace {

class HostBackend final : public DeviceBackend {
 public:
  const char* name() const override { return "host-cpu"; }
  uint32_t device_count() const override { return 1; }
  void* allocate(size_t bytes, size_t alignment) override {
    const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded);
  }
  void release(void* ptr) override { std::free(ptr); }
  void copy(void* dst, const void* src, size_t bytes, aclrtMemcpyKind) override { std::memmove(dst, src, bytes); }
  void fill(void* dst, uint8_t value, size_t bytes) override { std::memset(dst, value, bytes); }
  const ConvKernelSet& conv_kernels() const override { return selected_kernels(); }
};

}  // namespace

DeviceBackend& device_backend() {
  static HostBackend backend;
  return backend;
}

}  // namespace aclnn_cpu
