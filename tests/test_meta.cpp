// aclnn meta objects: creation, accessors and destruction behave as CANN's do.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"

namespace {

std::vector<int64_t> take(int64_t* values, uint64_t count) {
  std::vector<int64_t> copy(values, values + count);
  delete[] values;
  return copy;
}

TEST(Meta, TensorWithExplicitStridesOffsetAndStorage) {
  const int64_t view[] = {2, 3, 4};
  const int64_t strides[] = {1, 8, 2};
  const int64_t storage[] = {64};
  float data[64] = {};
  aclTensor* tensor = aclCreateTensor(view, 3, ACL_FLOAT16, strides, 5, ACL_FORMAT_NCL, storage, 1, data);
  ASSERT_NE(tensor, nullptr);
  int64_t* values = nullptr;
  uint64_t count = 0;
  ASSERT_EQ(aclGetViewShape(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_EQ(take(values, count), (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(aclGetViewStrides(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_EQ(take(values, count), (std::vector<int64_t>{1, 8, 2}));
  ASSERT_EQ(aclGetStorageShape(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_EQ(take(values, count), (std::vector<int64_t>{64}));
  int64_t offset = 0;
  ASSERT_EQ(aclGetViewOffset(tensor, &offset), ACLNN_SUCCESS);
  EXPECT_EQ(offset, 5);
  aclFormat format = ACL_FORMAT_UNDEFINED;
  ASSERT_EQ(aclGetFormat(tensor, &format), ACLNN_SUCCESS);
  EXPECT_EQ(format, ACL_FORMAT_NCL);
  aclDataType dtype = ACL_DT_UNDEFINED;
  ASSERT_EQ(aclGetDataType(tensor, &dtype), ACLNN_SUCCESS);
  EXPECT_EQ(dtype, ACL_FLOAT16);
  void* address = nullptr;
  ASSERT_EQ(aclGetRawTensorAddr(tensor, &address), ACLNN_SUCCESS);
  EXPECT_EQ(address, data);
  ASSERT_EQ(aclSetRawTensorAddr(tensor, data + 1), ACLNN_SUCCESS);
  ASSERT_EQ(aclGetRawTensorAddr(tensor, &address), ACLNN_SUCCESS);
  EXPECT_EQ(address, data + 1);
  EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_SUCCESS);
}

TEST(Meta, NullStridesMeanContiguousAndNullDataIsAllowed) {
  const int64_t view[] = {2, 3, 4, 5};
  aclTensor* tensor = aclCreateTensor(view, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, view, 4, nullptr);
  ASSERT_NE(tensor, nullptr);
  int64_t* values = nullptr;
  uint64_t count = 0;
  ASSERT_EQ(aclGetViewStrides(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_EQ(take(values, count), (std::vector<int64_t>{60, 20, 5, 1}));
  void* address = reinterpret_cast<void*>(1);
  ASSERT_EQ(aclGetRawTensorAddr(tensor, &address), ACLNN_SUCCESS);
  EXPECT_EQ(address, nullptr);
  aclDestroyTensor(tensor);
}

TEST(Meta, CreateTensorRejectsNullDimsWithCount) {
  const int64_t view[] = {2};
  EXPECT_EQ(aclCreateTensor(nullptr, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, view, 1, nullptr), nullptr);
  EXPECT_EQ(aclCreateTensor(view, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 1, nullptr), nullptr);
  // A scalar tensor (0 dims) and out-of-range enum values are stored, not rejected.
  aclTensor* scalar = aclCreateTensor(nullptr, 0, static_cast<aclDataType>(50), nullptr, 0, static_cast<aclFormat>(-7),
                                      nullptr, 0, nullptr);
  ASSERT_NE(scalar, nullptr);
  aclDataType dtype = ACL_FLOAT;
  ASSERT_EQ(aclGetDataType(scalar, &dtype), ACLNN_SUCCESS);
  EXPECT_EQ(static_cast<int>(dtype), 50);
  aclDestroyTensor(scalar);
}

TEST(Meta, InitTensorReplacesTheDescription) {
  const int64_t view[] = {4};
  aclTensor* tensor = aclCreateTensor(view, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, view, 1, nullptr);
  const int64_t new_view[] = {2, 2};
  ASSERT_EQ(aclInitTensor(tensor, new_view, 2, ACL_BF16, nullptr, 1, ACL_FORMAT_ND, view, 1, nullptr), ACLNN_SUCCESS);
  int64_t* values = nullptr;
  uint64_t count = 0;
  ASSERT_EQ(aclGetViewShape(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_EQ(take(values, count), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(aclInitTensor(nullptr, new_view, 2, ACL_BF16, nullptr, 0, ACL_FORMAT_ND, view, 1, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  aclDestroyTensor(tensor);
}

TEST(Meta, ArraysCopyTheirValues) {
  int64_t ints[] = {1, 2, 3};
  aclIntArray* int_array = aclCreateIntArray(ints, 3);
  ints[0] = 99;
  uint64_t size = 0;
  ASSERT_EQ(aclGetIntArraySize(int_array, &size), ACLNN_SUCCESS);
  EXPECT_EQ(size, 3u);
  const float floats[] = {0.5f, 1.5f};
  aclFloatArray* float_array = aclCreateFloatArray(floats, 2);
  ASSERT_EQ(aclGetFloatArraySize(float_array, &size), ACLNN_SUCCESS);
  EXPECT_EQ(size, 2u);
  const bool bools[] = {true, false, true, true};
  aclBoolArray* bool_array = aclCreateBoolArray(bools, 4);
  ASSERT_EQ(aclGetBoolArraySize(bool_array, &size), ACLNN_SUCCESS);
  EXPECT_EQ(size, 4u);
  aclIntArray* empty = aclCreateIntArray(nullptr, 0);
  ASSERT_NE(empty, nullptr);
  ASSERT_EQ(aclGetIntArraySize(empty, &size), ACLNN_SUCCESS);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(aclCreateIntArray(nullptr, 2), nullptr);
  EXPECT_EQ(aclDestroyIntArray(int_array), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyFloatArray(float_array), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyBoolArray(bool_array), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyIntArray(empty), ACLNN_SUCCESS);
}

TEST(Meta, ScalarsAndLists) {
  float value = 2.5f;
  aclScalar* scalar = aclCreateScalar(&value, ACL_FLOAT);
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(aclCreateScalar(nullptr, ACL_FLOAT), nullptr);
  const aclScalar* scalars[] = {scalar, scalar};
  aclScalarList* scalar_list = aclCreateScalarList(scalars, 2);
  uint64_t size = 0;
  ASSERT_EQ(aclGetScalarListSize(scalar_list, &size), ACLNN_SUCCESS);
  EXPECT_EQ(size, 2u);
  const int64_t view[] = {3};
  aclTensor* tensor = aclCreateTensor(view, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, view, 1, nullptr);
  const aclTensor* tensors[] = {tensor};
  aclTensorList* tensor_list = aclCreateTensorList(tensors, 1);
  ASSERT_EQ(aclGetTensorListSize(tensor_list, &size), ACLNN_SUCCESS);
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(aclDestroyTensorList(tensor_list), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyScalarList(scalar_list), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyScalar(scalar), ACLNN_SUCCESS);
}

TEST(Meta, DestroyNullIsFineAndAccessorsRejectNull) {
  EXPECT_EQ(aclDestroyTensor(nullptr), 0);
  EXPECT_EQ(aclDestroyScalar(nullptr), 0);
  EXPECT_EQ(aclDestroyIntArray(nullptr), 0);
  EXPECT_EQ(aclDestroyFloatArray(nullptr), 0);
  EXPECT_EQ(aclDestroyBoolArray(nullptr), 0);
  EXPECT_EQ(aclDestroyTensorList(nullptr), 0);
  EXPECT_EQ(aclDestroyScalarList(nullptr), 0);
  int64_t* values = nullptr;
  uint64_t count = 0;
  EXPECT_EQ(aclGetViewShape(nullptr, &values, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetStorageShape(nullptr, &values, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetViewStrides(nullptr, &values, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetViewOffset(nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetFormat(nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetDataType(nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetIntArraySize(nullptr, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetBoolArraySize(nullptr, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetFloatArraySize(nullptr, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetTensorListSize(nullptr, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetScalarListSize(nullptr, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_INNER_NULLPTR);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_INNER_NULLPTR);
  EXPECT_EQ(aclDestroyAclOpExecutor(reinterpret_cast<aclOpExecutor*>(&count)), ACLNN_ERR_INNER);
}

TEST(Meta, AclnnInitAndFinalizeAreAccepted) {
  EXPECT_EQ(aclnnInit(nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnFinalize(), ACLNN_SUCCESS);
}

}  // namespace

// Sanitizer allocators abort on so large a request instead of throwing std::bad_alloc.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_ALLOCATOR 1
#endif
#endif

namespace {

// Hostile sizes: a clear failure, never a crash or undefined behaviour.
TEST(MetaHardening, ImpossibleArraySizesReturnNull) {
#if defined(SANITIZER_ALLOCATOR)
  GTEST_SKIP() << "sanitizer allocators abort on allocations this large instead of throwing";
#else
  const int64_t values[2] = {1, 2};
  // 2^61 bytes, past any address space (a smaller size may be granted where memory is overcommitted,
  // and then the two values read far past their end): std::bad_alloc inside
  EXPECT_EQ(aclCreateIntArray(values, uint64_t{1} << 58), nullptr);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclCreateIntArray: out of host memory"), std::string::npos);
  EXPECT_EQ(aclCreateIntArray(values, UINT64_MAX), nullptr);  // beyond any vector
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("larger than any array"), std::string::npos);
  const bool flags[1] = {true};
  EXPECT_EQ(aclCreateBoolArray(flags, UINT64_MAX), nullptr);
#endif
}

TEST(MetaHardening, HugeDimsGiveSaturatedStridesNotOverflow) {
  const int64_t dims[4] = {INT64_MAX, INT64_MAX, INT64_MAX, 3};
  aclTensor* tensor = aclCreateTensor(dims, 4, ACL_FLOAT, nullptr, 0, ACL_FORMAT_NCHW, dims, 4, nullptr);
  ASSERT_NE(tensor, nullptr);
  int64_t* strides = nullptr;
  uint64_t count = 0;
  ASSERT_EQ(aclGetViewStrides(tensor, &strides, &count), 0);
  ASSERT_EQ(count, 4u);
  EXPECT_EQ(strides[3], 1);
  EXPECT_EQ(strides[2], 3);
  EXPECT_EQ(strides[1], INT64_MAX);
  EXPECT_EQ(strides[0], INT64_MAX);
  delete[] strides;
  aclDestroyTensor(tensor);
}

TEST(MetaHardening, EnumValuesOutsideTheEnumAreKeptAsGiven) {
  const int32_t raw_dtype = 123456, raw_format = -99;
  aclDataType dtype;
  aclFormat format;
  std::memcpy(&dtype, &raw_dtype, sizeof dtype);  // what a C caller can pass
  std::memcpy(&format, &raw_format, sizeof format);
  const int64_t dims[1] = {2};
  aclTensor* tensor = aclCreateTensor(dims, 1, dtype, nullptr, 0, format, dims, 1, nullptr);
  ASSERT_NE(tensor, nullptr);
  aclDataType dtype_out;
  aclFormat format_out;
  ASSERT_EQ(aclGetDataType(tensor, &dtype_out), 0);
  ASSERT_EQ(aclGetFormat(tensor, &format_out), 0);
  int32_t raw_out = 0;
  std::memcpy(&raw_out, &dtype_out, sizeof raw_out);
  EXPECT_EQ(raw_out, raw_dtype);
  std::memcpy(&raw_out, &format_out, sizeof raw_out);
  EXPECT_EQ(raw_out, raw_format);
  aclDestroyTensor(tensor);
}

}  // namespace
