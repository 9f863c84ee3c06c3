// Test helper: a tensor in library ("device") memory with its aclTensor, in any layout.
#pragma once

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"

namespace testing_support {

enum class Layout {
  kContiguous,
  kStrided,   // every dim's stride doubled-plus-one, and a storage offset of 3 elements
  kReversed,  // column-major: the first dim varies fastest
};

// What reading a view gives after `values` (row-major) were written element by element in view
// order, where `offsets` are the view's storage elements: where elements share storage, the last
// one written wins.
std::vector<double> last_writes(const std::vector<double>& values, const std::vector<int64_t>& offsets);

class DeviceTensor {
 public:
  DeviceTensor(std::vector<int64_t> shape, aclDataType dtype, aclFormat format, Layout layout = Layout::kContiguous);
  // Explicit non-negative strides, which may make the view overlap itself (offset 0).
  DeviceTensor(std::vector<int64_t> shape, aclDataType dtype, aclFormat format, std::vector<int64_t> strides);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  aclTensor* get() const { return tensor_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const;
  // Logical elements in row-major order of the view shape.
  void fill(const std::vector<double>& values);
  std::vector<double> read() const;
  // Every byte of the storage (to prove a tensor was left untouched).
  std::vector<uint8_t> bytes() const;
  // Sets every storage byte (NaN-like poison for outputs: 0xFF is a NaN in every float type).
  void poison(uint8_t byte = 0xFF);
  // The storage element of each logical element, in row-major order of the view shape.
  std::vector<int64_t> element_offsets() const;

 private:
  int64_t element_offset(int64_t logical) const;
  std::vector<int64_t> shape_, strides_;
  int64_t offset_ = 0;
  aclDataType dtype_;
  size_t storage_bytes_ = 0;
  void* storage_ = nullptr;
  aclTensor* tensor_ = nullptr;
};

double load_value(const void* base, aclDataType dtype, int64_t index);
void store_value(void* base, aclDataType dtype, int64_t index, double value);

// Deterministic test values: small multiples of 1/8 in [-9/8, 9/8], exact in FLOAT16 and BF16.
// The same formula is used by tests/data/make_golden.py.
std::vector<double> pattern(int64_t count, int seed);

}  // namespace testing_support
