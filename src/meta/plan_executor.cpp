#include "meta/plan_executor.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "aclnn/opdev/op_errno.h"

namespace aclnn_cpu {

int verbose_level() {
  const char* value = std::getenv("ACLNN_CONVBWD_VERBOSE");
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0) return 0;
  return std::strcmp(value, "2") == 0 ? 2 : 1;
}

PlanExecutor::PlanExecutor(std::unique_ptr<OperatorPlan> plan, const char* api, std::string call, Refusal refusal)
    : plan_(std::move(plan)), api_(api), call_(std::move(call)), refusal_(std::move(refusal)) {
  const int level = verbose_level();
  verbose_ = level > 0;
  if (level < 2) return;
  // Phase 1 (level 2): how each result's entry was chosen, one line each.
  for (const std::string& choice : plan_->choices()) {
    std::printf("aclnn_convbwd_verbose,plan,%s,%s,%s\n", api_, call_.c_str(), choice.c_str());
  }
  std::fflush(stdout);
}

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
