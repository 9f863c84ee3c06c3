/* aclCreateTensor called the way a C program calls it: any int for dtype and format (C enums
 * hold any int; a C++ caller could not pass such a value without undefined behaviour). */
#include <stdint.h>

#include "aclnn/acl_meta.h"

aclTensor* fuzz_create_tensor(const int64_t* dims, uint64_t dims_num, int32_t dtype, const int64_t* strides,
                              int64_t offset, int32_t format, const int64_t* storage_dims, uint64_t storage_dims_num,
                              void* data) {
  return aclCreateTensor(dims, dims_num, (aclDataType)dtype, strides, offset, (aclFormat)format, storage_dims,
                         storage_dims_num, data);
}
