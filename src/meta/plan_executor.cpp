#include "meta/plan_executor.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "aclnn/opdev/op_errno.h"

namespace aclnn_cpu {

bool verbose_enabled() {
  const char* value = std::getenv("ACLNN_CONVBWD_VERBOSE");
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

PlanExecutor::PlanExecutor(std::unique_ptr<OperatorPlan> plan, const char* api, std::string call, Refusal refusal)
    : plan_(std::move(plan)),
      api_(api),
      call_(std::move(call)),
      refusal_(std::move(refusal)),
      verbose_(verbose_enabled()) {}

aclnnStatus PlanExecutor::run(void* workspace) const {
  const auto start = std::chrono::steady_clock::now();
  const int status = device_backend().launch(*plan_, workspace);
  if (verbose_) {
    const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    // One line, comma-separated (docs/architecture.md, "Verbose mode").
    std::printf("aclnn_convbwd_verbose,exec,%s,%s,%s,workspace=%llu,status=%d,%.3f\n", api_, call_.c_str(),
                plan_->describe().c_str(), static_cast<unsigned long long>(plan_->workspace_bytes()), status,
                elapsed.count());
    std::fflush(stdout);
  }
  return static_cast<aclnnStatus>(status);
}

}  // namespace aclnn_cpu
