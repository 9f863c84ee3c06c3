#include "conv/convolution_executor.h"

#include "aclnn/opdev/op_errno.h"

namespace aclnn_cpu {

ConvExecutor::ConvExecutor(const ConvProblem& problem, const ConvKernelSet& kernels)
    : problem_(problem), kernels_(kernels) {
  problem_.max_threads = available_threads();
  workspace_bytes_ = kernels.workspace_bytes(problem_);
}

aclnnStatus ConvExecutor::run(void* workspace) const {
  kernels_.run(problem_, workspace);
  return ACLNN_SUCCESS;
}

}  // namespace aclnn_cpu
