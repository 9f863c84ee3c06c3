// What every operator's front door shares: planning a validated problem into an executor, the
// verbose line's text, and the guard that keeps exceptions from crossing the C ABI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"
#include "common/guard.h"
#include "conv/phase2_refusal.h"
#include "kernels/core/conv_problem.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {

// "4x64x28x28"
std::string dims_text(const std::vector<int64_t>& values);
// "input:FLOAT:4x64x28x28" ("input:none" for nullptr), for the verbose line.
std::string tensor_text(const char* name, const aclTensor* tensor);

// Plans a validated operator problem on the device backend and hands the executor and its workspace
// size to the caller. `api` names the phase-1 entry point, `run_api` the phase-2 one, `call` the
// arguments (verbose line). `used`: the tensors the run reads or writes (their addresses may refuse
// phase 2, never phase 1).
aclnnStatus publish(const OperatorProblem& problem, const std::vector<UsedTensor>& used, const char* api,
                    const char* run_api, std::string call, uint64_t* workspace_size, aclOpExecutor** executor);
// ... a convolution's, planned from the convolution's lists (kernels/conv/conv_plan.h).
aclnnStatus publish(const ConvProblem& problem, const std::vector<UsedTensor>& used, const char* api,
                    const char* run_api, std::string call, uint64_t* workspace_size, aclOpExecutor** executor);

// An operator's plan for the host (ConvPlan, DeformPlan: workspace_bytes, describe, choices, threads,
// execute) as the device backend runs it.
template <class Plan>
class HostPlan final : public OperatorPlan {
 public:
  explicit HostPlan(std::unique_ptr<Plan> plan) : plan_(std::move(plan)) {}
  uint64_t workspace_bytes() const override { return plan_->workspace_bytes(); }
  std::string describe() const override { return plan_->describe() + ",threads=" + std::to_string(plan_->threads()); }
  std::vector<std::string> choices() const override { return plan_->choices(); }
  int execute(void* workspace) const override { return plan_->execute(workspace); }

 private:
  std::unique_ptr<Plan> plan_;
};

// Runs `body` (returning a status); no exception crosses the C ABI.
template <typename Body>
aclnnStatus guarded(const char* api, Body&& body) {
  return guard<aclnnStatus>(api, ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, std::forward<Body>(body));
}

}  // namespace aclnn_cpu
