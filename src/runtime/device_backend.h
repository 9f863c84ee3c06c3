// The device behind the ACL runtime. The API layer only talks to this interface; the host CPU
// implementation is the one we ship, and an accelerator backend would implement the same calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "acl/acl_rt.h"
#include "kernels/conv_problem.h"

namespace aclnn_cpu {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual const char* name() const = 0;
  virtual uint32_t device_count() const = 0;
  // Device memory: `alignment`-aligned, nullptr when out of memory.
  virtual void* allocate(size_t bytes, size_t alignment) = 0;
  virtual void release(void* ptr) = 0;
  // Byte copy / fill between any two addresses of the given kind; ranges are valid.
  virtual void copy(void* dst, const void* src, size_t bytes, aclrtMemcpyKind kind) = 0;
  virtual void fill(void* dst, uint8_t value, size_t bytes) = 0;
  // The convolution kernel set that operators plan and run with.
  virtual const ConvKernelSet& conv_kernels() const = 0;
};

// The process-wide backend (the host CPU).
DeviceBackend& device_backend();

}  // namespace aclnn_cpu
