#include "conv/check.h"

#include <cstddef>
#include <cstdint>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {

Check fail_check(aclnnStatus status, const char* api, const std::string& message) {
  report_error(std::string(api) + ": " + message);
  return Check{status};
}

Wide dilated_span(int64_t kernel, int64_t dilation) { return Wide{dilation} * (kernel - 1) + 1; }

Wide conv_output_size(int64_t in, int64_t lo, int64_t hi, int64_t kernel, int64_t stride, int64_t dilation) {
  const Wide room = Wide{in} + lo + hi - dilated_span(kernel, dilation);
  return room < 0 ? -1 : room / stride + 1;
}

std::string to_string(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

int64_t dims(const aclTensor& tensor) { return static_cast<int64_t>(tensor.view_shape.size()); }

int64_t dim_size(const aclTensor& tensor, int64_t index) { return tensor.view_shape[static_cast<size_t>(index)]; }

bool is_empty(const aclTensor& tensor) {
  for (int64_t size : tensor.view_shape) {
    if (size == 0) return true;
  }
  return false;
}

Check check_well_formed(const char* api, const char* name, const aclTensor& tensor) {
  if (tensor.strides.size() != tensor.view_shape.size()) {
    return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                      format("%s has %zu strides for %zu dims", name, tensor.strides.size(), tensor.view_shape.size()));
  }
  int64_t count = 1;
  for (int64_t size : tensor.view_shape) {
    if (size < 0 || (size > 0 && __builtin_mul_overflow(count, size, &count))) {
      return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                        format("%s shape %s must have non-negative dims whose product fits in int64", name,
                               to_string(tensor.view_shape).c_str()));
    }
  }
  return Check{};
}

Check check_accessible(const char* api, const char* name, const aclTensor& tensor) {
  if (is_empty(tensor)) return Check{};
  // Lowest and highest element the view reaches, relative to the data address.
  int64_t lowest = tensor.offset, highest = tensor.offset;
  bool overflow = false;
  for (size_t i = 0; i < tensor.view_shape.size(); ++i) {
    int64_t reach = 0;
    overflow |= __builtin_mul_overflow(tensor.view_shape[i] - 1, tensor.strides[i], &reach);
    overflow |= __builtin_add_overflow(reach < 0 ? lowest : highest, reach, reach < 0 ? &lowest : &highest);
  }
  if (overflow) {
    return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                      format("%s view (shape %s, strides %s, offset %lld) reaches elements past the int64 range: a "
                             "view's elements must be numbered within int64",
                             name, to_string(tensor.view_shape).c_str(), to_string(tensor.strides).c_str(),
                             static_cast<long long>(tensor.offset)));
  }
  // A tensor created without a storage shape has no known extent: only the lower bound is checked.
  bool storage_overflow = false;
  int64_t storage = tensor.storage_shape.empty() ? INT64_MAX : 1;
  for (int64_t size : tensor.storage_shape) {
    storage_overflow |= size < 0 || __builtin_mul_overflow(storage, size, &storage);
  }
  if (storage_overflow || lowest < 0 || highest >= storage) {
    return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                      format("%s view (shape %s, strides %s, offset %lld) reaches elements [%lld, %lld] outside its "
                             "storage shape %s",
                             name, to_string(tensor.view_shape).c_str(), to_string(tensor.strides).c_str(),
                             static_cast<long long>(tensor.offset), static_cast<long long>(lowest),
                             static_cast<long long>(highest), to_string(tensor.storage_shape).c_str()));
  }
  // The bytes from the data address to past the last element must fit a pointer difference: a view
  // reaching further would have its addresses wrap (onto another tensor) or its offsets overflow.
  const auto element = static_cast<int64_t>(dtype_size(tensor.dtype));
  int64_t end_byte = 0;
  if (__builtin_mul_overflow(highest + 1, element, &end_byte) || end_byte > PTRDIFF_MAX) {
    return fail_check(
        ACLNN_ERR_PARAM_INVALID, api,
        format("%s view (shape %s, strides %s, offset %lld) reaches element %lld of %lld bytes (%s), "
               "more than PTRDIFF_MAX (%lld) bytes past its data address: a view's bytes must fit the "
               "address space",
               name, to_string(tensor.view_shape).c_str(), to_string(tensor.strides).c_str(),
               static_cast<long long>(tensor.offset), static_cast<long long>(highest), static_cast<long long>(element),
               dtype_name(tensor.dtype), static_cast<long long>(PTRDIFF_MAX)));
  }
  return Check{};
}

Check check_float_dtype(const char* api, const char* name, const aclTensor& tensor) {
  if (tensor.dtype == ACL_FLOAT || tensor.dtype == ACL_FLOAT16 || tensor.dtype == ACL_BF16) return Check{};
  return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                    format("%s dtype %s (%d) is not supported: expected FLOAT, FLOAT16 or BF16", name,
                           dtype_name(tensor.dtype), tensor.dtype));
}

Check check_not_null(const char* api, std::initializer_list<NamedPointer> arguments) {
  for (const NamedPointer& argument : arguments) {
    if (argument.pointer == nullptr) {
      return fail_check(ACLNN_ERR_PARAM_NULLPTR, api, format("%s is nullptr", argument.name));
    }
  }
  return Check{};
}

Check check_cube_math_type(const char* api, int8_t cube_math_type, int largest) {
  if (cube_math_type >= 0 && cube_math_type <= largest) return Check{};
  static const char* const kNames[] = {"0 KEEP_DTYPE", "1 ALLOW_FP32_DOWN_PRECISION", "2 USE_FP16", "3 USE_HF32",
                                       "4 USE_FP32_ADD"};
  std::string expected;
  for (int i = 0; i <= largest; ++i) expected += std::string(i == 0 ? "" : i == largest ? " or " : ", ") + kNames[i];
  return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                    format("cubeMathType %d is not supported: expected %s", cube_math_type, expected.c_str()));
}

Check check_inside_storage(const char* api, const std::vector<UsedTensor>& used) {
  for (const UsedTensor& t : used) {
    Check check = check_accessible(api, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  return Check{};
}

Check check_all_well_formed(const char* api, std::initializer_list<NamedTensor> tensors) {
  for (const NamedTensor& t : tensors) {
    if (t.tensor == nullptr) continue;
    const Check check = check_well_formed(api, t.name, *t.tensor);
    if (check.failed()) return check;
  }
  return Check{};
}

Check check_format_in(const char* api, const NamedTensor& t, std::initializer_list<int32_t> formats,
                      const char* expected) {
  if (t.tensor == nullptr) return Check{};
  for (int32_t format : formats) {
    if (t.tensor->format == format) return Check{};
  }
  return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                    format("%s format %s (%d) is not supported: expected %s", t.name, format_name(t.tensor->format),
                           t.tensor->format, expected));
}

Check check_rank(const char* api, const NamedTensor& t, int64_t rank) {
  if (t.tensor == nullptr || dims(*t.tensor) == rank) return Check{};
  return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                    format("%s shape %s has %lld dims: expected %lld", t.name, to_string(t.tensor->view_shape).c_str(),
                           static_cast<long long>(dims(*t.tensor)), static_cast<long long>(rank)));
}

Check check_shape_is(const char* api, const char* name, const aclTensor& tensor, const std::vector<Wide>& expected) {
  bool same = tensor.view_shape.size() == expected.size();
  for (size_t i = 0; same && i < expected.size(); ++i) same = Wide{tensor.view_shape[i]} == expected[i];
  if (same) return Check{};
  std::string want = "[";
  for (size_t i = 0; i < expected.size(); ++i)
    want += (i ? ", " : "") + std::to_string(static_cast<long long>(expected[i]));
  return fail_check(ACLNN_ERR_PARAM_INVALID, api,
                    format("%s shape %s must be %s", name, to_string(tensor.view_shape).c_str(), (want + "]").c_str()));
}

}  // namespace aclnn_cpu
