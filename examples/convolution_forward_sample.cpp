// The forward operators, called the way CANN's aclnn samples call an operator: aclnnConvolution
// (direct and transposed), aclnnConvTbc and aclnnConvDepthwise2d on tensors of ones with a bias of
// ones. Each result is printed element by element, "<name>[i] is: <value>":
//   convolutionResult            (1, 2, 2, 2): 2 channels x 3x3 taps + bias   = 19
//   transposedConvolutionResult  (1, 3, 4, 4): 2 channels x 1 tap + bias      = 3 (stride 2 = kernel)
//   convTbcResult                (4, 1, 3):    2 channels x 1 tap + bias      = 3
//   convDepthwise2dResult        (1, 4, 2, 2): 1 channel x 3x3 taps + bias    = 10
#include <cstdio>
#include <memory>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"

#define CHECK_RET(cond, return_expr) \
  do {                               \
    if (!(cond)) {                   \
      return_expr;                   \
    }                                \
  } while (0)

#define LOG_PRINT(...) printf(__VA_ARGS__)

int64_t GetShapeSize(const std::vector<int64_t>& shape) {
  int64_t size = 1;
  for (int64_t dim : shape) size *= dim;
  return size;
}

// A device tensor of `shape` filled with `value`, contiguous, in `format`.
struct DeviceTensor {
  std::vector<int64_t> shape;
  void* deviceAddr = nullptr;
  aclTensor* tensor = nullptr;
  DeviceTensor(const std::vector<int64_t>& tensorShape, float value, aclFormat format) : shape(tensorShape) {
    std::vector<float> hostData(GetShapeSize(shape), value);
    const size_t bytes = hostData.size() * sizeof(float);
    aclrtMalloc(&deviceAddr, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(deviceAddr, bytes, hostData.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) strides[i] = shape[i + 1] * strides[i + 1];
    tensor = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0, format, shape.data(),
                             shape.size(), deviceAddr);
  }
  ~DeviceTensor() {
    aclDestroyTensor(tensor);
    aclrtFree(deviceAddr);
  }
  // Copies the result to the host and prints it.
  int Print(const char* name) const {
    std::vector<float> result(GetShapeSize(shape), 0);
    const size_t bytes = result.size() * sizeof(float);
    auto ret = aclrtMemcpy(result.data(), bytes, deviceAddr, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    for (size_t i = 0; i < result.size(); i++) LOG_PRINT("%s[%zu] is: %f\n", name, i, result[i]);
    return 0;
  }
};

// The second stage of an operator: allocate the workspace phase 1 asked for, run, wait.
int Run(aclnnStatus (*op)(void*, const uint64_t, aclOpExecutor*, aclrtStream), uint64_t workspaceSize,
        aclOpExecutor* executor, aclrtStream stream) {
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    auto ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  std::unique_ptr<void, aclError (*)(void*)> workspaceAddrPtr(workspaceAddr, aclrtFree);
  auto ret = op(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("the operator failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
  return 0;
}

std::unique_ptr<aclIntArray, aclnnStatus (*)(const aclIntArray*)> IntArray(const std::vector<int64_t>& values) {
  return {aclCreateIntArray(values.data(), values.size()), aclDestroyIntArray};
}

int ConvolutionTest(aclrtStream stream, bool transposed) {
  DeviceTensor input(transposed ? std::vector<int64_t>{1, 2, 2, 2} : std::vector<int64_t>{1, 2, 4, 4}, 1,
                     ACL_FORMAT_NCHW);
  DeviceTensor weight(transposed ? std::vector<int64_t>{2, 3, 2, 2} : std::vector<int64_t>{2, 2, 3, 3}, 1,
                      ACL_FORMAT_NCHW);
  DeviceTensor bias({transposed ? 3 : 2}, 1, ACL_FORMAT_ND);
  DeviceTensor output(transposed ? std::vector<int64_t>{1, 3, 4, 4} : std::vector<int64_t>{1, 2, 2, 2}, 0,
                      ACL_FORMAT_NCHW);
  auto stride = IntArray(transposed ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{1, 1});
  auto padding = IntArray({0, 0});
  auto dilation = IntArray({1, 1});
  auto outputPadding = IntArray({0, 0});
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  auto ret = aclnnConvolutionGetWorkspaceSize(input.tensor, weight.tensor, bias.tensor, stride.get(), padding.get(),
                                              dilation.get(), transposed, outputPadding.get(), 1, output.tensor, 0,
                                              &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnConvolutionGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
  ret = Run(aclnnConvolution, workspaceSize, executor, stream);
  CHECK_RET(ret == 0, return ret);
  return output.Print(transposed ? "transposedConvolutionResult" : "convolutionResult");
}

int ConvTbcTest(aclrtStream stream) {
  DeviceTensor self({4, 1, 2}, 1, ACL_FORMAT_ND);    // (T, B, Cin)
  DeviceTensor weight({1, 2, 3}, 1, ACL_FORMAT_ND);  // (K, Cin, Cout)
  DeviceTensor bias({3}, 1, ACL_FORMAT_ND);
  DeviceTensor output({4, 1, 3}, 0, ACL_FORMAT_ND);  // (T + 2 * pad + 1 - K, B, Cout)
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  auto ret = aclnnConvTbcGetWorkspaceSize(self.tensor, weight.tensor, bias.tensor, 0, output.tensor, 1,
                                          &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnConvTbcGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
  ret = Run(aclnnConvTbc, workspaceSize, executor, stream);
  CHECK_RET(ret == 0, return ret);
  return output.Print("convTbcResult");
}

int ConvDepthwise2dTest(aclrtStream stream) {
  DeviceTensor self({1, 2, 4, 4}, 1, ACL_FORMAT_NCHW);
  DeviceTensor weight({4, 1, 3, 3}, 1, ACL_FORMAT_NCHW);  // two output channels per input channel
  DeviceTensor bias({4}, 1, ACL_FORMAT_ND);
  DeviceTensor out({1, 4, 2, 2}, 0, ACL_FORMAT_NCHW);
  auto kernelSize = IntArray({3, 3});
  auto stride = IntArray({1, 1});
  auto padding = IntArray({0, 0});
  auto dilation = IntArray({1, 1});
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  auto ret = aclnnConvDepthwise2dGetWorkspaceSize(self.tensor, weight.tensor, kernelSize.get(), bias.tensor,
                                                  stride.get(), padding.get(), dilation.get(), out.tensor, 1,
                                                  &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnConvDepthwise2dGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  ret = Run(aclnnConvDepthwise2d, workspaceSize, executor, stream);
  CHECK_RET(ret == 0, return ret);
  return out.Print("convDepthwise2dResult");
}

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
  ret = aclrtCreateStream(&stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
  int status = ConvolutionTest(stream, false);
  if (status == 0) status = ConvolutionTest(stream, true);
  if (status == 0) status = ConvTbcTest(stream);
  if (status == 0) status = ConvDepthwise2dTest(stream);
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return status;
}
