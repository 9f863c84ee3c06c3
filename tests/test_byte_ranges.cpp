// Views whose bytes do not fit the address space, and executors passed to another operator's phase 2.
// A view's bytes, from its data address to past its last element, must fit a pointer difference
// (PTRDIFF_MAX): phase 1 refuses a view reaching further (161002, the tensor named), so that no
// address wraps 2^64 onto another tensor and no offset overflows in a kernel. Phase 2 refuses a data
// address whose view would end past the address space. An executor runs only through the phase-2
// entry point of the operator that planned it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"

namespace {

constexpr int64_t k2To62 = int64_t{1} << 62;

// One float buffer that every tensor of a test views.
struct Buffer {
  std::vector<float> values = std::vector<float>(1024, 1.0f);
  float* at(int64_t element) { return values.data() + element; }
};

// A dense FLOAT tensor of `shape` at `data` (or with `strides` and `storage` elements where given).
aclTensor* tensor(const std::vector<int64_t>& shape, void* data, std::vector<int64_t> strides = {}, int64_t storage = 0,
                  aclFormat format = ACL_FORMAT_NCHW) {
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (size_t i = shape.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * shape[i];
  }
  if (storage == 0) {
    storage = 1;
    for (int64_t size : shape) storage *= size;
  }
  return aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0, format, &storage, 1, data);
}

struct Arrays {
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  aclIntArray* stride = aclCreateIntArray(one, 2);
  aclIntArray* padding = aclCreateIntArray(zero, 2);
  aclIntArray* dilation = aclCreateIntArray(one, 2);
  aclIntArray* output_padding = aclCreateIntArray(zero, 2);
  ~Arrays() {
    for (aclIntArray* a : {stride, padding, dilation, output_padding}) aclDestroyIntArray(a);
  }
};

// aclnnConvolution's phase 1 of a 1x1 layer (2, 1, 4, 4) -> `output`.
aclnnStatus plan_convolution(Buffer& b, aclTensor* output, uint64_t* size, aclOpExecutor** executor,
                             aclTensor* input = nullptr) {
  const Arrays a;
  aclTensor* x = input != nullptr ? input : tensor({2, 1, 4, 4}, b.at(0));
  aclTensor* w = tensor({1, 1, 1, 1}, b.at(32));
  const aclnnStatus status = aclnnConvolutionGetWorkspaceSize(x, w, nullptr, a.stride, a.padding, a.dilation, false,
                                                              a.output_padding, 1, output, 0, size, executor);
  if (input == nullptr) aclDestroyTensor(x);
  aclDestroyTensor(w);
  return status;
}

void expect_refused(aclnnStatus status, const char* api, const char* tensor_name) {
  EXPECT_EQ(status, 161002);
  const std::string message = aclGetRecentErrMsg();
  EXPECT_NE(message.find(std::string(api) + ": " + tensor_name + " view"), std::string::npos) << message;
  EXPECT_NE(message.find("more than PTRDIFF_MAX"), std::string::npos) << message;
}

// The output's second sample lies 2^64 bytes past the input's first element: its byte offsets wrap
// onto the input. Refused at phase 1; nothing is written.
TEST(ByteRanges, ConvolutionOutputWrappingOntoItsInputIsRefused) {
  Buffer b;
  const std::vector<float> before = b.values;
  // Output at element 64: its batch stride 2^62 - 64 elements is 2^64 - 256 bytes, sample 1 at element 0.
  aclTensor* y = tensor({2, 1, 4, 4}, b.at(64), {k2To62 - 64, 16, 4, 1}, k2To62);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  expect_refused(plan_convolution(b, y, &size, &executor), "aclnnConvolutionGetWorkspaceSize", "output");
  EXPECT_EQ(executor, nullptr);
  EXPECT_TRUE(b.values == before);
  aclDestroyTensor(y);
}

// An input spanning 2^63 bytes (batch stride 2^61 floats) inside a storage that large: refused at
// phase 1, never reaching a kernel's offsets.
TEST(ByteRanges, InputPastPtrdiffMaxIsRefused) {
  Buffer b;
  aclTensor* x = tensor({2, 1, 4, 4}, b.at(0), {int64_t{1} << 61, 16, 4, 1}, (int64_t{1} << 61) + 64);
  aclTensor* y = tensor({2, 1, 4, 4}, b.at(64));
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  expect_refused(plan_convolution(b, y, &size, &executor, x), "aclnnConvolutionGetWorkspaceSize", "input");
  aclDestroyTensor(x);
  aclDestroyTensor(y);
}

// gradInput's second sample wraps onto gradOutput (aclnnConvolutionBackward).
TEST(ByteRanges, GradInputWrappingOntoGradOutputIsRefused) {
  Buffer b;
  const std::vector<float> before = b.values;
  const Arrays a;
  const int64_t bias_size = 1;
  aclIntArray* bias = aclCreateIntArray(&bias_size, 1);
  const bool m[3] = {true, true, true};
  aclBoolArray* mask = aclCreateBoolArray(m, 3);
  aclTensor* gy = tensor({2, 1, 4, 4}, b.at(0));
  aclTensor* x = tensor({2, 1, 4, 4}, b.at(32));
  aclTensor* w = tensor({1, 1, 1, 1}, b.at(64));
  aclTensor* gx = tensor({2, 1, 4, 4}, b.at(128), {k2To62 - 128, 16, 4, 1}, k2To62);
  aclTensor* gw = tensor({1, 1, 1, 1}, b.at(160));
  aclTensor* gb = tensor({1}, b.at(161), {}, 0, ACL_FORMAT_ND);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  expect_refused(aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, bias, a.stride, a.padding, a.dilation, false,
                                                          a.output_padding, 1, mask, 0, gx, gw, gb, &size, &executor),
                 "aclnnConvolutionBackwardGetWorkspaceSize", "gradInput");
  EXPECT_TRUE(b.values == before);
  for (aclTensor* t : {gy, x, w, gx, gw, gb}) aclDestroyTensor(t);
  aclDestroyIntArray(bias);
  aclDestroyBoolArray(mask);
}

// ConvTbc's output (T 2, B 2, C 1) whose second time step wraps onto self.
TEST(ByteRanges, ConvTbcOutputWrappingOntoSelfIsRefused) {
  Buffer b;
  const std::vector<float> before = b.values;
  aclTensor* self = tensor({2, 2, 1}, b.at(0), {}, 0, ACL_FORMAT_ND);
  aclTensor* w = tensor({1, 1, 1}, b.at(16), {}, 0, ACL_FORMAT_ND);
  aclTensor* bias = tensor({1}, b.at(17), {}, 0, ACL_FORMAT_ND);
  aclTensor* y = tensor({2, 2, 1}, b.at(64), {k2To62 - 64, 1, 1}, k2To62, ACL_FORMAT_ND);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  expect_refused(aclnnConvTbcGetWorkspaceSize(self, w, bias, 0, y, 0, &size, &executor), "aclnnConvTbcGetWorkspaceSize",
                 "output");
  EXPECT_TRUE(b.values == before);
  for (aclTensor* t : {self, w, bias, y}) aclDestroyTensor(t);
}

// Phase 1 plans tensors whatever their addresses; phase 2 refuses a data address whose view reaches
// the end of the address space (its last byte there, or past it: the address past the view would wrap
// to 0), before it touches anything (the addresses here are never dereferenced).
TEST(ByteRanges, DataAddressWhoseViewReachesTheEndOfTheAddressSpaceIsRefusedAtPhase2) {
  const struct {
    uintptr_t data;
    const char* bytes;
  } cases[] = {{UINTPTR_MAX - 63, "[0xffffffffffffffc0, 0x10000000000000040)"},    // 64 bytes past 2^64
               {UINTPTR_MAX - 127, "[0xffffffffffffff80, 0x10000000000000000)"}};  // its last byte the last one
  for (const auto& c : cases) {
    Buffer b;
    aclTensor* y = tensor({2, 1, 4, 4}, reinterpret_cast<void*>(c.data));  // 128 bytes
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(plan_convolution(b, y, &size, &executor), 0) << aclGetRecentErrMsg();
    std::vector<unsigned char> workspace(static_cast<size_t>(size) + 1);
    EXPECT_EQ(aclnnConvolution(workspace.data(), size, executor, nullptr), 161002);
    const std::string message = aclGetRecentErrMsg();
    EXPECT_NE(message.find(std::string("output (bytes ") + c.bytes + ") reaches the end of the address space"),
              std::string::npos)
        << message;
    aclDestroyTensor(y);
  }
}

// An aclnnConvolution executor passed to aclnnConvTbc (or any other operator's phase 2) is refused with
// both operators named, and stays live: its own operator then runs it.
TEST(ByteRanges, ExecutorRunsOnlyThroughItsOwnOperator) {
  Buffer b;
  for (int i = 0; i < 32; ++i) b.values[static_cast<size_t>(i)] = static_cast<float>(i);
  b.values[32] = 2.0f;
  aclTensor* y = tensor({2, 1, 4, 4}, b.at(64));
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  ASSERT_EQ(plan_convolution(b, y, &size, &executor), 0) << aclGetRecentErrMsg();
  std::vector<unsigned char> workspace(static_cast<size_t>(size) + 1);
  using Phase2 = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);
  const struct {
    const char* name;
    Phase2 run;
  } others[] = {{"aclnnConvTbc", aclnnConvTbc},
                {"aclnnConvDepthwise2d", aclnnConvDepthwise2d},
                {"aclnnConvolutionBackward", aclnnConvolutionBackward},
                {"aclnnConvTbcBackward", aclnnConvTbcBackward}};
  for (const auto& other : others) {
    EXPECT_EQ(other.run(workspace.data(), size, executor, nullptr), 161002) << other.name;
    const std::string message = aclGetRecentErrMsg();
    EXPECT_NE(message.find(std::string(other.name) + ": executor"), std::string::npos) << message;
    EXPECT_NE(message.find("planned by aclnnConvolutionGetWorkspaceSize and runs only through aclnnConvolution, not " +
                           std::string(other.name)),
              std::string::npos)
        << message;
    EXPECT_EQ(b.values[64], 1.0f) << "ran through " << other.name;
  }
  ASSERT_EQ(aclnnConvolution(workspace.data(), size, executor, nullptr), 0) << aclGetRecentErrMsg();
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(b.values[static_cast<size_t>(64 + i)], 2.0f * static_cast<float>(i)) << i;
  aclDestroyTensor(y);
}

}  // namespace
