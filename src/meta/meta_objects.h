// Definitions behind the opaque aclnn meta handles. Values are plain integers and vectors so
// that hostile input (out-of-range enum values, negative dims) can be stored and validated later.
#pragma once

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"

struct aclTensor {
  std::vector<int64_t> view_shape;
  std::vector<int64_t> strides;  // in elements, one per view dim
  int64_t offset = 0;            // in elements
  int32_t dtype = ACL_DT_UNDEFINED;
  int32_t format = ACL_FORMAT_UNDEFINED;
  std::vector<int64_t> storage_shape;
  void* data = nullptr;
};

struct aclScalar {
  int32_t dtype = ACL_DT_UNDEFINED;
  uint8_t value[16] = {};
};

struct aclIntArray {
  std::vector<int64_t> values;
};

struct aclFloatArray {
  std::vector<float> values;
};

struct aclBoolArray {
  std::vector<bool> values;
};

struct aclTensorList {
  std::vector<const aclTensor*> tensors;  // not owned
};

struct aclScalarList {
  std::vector<const aclScalar*> scalars;  // not owned
};
