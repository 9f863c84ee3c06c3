// aclnn meta API: create, inspect and destroy tensors, scalars and arrays.
#include <cstring>
#include <new>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "meta/meta_objects.h"

namespace {

using aclnn_cpu::format;
using aclnn_cpu::report_error;

aclnnStatus null_argument(const char* api, const char* name) {
  report_error(format("%s: %s is nullptr", api, name));
  return ACLNN_ERR_PARAM_NULLPTR;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * (shape[i] > 0 ? shape[i] : 1);
  return strides;
}

// Fills `tensor` from aclCreateTensor's arguments; false if a dims pointer is null with a count.
bool fill_tensor(aclTensor* tensor, const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                 const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims,
                 uint64_t storageDimsNum, void* data) {
  if ((viewDims == nullptr && viewDimsNum > 0) || (storageDims == nullptr && storageDimsNum > 0)) return false;
  tensor->view_shape.assign(viewDims, viewDims + viewDimsNum);
  tensor->strides =
      stride != nullptr ? std::vector<int64_t>(stride, stride + viewDimsNum) : contiguous_strides(tensor->view_shape);
  tensor->offset = offset;
  tensor->dtype = static_cast<int32_t>(dataType);
  tensor->format = static_cast<int32_t>(format);
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
  auto* tensor = new (std::nothrow) aclTensor;
  if (tensor == nullptr) return nullptr;
  if (!fill_tensor(tensor, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                   tensorData)) {
    report_error("aclCreateTensor: viewDims or storageDims is nullptr while its count is non-zero");
    delete tensor;
    return nullptr;
  }
  return tensor;
}

aclnnStatus aclInitTensor(aclTensor* tensor, const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims,
                          uint64_t storageDimsNum, void* tensorDataAddr) {
  if (tensor == nullptr) return null_argument("aclInitTensor", "tensor");
  aclTensor updated;
  if (!fill_tensor(&updated, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                   tensorDataAddr)) {
    return null_argument("aclInitTensor", "viewDims or storageDims (with a non-zero count)");
  }
  *tensor = std::move(updated);
  return ACLNN_SUCCESS;
}

aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  const size_t bytes = aclnn_cpu::dtype_size(static_cast<int32_t>(dataType));
  if (value == nullptr || bytes == 0 || bytes > sizeof(aclScalar::value)) {
    report_error(format("aclCreateScalar: value is nullptr or dataType %d has no fixed element size",
                        static_cast<int>(dataType)));
    return nullptr;
  }
  auto* scalar = new (std::nothrow) aclScalar;
  if (scalar == nullptr) return nullptr;
  scalar->dtype = static_cast<int32_t>(dataType);
  std::memcpy(scalar->value, value, bytes);
  return scalar;
}

aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  if (value == nullptr && size > 0) return nullptr;
  auto* array = new (std::nothrow) aclIntArray;
  if (array != nullptr && size > 0) array->values.assign(value, value + size);
  return array;
}

aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
  if (value == nullptr && size > 0) return nullptr;
  auto* array = new (std::nothrow) aclFloatArray;
  if (array != nullptr && size > 0) array->values.assign(value, value + size);
  return array;
}

aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  if (value == nullptr && size > 0) return nullptr;
  auto* array = new (std::nothrow) aclBoolArray;
  if (array != nullptr && size > 0) array->values.assign(value, value + size);
  return array;
}

aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  if (value == nullptr && size > 0) return nullptr;
  auto* list = new (std::nothrow) aclTensorList;
  if (list != nullptr && size > 0) list->tensors.assign(value, value + size);
  return list;
}

aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size) {
  if (value == nullptr && size > 0) return nullptr;
  auto* list = new (std::nothrow) aclScalarList;
  if (list != nullptr && size > 0) list->scalars.assign(value, value + size);
  return list;
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) { return destroy(tensor); }
aclnnStatus aclDestroyScalar(const aclScalar* scalar) { return destroy(scalar); }
aclnnStatus aclDestroyIntArray(const aclIntArray* array) { return destroy(array); }
aclnnStatus aclDestroyFloatArray(const aclFloatArray* array) { return destroy(array); }
aclnnStatus aclDestroyBoolArray(const aclBoolArray* array) { return destroy(array); }
aclnnStatus aclDestroyTensorList(const aclTensorList* array) { return destroy(array); }
aclnnStatus aclDestroyScalarList(const aclScalarList* array) { return destroy(array); }

aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
  if (tensor == nullptr || viewDims == nullptr || viewDimsNum == nullptr) {
    return null_argument("aclGetViewShape", "tensor, viewDims or viewDimsNum");
  }
  return export_dims(tensor->view_shape, viewDims, viewDimsNum);
}

aclnnStatus aclGetStorageShape(const aclTensor* tensor, int64_t** storageDims, uint64_t* storageDimsNum) {
  if (tensor == nullptr || storageDims == nullptr || storageDimsNum == nullptr) {
    return null_argument("aclGetStorageShape", "tensor, storageDims or storageDimsNum");
  }
  return export_dims(tensor->storage_shape, storageDims, storageDimsNum);
}

aclnnStatus aclGetViewStrides(const aclTensor* tensor, int64_t** stridesValue, uint64_t* stridesNum) {
  if (tensor == nullptr || stridesValue == nullptr || stridesNum == nullptr) {
    return null_argument("aclGetViewStrides", "tensor, stridesValue or stridesNum");
  }
  return export_dims(tensor->strides, stridesValue, stridesNum);
}

aclnnStatus aclGetViewOffset(const aclTensor* tensor, int64_t* offset) {
  if (tensor == nullptr || offset == nullptr) return null_argument("aclGetViewOffset", "tensor or offset");
  *offset = tensor->offset;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format) {
  if (tensor == nullptr || format == nullptr) return null_argument("aclGetFormat", "tensor or format");
  *format = static_cast<aclFormat>(tensor->format);
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
  if (tensor == nullptr || dataType == nullptr) return null_argument("aclGetDataType", "tensor or dataType");
  *dataType = static_cast<aclDataType>(tensor->dtype);
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetIntArraySize(const aclIntArray* array, uint64_t* size) {
  if (array == nullptr || size == nullptr) return null_argument("aclGetIntArraySize", "array or size");
  *size = array->values.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetFloatArraySize(const aclFloatArray* array, uint64_t* size) {
  if (array == nullptr || size == nullptr) return null_argument("aclGetFloatArraySize", "array or size");
  *size = array->values.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetBoolArraySize(const aclBoolArray* array, uint64_t* size) {
  if (array == nullptr || size == nullptr) return null_argument("aclGetBoolArraySize", "array or size");
  *size = array->values.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetTensorListSize(const aclTensorList* tensorList, uint64_t* size) {
  if (tensorList == nullptr || size == nullptr) return null_argument("aclGetTensorListSize", "tensorList or size");
  *size = tensorList->tensors.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetScalarListSize(const aclScalarList* scalarList, uint64_t* size) {
  if (scalarList == nullptr || size == nullptr) return null_argument("aclGetScalarListSize", "scalarList or size");
  *size = scalarList->scalars.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetRawTensorAddr(aclTensor* tensor, void* addr) {
  if (tensor == nullptr) return null_argument("aclSetRawTensorAddr", "tensor");
  tensor->data = addr;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor* tensor, void** addr) {
  if (tensor == nullptr || addr == nullptr) return null_argument("aclGetRawTensorAddr", "tensor or addr");
  *addr = tensor->data;
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnInit(const char*) { return ACLNN_SUCCESS; }
aclnnStatus aclnnFinalize(void) { return ACLNN_SUCCESS; }

}  // extern "C"
