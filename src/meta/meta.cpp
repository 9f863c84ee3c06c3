// aclnn meta API: create, inspect and destroy tensors, scalars and arrays.
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/guard.h"
#include "common/log.h"
#include "meta/meta_objects.h"

namespace {

using aclnn_cpu::format;
using aclnn_cpu::guard;
using aclnn_cpu::report_error;

aclnnStatus null_argument(const char* api, const char* name) {
  report_error(format("%s: %s is nullptr", api, name));
  return ACLNN_ERR_PARAM_NULLPTR;
}

// Row-major strides. Dims whose product overflows int64 saturate the strides at INT64_MAX: such a
// tensor is rejected by every operator (its element count overflows too, or it is empty).
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    if (__builtin_mul_overflow(strides[i], shape[i] > 0 ? shape[i] : 1, &strides[i - 1])) strides[i - 1] = INT64_MAX;
  }
  return strides;
}

// A new list object holding copies of `size` values; nullptr (and a message) for null values
// with a non-zero size. An impossible size throws, which guard() turns into nullptr.
template <typename Object, typename Value, typename Items>
Object* create_list(const char* api, const Value* values, uint64_t size, Items Object::*items) {
  if (values == nullptr && size > 0) {
    report_error(format("%s: value is nullptr while size is %llu", api, static_cast<unsigned long long>(size)));
    return nullptr;
  }
  auto object = std::make_unique<Object>();
  if (size > (object.get()->*items).max_size()) {
    report_error(format("%s: size %llu is larger than any array can be", api, static_cast<unsigned long long>(size)));
    return nullptr;
  }
  (object.get()->*items).assign(values, values + size);
  return object.release();
}

// Fills `tensor` from aclCreateTensor's arguments; false if a dims pointer is null with a count.
// dtype and format are the integers the caller passed (raw_enum).
bool fill_tensor(aclTensor* tensor, const int64_t* viewDims, uint64_t viewDimsNum, int32_t dtype, const int64_t* stride,
                 int64_t offset, int32_t format, const int64_t* storageDims, uint64_t storageDimsNum, void* data) {
  if ((viewDims == nullptr && viewDimsNum > 0) || (storageDims == nullptr && storageDimsNum > 0)) return false;
  tensor->view_shape.assign(viewDims, viewDims + viewDimsNum);
  tensor->strides =
      stride != nullptr ? std::vector<int64_t>(stride, stride + viewDimsNum) : contiguous_strides(tensor->view_shape);
  tensor->offset = offset;
  tensor->dtype = dtype;
  tensor->format = format;
  tensor->storage_shape.assign(storageDims, storageDims + storageDimsNum);
  tensor->data = data;
  return true;
}

// Copies `values` into a new[]-allocated array for the aclGet*Shape/Strides accessors.
aclnnStatus export_dims(const std::vector<int64_t>& values, int64_t** out, uint64_t* count) {
  int64_t* copy = new (std::nothrow) int64_t[values.empty() ? 1 : values.size()];
  if (copy == nullptr) return ACLNN_ERR_INNER_NULLPTR;
  if (!values.empty()) std::memcpy(copy, values.data(), values.size() * sizeof(int64_t));
  *out = copy;
  *count = values.size();
  return ACLNN_SUCCESS;
}

template <typename Object>
aclnnStatus destroy(const Object* object) {
  delete object;
  return ACLNN_SUCCESS;
}

}  // namespace

extern "C" {

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t* stride,
                           int64_t offset, aclFormat format, const int64_t* storageDims, uint64_t storageDimsNum,
                           void* tensorData) {
  return guard<aclTensor*>("aclCreateTensor", nullptr, nullptr, [&]() -> aclTensor* {
    auto tensor = std::make_unique<aclTensor>();
    if (!fill_tensor(tensor.get(), viewDims, viewDimsNum, aclnn_cpu::raw_enum(dataType), stride, offset,
                     aclnn_cpu::raw_enum(format), storageDims, storageDimsNum, tensorData)) {
      report_error("aclCreateTensor: viewDims or storageDims is nullptr while its count is non-zero");
      return nullptr;
    }
    return tensor.release();
  });
}

aclnnStatus aclInitTensor(aclTensor* tensor, const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims,
                          uint64_t storageDimsNum, void* tensorDataAddr) {
  return guard<aclnnStatus>("aclInitTensor", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr) return null_argument("aclInitTensor", "tensor");
    aclTensor updated;
    if (!fill_tensor(&updated, viewDims, viewDimsNum, aclnn_cpu::raw_enum(dataType), stride, offset,
                     aclnn_cpu::raw_enum(format), storageDims, storageDimsNum, tensorDataAddr)) {
      return null_argument("aclInitTensor", "viewDims or storageDims (with a non-zero count)");
    }
    *tensor = std::move(updated);
    return ACLNN_SUCCESS;
  });
}

aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  return guard<aclScalar*>("aclCreateScalar", nullptr, nullptr, [&]() -> aclScalar* {
    const size_t bytes = aclnn_cpu::dtype_size(aclnn_cpu::raw_enum(dataType));
    if (value == nullptr || bytes == 0 || bytes > sizeof(aclScalar::value)) {
      report_error(format("aclCreateScalar: value is nullptr or dataType %d has no fixed element size",
                          aclnn_cpu::raw_enum(dataType)));
      return nullptr;
    }
    auto* scalar = new (std::nothrow) aclScalar;
    if (scalar == nullptr) return nullptr;
    scalar->dtype = aclnn_cpu::raw_enum(dataType);
    std::memcpy(scalar->value, value, bytes);
    return scalar;
  });
}

aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  return guard<aclIntArray*>("aclCreateIntArray", nullptr, nullptr,
                             [&] { return create_list("aclCreateIntArray", value, size, &aclIntArray::values); });
}

aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
  return guard<aclFloatArray*>("aclCreateFloatArray", nullptr, nullptr,
                               [&] { return create_list("aclCreateFloatArray", value, size, &aclFloatArray::values); });
}

aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  return guard<aclBoolArray*>("aclCreateBoolArray", nullptr, nullptr,
                              [&] { return create_list("aclCreateBoolArray", value, size, &aclBoolArray::values); });
}

aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  return guard<aclTensorList*>("aclCreateTensorList", nullptr, nullptr, [&] {
    return create_list("aclCreateTensorList", value, size, &aclTensorList::tensors);
  });
}

aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size) {
  return guard<aclScalarList*>("aclCreateScalarList", nullptr, nullptr, [&] {
    return create_list("aclCreateScalarList", value, size, &aclScalarList::scalars);
  });
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  return destroy(tensor);  // deleting cannot throw
}
aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  return destroy(scalar);  // deleting cannot throw
}
aclnnStatus aclDestroyIntArray(const aclIntArray* array) {
  return destroy(array);  // deleting cannot throw
}
aclnnStatus aclDestroyFloatArray(const aclFloatArray* array) {
  return destroy(array);  // deleting cannot throw
}
aclnnStatus aclDestroyBoolArray(const aclBoolArray* array) {
  return destroy(array);  // deleting cannot throw
}
aclnnStatus aclDestroyTensorList(const aclTensorList* array) {
  return destroy(array);  // deleting cannot throw
}
aclnnStatus aclDestroyScalarList(const aclScalarList* array) {
  return destroy(array);  // deleting cannot throw
}

aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
  return guard<aclnnStatus>("aclGetViewShape", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || viewDims == nullptr || viewDimsNum == nullptr) {
      return null_argument("aclGetViewShape", "tensor, viewDims or viewDimsNum");
    }
    return export_dims(tensor->view_shape, viewDims, viewDimsNum);
  });
}

aclnnStatus aclGetStorageShape(const aclTensor* tensor, int64_t** storageDims, uint64_t* storageDimsNum) {
  return guard<aclnnStatus>("aclGetStorageShape", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || storageDims == nullptr || storageDimsNum == nullptr) {
      return null_argument("aclGetStorageShape", "tensor, storageDims or storageDimsNum");
    }
    return export_dims(tensor->storage_shape, storageDims, storageDimsNum);
  });
}

aclnnStatus aclGetViewStrides(const aclTensor* tensor, int64_t** stridesValue, uint64_t* stridesNum) {
  return guard<aclnnStatus>("aclGetViewStrides", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || stridesValue == nullptr || stridesNum == nullptr) {
      return null_argument("aclGetViewStrides", "tensor, stridesValue or stridesNum");
    }
    return export_dims(tensor->strides, stridesValue, stridesNum);
  });
}

aclnnStatus aclGetViewOffset(const aclTensor* tensor, int64_t* offset) {
  return guard<aclnnStatus>("aclGetViewOffset", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || offset == nullptr) return null_argument("aclGetViewOffset", "tensor or offset");
    *offset = tensor->offset;
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format) {
  return guard<aclnnStatus>("aclGetFormat", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || format == nullptr) return null_argument("aclGetFormat", "tensor or format");
    std::memcpy(format, &tensor->format, sizeof *format);  // as given, even outside the enum
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
  return guard<aclnnStatus>("aclGetDataType", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || dataType == nullptr) return null_argument("aclGetDataType", "tensor or dataType");
    std::memcpy(dataType, &tensor->dtype, sizeof *dataType);  // as given, even outside the enum
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetIntArraySize(const aclIntArray* array, uint64_t* size) {
  return guard<aclnnStatus>("aclGetIntArraySize", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (array == nullptr || size == nullptr) return null_argument("aclGetIntArraySize", "array or size");
    *size = array->values.size();
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetFloatArraySize(const aclFloatArray* array, uint64_t* size) {
  return guard<aclnnStatus>("aclGetFloatArraySize", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (array == nullptr || size == nullptr) return null_argument("aclGetFloatArraySize", "array or size");
    *size = array->values.size();
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetBoolArraySize(const aclBoolArray* array, uint64_t* size) {
  return guard<aclnnStatus>("aclGetBoolArraySize", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (array == nullptr || size == nullptr) return null_argument("aclGetBoolArraySize", "array or size");
    *size = array->values.size();
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetTensorListSize(const aclTensorList* tensorList, uint64_t* size) {
  return guard<aclnnStatus>("aclGetTensorListSize", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensorList == nullptr || size == nullptr) return null_argument("aclGetTensorListSize", "tensorList or size");
    *size = tensorList->tensors.size();
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetScalarListSize(const aclScalarList* scalarList, uint64_t* size) {
  return guard<aclnnStatus>("aclGetScalarListSize", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (scalarList == nullptr || size == nullptr) return null_argument("aclGetScalarListSize", "scalarList or size");
    *size = scalarList->scalars.size();
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclSetRawTensorAddr(aclTensor* tensor, void* addr) {
  return guard<aclnnStatus>("aclSetRawTensorAddr", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr) return null_argument("aclSetRawTensorAddr", "tensor");
    tensor->data = addr;
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclGetRawTensorAddr(const aclTensor* tensor, void** addr) {
  return guard<aclnnStatus>("aclGetRawTensorAddr", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
    if (tensor == nullptr || addr == nullptr) return null_argument("aclGetRawTensorAddr", "tensor or addr");
    *addr = tensor->data;
    return ACLNN_SUCCESS;
  });
}

aclnnStatus aclnnInit(const char*) {
  return guard<aclnnStatus>("aclnnInit", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER,
                            [&]() -> aclnnStatus { return ACLNN_SUCCESS; });
}
aclnnStatus aclnnFinalize(void) {
  return guard<aclnnStatus>("aclnnFinalize", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER,
                            [&]() -> aclnnStatus { return ACLNN_SUCCESS; });
}

}  // extern "C"
