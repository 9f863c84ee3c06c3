// Element types: sizes, and conversion of FLOAT/FLOAT16/BF16 elements to and from double.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "acl/acl_base.h"

namespace aclnn_cpu {

// Bytes per element, or 0 for an unknown or sub-byte type.
size_t dtype_size(int32_t dtype);
const char* dtype_name(int32_t dtype);
const char* format_name(int32_t format);
// CANN's promotion among FLOAT, FLOAT16 and BF16: equal types stay, any other pair gives FLOAT.
inline int32_t promote_dtype(int32_t a, int32_t b) { return a == b ? a : static_cast<int32_t>(ACL_FLOAT); }

// Reads element `index` of a FLOAT/FLOAT16/BF16 (or, for internal tests, DOUBLE) buffer.
inline double load_element(const void* base, int32_t dtype, int64_t index) {
  switch (dtype) {
    case ACL_DOUBLE: return static_cast<const double*>(base)[index];
    case ACL_FLOAT16: return static_cast<double>(static_cast<float>(static_cast<const Eigen::half*>(base)[index]));
    case ACL_BF16: return static_cast<double>(static_cast<float>(static_cast<const Eigen::bfloat16*>(base)[index]));
    default: return static_cast<double>(static_cast<const float*>(base)[index]);
  }
}

// double -> float rounded toward zero with the last bit set when inexact ("round to odd").
// Narrowing that float to half or bfloat16 (rounding to nearest even) then gives the same result
// as one correct rounding of the double, with no double-rounding error.
inline float round_to_odd_float(double value) {
  float narrowed = static_cast<float>(value);
  if (static_cast<double>(narrowed) == value || value != value) return narrowed;
  if (std::abs(static_cast<double>(narrowed)) > std::abs(value)) narrowed = std::nextafter(narrowed, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &narrowed, sizeof bits);
  bits |= 1u;
  std::memcpy(&narrowed, &bits, sizeof bits);
  return narrowed;
}

// Writes `value`, rounded once (to nearest even) to the buffer's type, at element `index`.
inline void store_element(void* base, int32_t dtype, int64_t index, double value) {
  switch (dtype) {
    case ACL_DOUBLE: static_cast<double*>(base)[index] = value; break;
    case ACL_FLOAT16: static_cast<Eigen::half*>(base)[index] = Eigen::half(round_to_odd_float(value)); break;
    case ACL_BF16: static_cast<Eigen::bfloat16*>(base)[index] = Eigen::bfloat16(round_to_odd_float(value)); break;
    default: static_cast<float*>(base)[index] = static_cast<float>(value);
  }
}

}  // namespace aclnn_cpu
