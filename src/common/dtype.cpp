#include "common/dtype.h"

#include "acl/acl_base.h"

namespace aclnn_cpu {

size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0: return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16: return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32: return 4;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_BF16: return "BF16";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_INT8: return "INT8";
    case ACL_INT16: return "INT16";
    case ACL_INT32: return "INT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT8: return "UINT8";
    case ACL_BOOL: return "BOOL";
    case ACL_HIFLOAT8: return "HIFLOAT8";
    case ACL_FLOAT8_E4M3FN: return "FLOAT8_E4M3FN";
    case ACL_FLOAT8_E5M2: return "FLOAT8_E5M2";
    case ACL_COMPLEX64: return "COMPLEX64";
    case ACL_COMPLEX128: return "COMPLEX128";
    case ACL_DT_UNDEFINED: return "UNDEFINED";
    default: return "unknown";
  }
}

const char* format_name(int32_t format) {
  switch (format) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_NDHWC: return "NDHWC";
    case ACL_FORMAT_NCL: return "NCL";
    case ACL_FORMAT_NC: return "NC";
    case ACL_FORMAT_UNDEFINED: return "UNDEFINED";
    default: return "unsupported";
  }
}

}  // namespace aclnn_cpu

extern "C" {

size_t aclDataTypeSize(aclDataType dataType) { return aclnn_cpu::dtype_size(static_cast<int32_t>(dataType)); }

float aclFloat16ToFloat(aclFloat16 value) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(value)); }

aclFloat16 aclFloatToFloat16(float value) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(value)); }

}  // extern "C"
