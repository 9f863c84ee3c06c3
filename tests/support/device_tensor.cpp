#include "support/device_tensor.h"

#include <Eigen/Core>
#include <cstring>
#include <stdexcept>

#include "acl/acl.h"

namespace testing_support {

// Element access written for the tests (independent of the library's conversions). Test values
// are exact in float, so converting through float rounds once; integer values are exact in double
// (INT64 and UINT64 ones below 2^53).
double load_value(const void* base, aclDataType dtype, int64_t i) {
  switch (dtype) {
    case ACL_FLOAT16: return static_cast<float>(static_cast<const Eigen::half*>(base)[i]);
    case ACL_BF16: return static_cast<float>(static_cast<const Eigen::bfloat16*>(base)[i]);
    case ACL_DOUBLE: return static_cast<const double*>(base)[i];
    case ACL_INT8: return static_cast<const int8_t*>(base)[i];
    case ACL_INT32: return static_cast<const int32_t*>(base)[i];
    case ACL_INT64: return static_cast<double>(static_cast<const int64_t*>(base)[i]);
    case ACL_UINT64: return static_cast<double>(static_cast<const uint64_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

void store_value(void* base, aclDataType dtype, int64_t i, double value) {
  switch (dtype) {
    case ACL_FLOAT16: static_cast<Eigen::half*>(base)[i] = Eigen::half(static_cast<float>(value)); break;
    case ACL_BF16: static_cast<Eigen::bfloat16*>(base)[i] = Eigen::bfloat16(static_cast<float>(value)); break;
    case ACL_DOUBLE: static_cast<double*>(base)[i] = value; break;
    case ACL_INT8: static_cast<int8_t*>(base)[i] = static_cast<int8_t>(value); break;
    case ACL_INT32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(value); break;
    case ACL_INT64: static_cast<int64_t*>(base)[i] = static_cast<int64_t>(value); break;
    case ACL_UINT64: static_cast<uint64_t*>(base)[i] = static_cast<uint64_t>(value); break;
    default: static_cast<float*>(base)[i] = static_cast<float>(value);
  }
}

size_t element_bytes(aclDataType dtype) {
  switch (dtype) {
    case ACL_INT8: return 1;
    case ACL_FLOAT16:
    case ACL_BF16: return 2;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64: return 8;
    default: return 4;
  }
}

DeviceTensor::DeviceTensor(std::vector<int64_t> shape, aclDataType dtype, aclFormat format, Layout layout)
    : shape_(std::move(shape)), dtype_(dtype) {
  const size_t n = shape_.size();
  strides_.assign(n, 1);
  int64_t extent = 1;  // elements of storage the view spans
  if (layout == Layout::kReversed) {
    for (size_t i = 0; i < n; ++i) {
      strides_[i] = extent;
      extent *= shape_[i] > 0 ? shape_[i] : 1;
    }
  } else {
    for (size_t i = n; i-- > 0;) {
      strides_[i] = layout == Layout::kStrided ? 2 * extent + (i + 1 == n ? 1 : 0) : extent;
      extent = strides_[i] * (shape_[i] > 0 ? shape_[i] : 1) + (layout == Layout::kStrided ? 1 : 0);
    }
  }
  offset_ = layout == Layout::kStrided ? 3 : 0;
  const int64_t storage_elements = extent + offset_ + 1;
  storage_bytes_ = static_cast<size_t>(storage_elements) * element_bytes(dtype);
  if (aclrtMalloc(&storage_, storage_bytes_, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) throw std::bad_alloc();
  poison();
  const int64_t storage_shape[] = {storage_elements};
  tensor_ = aclCreateTensor(shape_.data(), n, dtype, strides_.data(), offset_, format, storage_shape, 1, storage_);
}

DeviceTensor::DeviceTensor(std::vector<int64_t> shape, aclDataType dtype, aclFormat format,
                           std::vector<int64_t> strides)
    : shape_(std::move(shape)), strides_(std::move(strides)), dtype_(dtype) {
  int64_t highest = 0;
  for (size_t i = 0; i < shape_.size(); ++i) highest += (shape_[i] - 1) * strides_[i];
  const int64_t storage_elements = highest + 1;
  storage_bytes_ = static_cast<size_t>(storage_elements) * element_bytes(dtype);
  if (aclrtMalloc(&storage_, storage_bytes_, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) throw std::bad_alloc();
  poison();
  const int64_t storage_shape[] = {storage_elements};
  tensor_ =
      aclCreateTensor(shape_.data(), shape_.size(), dtype, strides_.data(), 0, format, storage_shape, 1, storage_);
}

std::vector<int64_t> DeviceTensor::element_offsets() const {
  std::vector<int64_t> offsets(static_cast<size_t>(numel()));
  for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = element_offset(static_cast<int64_t>(i));
  return offsets;
}

std::vector<double> last_writes(const std::vector<double>& values, const std::vector<int64_t>& offsets) {
  std::vector<double> seen(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    seen[i] = values[i];
    for (size_t j = i + 1; j < values.size(); ++j) {
      if (offsets[j] == offsets[i]) seen[i] = values[j];
    }
  }
  return seen;
}

DeviceTensor::~DeviceTensor() {
  aclDestroyTensor(tensor_);
  aclrtFree(storage_);
}

int64_t DeviceTensor::numel() const {
  int64_t count = 1;
  for (int64_t size : shape_) count *= size;
  return count;
}

int64_t DeviceTensor::element_offset(int64_t logical) const {
  int64_t element = offset_;
  for (size_t i = shape_.size(); i-- > 0;) {
    element += logical % shape_[i] * strides_[i];
    logical /= shape_[i];
  }
  return element;
}

void DeviceTensor::fill(const std::vector<double>& values) {
  if (static_cast<int64_t>(values.size()) != numel()) throw std::invalid_argument("fill: wrong element count");
  for (int64_t i = 0; i < numel(); ++i) {
    store_value(storage_, dtype_, element_offset(i), values[static_cast<size_t>(i)]);
  }
}

std::vector<double> DeviceTensor::read() const {
  std::vector<double> values(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) {
    values[static_cast<size_t>(i)] = load_value(storage_, dtype_, element_offset(i));
  }
  return values;
}

std::vector<uint8_t> DeviceTensor::bytes() const {
  const auto* begin = static_cast<const uint8_t*>(storage_);
  return std::vector<uint8_t>(begin, begin + storage_bytes_);
}

void DeviceTensor::poison(uint8_t byte) { std::memset(storage_, byte, storage_bytes_); }

std::vector<double> pattern(int64_t count, int seed) {
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    values[static_cast<size_t>(i)] = static_cast<double>((i * 37 + seed * 11) % 19 - 9) / 8.0;
  }
  return values;
}

}  // namespace testing_support
