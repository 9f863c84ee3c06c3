// Small helpers shared by the operators' parameter checks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"
#include "conv/phase2_refusal.h"

namespace aclnn_cpu {

// Shape arithmetic on user values (sizes, paddings, strides, dilations: each up to INT64_MAX) is
// done in 128 bits, where no sum of a few such products can overflow.
__extension__ typedef __int128 Wide;

// Size of a convolution's output along one dim: floor((in + lo + hi - dilated kernel) / stride) + 1,
// where the dilated kernel spans dilation * (kernel - 1) + 1. Negative when the padded input is
// shorter than the dilated kernel.
Wide conv_output_size(int64_t in, int64_t lo, int64_t hi, int64_t kernel, int64_t stride, int64_t dilation);
// The dilated kernel's span: dilation * (kernel - 1) + 1.
Wide dilated_span(int64_t kernel, int64_t dilation);

// A failed check: the status code and the sentence already reported (or 0 = passed).
struct Check {
  aclnnStatus status = 0;
  bool failed() const { return status != 0; }
};

// Reports "<api>: <message>" and returns a failed Check with `status`.
Check fail_check(aclnnStatus status, const char* api, const std::string& message);

std::string to_string(const std::vector<int64_t>& values);
int64_t dims(const aclTensor& tensor);
int64_t dim_size(const aclTensor& tensor, int64_t index);
bool is_empty(const aclTensor& tensor);

// Dims non-negative, one stride per dim, element count within int64.
Check check_well_formed(const char* api, const char* name, const aclTensor& tensor);
// For a non-empty tensor the executor will touch: its elements numbered within int64, the view inside
// its storage (no element before the data address; none past the storage shape, when one was given),
// and its bytes from the data address to past its last element at most PTRDIFF_MAX (no address of it
// wraps, no byte offset overflows). The data address itself is not looked at: phase 1 plans tensors
// created without memory, as CANN's does (phase 2 checks where the bytes end: phase2_refusal.h).
Check check_accessible(const char* api, const char* name, const aclTensor& tensor);

// dtype is FLOAT, FLOAT16 or BF16 (the 910B list).
Check check_float_dtype(const char* api, const char* name, const aclTensor& tensor);

// A tensor argument and the name the API gives it (nullptr where an optional one is absent: the checks
// below then pass).
struct NamedTensor {
  const char* name;
  const aclTensor* tensor;
};
// Ours, before any shape is read: every one of `tensors` (nullptr ones skipped) well formed
// (check_well_formed).
Check check_all_well_formed(const char* api, std::initializer_list<NamedTensor> tensors);
// Its format is one of `formats` (`expected` names them in the message).
Check check_format_in(const char* api, const NamedTensor& t, std::initializer_list<int32_t> formats,
                      const char* expected);
// It has `rank` dims.
Check check_rank(const char* api, const NamedTensor& t, int64_t rank);

// `tensor`'s shape is exactly `expected`.
Check check_shape_is(const char* api, const char* name, const aclTensor& tensor, const std::vector<Wide>& expected);

// Runs the checks (callables returning a Check) in order; the first failing one's result.
template <typename... Checks>
Check first_failure(Checks&&... checks) {
  Check result;
  ((result.failed() ? void() : void(result = checks())), ...);
  return result;
}

// The first of `arguments` (in order) that is null: 161001 "<name> is nullptr".
struct NamedPointer {
  const char* name;
  const void* pointer;
};
Check check_not_null(const char* api, std::initializer_list<NamedPointer> arguments);

// cubeMathType within 0 KEEP_DTYPE .. `largest` (3 USE_HF32 for the backward operators, 4 USE_FP32_ADD
// for the forward ones).
Check check_cube_math_type(const char* api, int8_t cube_math_type, int largest);

// Ours, last: every tensor a run reads or writes stays inside its storage (check_accessible).
Check check_inside_storage(const char* api, const std::vector<UsedTensor>& used);

}  // namespace aclnn_cpu
