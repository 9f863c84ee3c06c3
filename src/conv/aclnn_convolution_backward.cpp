// The operator entry points: validate -> normalise -> plan (phase 1); run on a stream (phase 2).
#include "aclnnop/aclnn_convolution_backward.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/guard.h"
#include "common/log.h"
#include "conv/conv_tbc_backward.h"
#include "conv/convolution_backward.h"
#include "conv/phase2_refusal.h"
#include "meta/meta_objects.h"
#include "meta/plan_executor.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {
namespace {

// "4x64x28x28"
std::string dims_text(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "x" : "") + std::to_string(values[i]);
  return text;
}

// "input:FLOAT:4x64x28x28", for the verbose line.
std::string tensor_text(const char* name, const aclTensor* tensor) {
  if (tensor == nullptr) return format("%s:none", name);
  return format("%s:%s:%s", name, dtype_name(tensor->dtype), dims_text(tensor->view_shape).c_str());
}

std::string convolution_call(const ConvBackwardArgs& a) {
  std::string mask;
  for (bool bit : a.output_mask->values) mask += bit ? '1' : '0';
  return format(
      "%s %s %s,stride=%s padding=%s dilation=%s transposed=%d outputPadding=%s groups=%d outputMask=%s "
      "cubeMathType=%d",
      tensor_text("gradOutput", a.grad_output).c_str(), tensor_text("input", a.input).c_str(),
      tensor_text("weight", a.weight).c_str(), dims_text(a.stride->values).c_str(),
      dims_text(a.padding->values).c_str(), dims_text(a.dilation->values).c_str(), a.transposed ? 1 : 0,
      dims_text(a.output_padding->values).c_str(), a.groups, mask.c_str(), a.cube_math_type);
}

std::string tbc_call(const ConvTbcBackwardArgs& a) {
  return format("%s %s %s,pad=%lld cubeMathType=%d", tensor_text("self", a.self).c_str(),
                tensor_text("input", a.input).c_str(), tensor_text("weight", a.weight).c_str(),
                static_cast<long long>(a.pad), a.cube_math_type);
}

// Plans a validated problem on the device backend and hands the executor and its workspace
// size to the caller. `api` names the phase-1 entry point, `run_api` the phase-2 one.
// `used`: the tensors the run reads or writes (their addresses may refuse phase 2, never phase 1).
aclnnStatus publish(const ConvProblem& problem, const std::vector<UsedTensor>& used, const char* api,
                    const char* run_api, std::string call, uint64_t* workspace_size, aclOpExecutor** executor) {
  std::unique_ptr<OperatorPlan> plan = device_backend().plan_convolution(problem, api);
  if (plan == nullptr) return ACLNN_ERR_PARAM_INVALID;
  auto planned = std::make_unique<PlanExecutor>(std::move(plan), run_api, std::move(call), phase2_refusal(used));
  *workspace_size = planned->workspace_bytes();
  *executor = register_executor(std::move(planned));
  return ACLNN_SUCCESS;
}

// No exception crosses the C ABI.
template <typename Body>
aclnnStatus guarded(const char* api, Body&& body) {
  return guard<aclnnStatus>(api, ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, std::forward<Body>(body));
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* input,
                                                     const aclTensor* weight, const aclIntArray* biasSizes,
                                                     const aclIntArray* stride, const aclIntArray* padding,
                                                     const aclIntArray* dilation, bool transposed,
                                                     const aclIntArray* outputPadding, int groups,
                                                     const aclBoolArray* outputMask, int8_t cubeMathType,
                                                     aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvolutionBackwardGetWorkspaceSize", [&] {
    const ConvBackwardArgs args{gradOutput, input,      weight,        biasSizes,     stride,     padding,
                                dilation,   transposed, outputPadding, groups,        outputMask, cubeMathType,
                                gradInput,  gradWeight, gradBias,      workspaceSize, executor};
    const Check check = validate_convolution_backward(args);
    if (check.failed()) return check.status;
    return publish(make_convolution_problem(args), used_tensors(args), "aclnnConvolutionBackwardGetWorkspaceSize",
                   "aclnnConvolutionBackward", convolution_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvolutionBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     const aclrtStream stream) {
  return guarded("aclnnConvolutionBackward",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvolutionBackward"); });
}

aclnnStatus aclnnConvTbcBackwardGetWorkspaceSize(const aclTensor* self, const aclTensor* input, const aclTensor* weight,
                                                 const aclTensor* bias, int64_t pad, int8_t cubeMathType,
                                                 aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return guarded("aclnnConvTbcBackwardGetWorkspaceSize", [&] {
    const ConvTbcBackwardArgs args{self,      input,      weight,   bias,          pad,     cubeMathType,
                                   gradInput, gradWeight, gradBias, workspaceSize, executor};
    const Check check = validate_conv_tbc_backward(args);
    if (check.failed()) return check.status;
    return publish(make_conv_tbc_problem(args), used_tensors(args), "aclnnConvTbcBackwardGetWorkspaceSize",
                   "aclnnConvTbcBackward", tbc_call(args), workspaceSize, executor);
  });
}

aclnnStatus aclnnConvTbcBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 const aclrtStream stream) {
  return guarded("aclnnConvTbcBackward",
                 [&] { return run_executor(workspace, workspaceSize, executor, stream, "aclnnConvTbcBackward"); });
}

}  // extern "C"
