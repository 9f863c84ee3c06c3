// The executor every operator hands out: a problem planned on the device backend at phase 1, run
// there at phase 2 (and printed by the verbose mode).
#pragma once

#include <memory>
#include <string>

#include "meta/executor.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {

class PlanExecutor final : public aclOpExecutor {
 public:
  // `api`: the phase-2 entry point's name; `call`: the user's tensors and parameters, printed by
  // the verbose mode (ACLNN_CONVBWD_VERBOSE, read here at phase 1: level 2 prints the choices now).
  // `refusal`: why phase 2 must refuse to run (conv/phase2_refusal.h), or status 0.
  PlanExecutor(std::unique_ptr<OperatorPlan> plan, const char* api, std::string call, Refusal refusal);
  uint64_t workspace_bytes() const override { return plan_->workspace_bytes(); }
  aclnnStatus run(void* workspace) const override;
  Refusal refusal() const override { return refusal_; }
  const char* run_api() const override { return api_; }

 private:
  std::unique_ptr<OperatorPlan> plan_;
  const char* api_;
  std::string call_;
  Refusal refusal_;
  bool verbose_;
};

// What ACLNN_CONVBWD_VERBOSE asks for: 0 nothing (unset or "0"), 1 one line per execution, 2 also
// one line per result at phase 1 saying how its entry was chosen ("2").
int verbose_level();

}  // namespace aclnn_cpu
