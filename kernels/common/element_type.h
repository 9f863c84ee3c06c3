// The element types of the views' dtypes, for code that reads or writes their storage typed: one
// dispatch on the dtype per call, not per element (kernels/common/pack.cpp, bias_lanes.cpp).
#pragma once

#include <Eigen/Core>

#include "acl/acl_base.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

// Calls body once with a typed pointer to the view's storage (Eigen::half, Eigen::bfloat16, double or
// float): the dtype dispatch happens once, not per element.
template <typename Body>
inline void with_element_type(const View5& view, Body body) {
  switch (view.dtype) {
    case ACL_FLOAT16: body(static_cast<Eigen::half*>(view.data)); break;
    case ACL_BF16: body(static_cast<Eigen::bfloat16*>(view.data)); break;
    case ACL_DOUBLE: body(static_cast<double*>(view.data)); break;
    default: body(static_cast<float*>(view.data));
  }
}

// A stored element as a double (FLOAT16 and BF16 exactly, through float).
template <typename E>
inline double element_as_double(E value) {
  return static_cast<double>(static_cast<float>(value));
}
template <>
inline double element_as_double(double value) {
  return value;
}

}  // namespace aclnn_cpu
