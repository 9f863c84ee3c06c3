// The fuzzer's differential check: an accepted problem on tensors with memory is run with one
// implementation-list entry forced first (ACLNN_CONVBWD_KERNELS, chosen by the input), then with
// the double-precision reference, each on a workspace poisoned with NaN, and every output element
// compared: the same NaN and Inf pattern (Inf signs too), finite values within the error bound of
// float accumulation over the reduction, plus one rounding into the output's dtype. The bound's
// sum of magnitudes comes from a third run of the reference on the inputs' absolute values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"

namespace fuzz {

// One tensor's memory as the check sees it: its dtype and the byte of each logical element.
struct Elements {
  uint8_t* data;
  int32_t dtype;
  std::vector<int64_t> offsets;  // element offsets from data, one per logical element (row-major)
};

// Phase 1 for the current contents and environment: status, workspace size, executor.
using PlanCall = std::function<aclnnStatus(uint64_t*, aclOpExecutor**)>;
using RunCall = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);

// The names the check may force: "" (the lists' own order) and every non-reference entry.
const std::vector<std::string>& forcible_entries();

// Runs the check (traps on a mismatch). `reduction`: the most products any output element sums.
// Inputs and outputs are left as the forced entry's run wrote them.
void compare_with_reference(const std::string& forced, const PlanCall& plan, RunCall run,
                            const std::vector<Elements>& inputs, const std::vector<Elements>& outputs,
                            int64_t reduction);

}  // namespace fuzz
