// The executor both operators hand out: a normalised problem planned on a kernel set.
#pragma once

#include "kernels/conv_problem.h"
#include "meta/executor.h"

namespace aclnn_cpu {

class ConvExecutor final : public aclOpExecutor {
 public:
  // Plans `problem` on `kernels`: the workspace it needs is fixed here.
  ConvExecutor(const ConvProblem& problem, const ConvKernelSet& kernels);
  uint64_t workspace_bytes() const override { return workspace_bytes_; }
  aclnnStatus run(void* workspace) const override;

 private:
  ConvProblem problem_;
  const ConvKernelSet& kernels_;
  uint64_t workspace_bytes_ = 0;
};

}  // namespace aclnn_cpu
