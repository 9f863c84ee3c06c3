// Phase 2 and executor life cycle (one-shot, repeatable, destroy, workspace checks), streams,
// masked outputs left untouched, and the true gradients of empty tensors.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "aclnn/opdev/op_errno.h"
#include "support/run_conv.h"

namespace testing_support {
namespace {

using Shape = std::vector<int64_t>;

// A planned 1-D convolution backward (N 2, C 3 -> 4, L 6, k 3, pad 1) with its tensors.
// gradOutput is FLOAT16, so every kernel set needs workspace to widen it.
struct Planned {
  DeviceTensor gy{{2, 4, 6}, ACL_FLOAT16, ACL_FORMAT_NCL}, x{{2, 3, 6}, ACL_FLOAT, ACL_FORMAT_NCL};
  DeviceTensor w{{4, 3, 3}, ACL_FLOAT, ACL_FORMAT_NCL}, gx{{2, 3, 6}, ACL_FLOAT, ACL_FORMAT_NCL};
  DeviceTensor gw{{4, 3, 3}, ACL_FLOAT, ACL_FORMAT_NCL}, gb{{4}, ACL_FLOAT, ACL_FORMAT_ND};
  ConvSpec spec;
  aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;

  // `without_data`: the tensor ("gradOutput", "input", "gradInput") created with no data address.
  explicit Planned(std::array<bool, 3> mask = {true, true, true}, const std::string& without_data = "") {
    if (without_data == "gradOutput") aclSetRawTensorAddr(gy.get(), nullptr);
    if (without_data == "input") aclSetRawTensorAddr(x.get(), nullptr);
    if (without_data == "gradInput") aclSetRawTensorAddr(gx.get(), nullptr);
    spec.spatial = 1;
    spec.batch = 2, spec.in_channels = 3, spec.out_channels = 4;
    spec.input_size = {6}, spec.kernel = {3}, spec.stride = {1}, spec.dilation = {1};
    spec.pad_lo = spec.pad_hi = {1};
    fill(0);
    const int64_t one = 1, zero = 0, four = 4;
    aclIntArray* s = aclCreateIntArray(&one, 1);
    aclIntArray* p = aclCreateIntArray(&one, 1);
    aclIntArray* op = aclCreateIntArray(&zero, 1);
    aclIntArray* bias = aclCreateIntArray(&four, 1);
    const bool m[3] = {mask[0], mask[1], mask[2]};
    aclBoolArray* mask_array = aclCreateBoolArray(m, 3);
    EXPECT_EQ(
        aclnnConvolutionBackwardGetWorkspaceSize(gy.get(), x.get(), w.get(), bias, s, p, s, false, op, 1, mask_array, 0,
                                                 gx.get(), gw.get(), gb.get(), &workspace_size, &executor),
        0);
    aclDestroyIntArray(s);
    aclDestroyIntArray(p);
    aclDestroyIntArray(op);
    aclDestroyIntArray(bias);
    aclDestroyBoolArray(mask_array);
  }
  void fill(int seed) {
    gy.fill(pattern(gy.numel(), 3 + seed));
    x.fill(pattern(x.numel(), 1 + seed));
    w.fill(pattern(w.numel(), 2 + seed));
  }
  ConvGrads expected(int seed) const {
    return oracle_backward(spec, pattern(x.numel(), 1 + seed), pattern(w.numel(), 2 + seed),
                           pattern(gy.numel(), 3 + seed));
  }
};

struct Workspace {
  void* ptr = nullptr;
  explicit Workspace(uint64_t size) {
    if (size > 0 && aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS) {
      aclrtMemset(ptr, size, 0xFF, size);  // NaN in every floating dtype: unwritten scratch shows
    }
  }
  ~Workspace() {
    if (ptr != nullptr) aclrtFree(ptr);
  }
};

TEST(ConvExecution, OneShotExecutorIsFreedByItsRun) {
  Planned plan;
  ASSERT_GT(plan.workspace_size, 0u);
  Workspace ws(plan.workspace_size);
  ASSERT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, nullptr), 0);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(plan.gx.read(), plan.expected(0).grad_input);
  EXPECT_EQ(plan.gw.read(), plan.expected(0).grad_weight);
  EXPECT_EQ(plan.gb.read(), plan.expected(0).grad_bias);
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, nullptr), ACLNN_ERR_INNER);
  EXPECT_EQ(aclDestroyAclOpExecutor(plan.executor), ACLNN_ERR_INNER);
}

TEST(ConvExecution, RepeatableExecutorRunsWithNewDataUntilDestroyed) {
  Planned plan;
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(plan.executor), 0);
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), 0);
  Workspace ws(plan.workspace_size);
  for (int round = 0; round < 3; ++round) {
    plan.fill(round);  // new values in the same buffers
    ASSERT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, stream), 0);
    ASSERT_EQ(aclrtSynchronizeStream(stream), 0);
    EXPECT_EQ(plan.gx.read(), plan.expected(round).grad_input) << "round " << round;
    EXPECT_EQ(plan.gw.read(), plan.expected(round).grad_weight) << "round " << round;
    EXPECT_EQ(plan.gb.read(), plan.expected(round).grad_bias) << "round " << round;
  }
  EXPECT_EQ(aclDestroyAclOpExecutor(plan.executor), 0);
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, stream), ACLNN_ERR_INNER);
  EXPECT_EQ(aclrtDestroyStream(stream), 0);
}

TEST(ConvExecution, NullExecutor) {
  EXPECT_EQ(aclnnConvolutionBackward(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclnnConvTbcBackward(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

// A refused phase 2 (null workspace with a size, missing data, too small a workspace) frees a
// one-shot executor, as its run would have, and keeps a repeatable one for its owner.
TEST(ConvExecution, NullWorkspaceWithSizeIsRefused) {
  Planned one_shot;
  const std::vector<uint8_t> before = one_shot.gx.bytes();
  EXPECT_EQ(aclnnConvolutionBackward(nullptr, one_shot.workspace_size, one_shot.executor, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("workspace is nullptr"), std::string::npos);
  EXPECT_EQ(aclDestroyAclOpExecutor(one_shot.executor), ACLNN_ERR_INNER);  // already freed
  EXPECT_EQ(one_shot.gx.bytes(), before);

  Planned repeatable;
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(repeatable.executor), 0);
  EXPECT_EQ(aclnnConvolutionBackward(nullptr, repeatable.workspace_size, repeatable.executor, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  Workspace ws(repeatable.workspace_size);
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, repeatable.workspace_size, repeatable.executor, nullptr), 0);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(repeatable.gx.read(), repeatable.expected(0).grad_input);
  EXPECT_EQ(aclDestroyAclOpExecutor(repeatable.executor), 0);
}

// Phase 1 plans tensors created without data (as CANN's does); phase 2 refuses to run them.
TEST(ConvExecution, MissingDataIsPlannedThenRefusedAtRun) {
  for (const char* name : {"gradOutput", "input", "gradInput"}) {
    Planned plan({true, true, true}, name);
    ASSERT_NE(plan.executor, nullptr) << name;
    Workspace ws(plan.workspace_size);
    const std::vector<uint8_t> gw_before = plan.gw.bytes(), gb_before = plan.gb.bytes();
    EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    const std::string message = aclGetRecentErrMsg();
    EXPECT_NE(message.find("aclnnConvolutionBackward: " + std::string(name) + " has no data address"),
              std::string::npos)
        << message;
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
    EXPECT_EQ(plan.gw.bytes(), gw_before);  // nothing touched
    EXPECT_EQ(plan.gb.bytes(), gb_before);
    EXPECT_EQ(aclDestroyAclOpExecutor(plan.executor), ACLNN_ERR_INNER);  // one-shot: freed
  }
  // A tensor the mask leaves unused needs no data.
  Planned masked({false, true, true}, "gradInput");
  Workspace ws(masked.workspace_size);
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, masked.workspace_size, masked.executor, nullptr), 0);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(masked.gw.read(), masked.expected(0).grad_weight);
}

// CANN's own unit tests plan large layers with no memory behind them; so do we.
TEST(ConvExecution, LargeLayersPlanWithoutMemory) {
  struct Layer {
    Shape x, w, gy;
  } layers[] = {{{512, 512, 7, 7}, {2048, 512, 1, 1}, {512, 2048, 7, 7}},
                {{16, 64, 32, 112, 112}, {64, 64, 3, 3, 3}, {16, 64, 32, 112, 112}},
                {{64, 1024, 4096}, {1024, 1024, 3}, {64, 1024, 4096}}};
  for (const Layer& l : layers) {
    const size_t p = l.x.size() - 2;
    auto tensor = [](const Shape& shape) {
      const aclFormat format = shape.size() == 3   ? ACL_FORMAT_NCL
                               : shape.size() == 4 ? ACL_FORMAT_NCHW
                                                   : ACL_FORMAT_NCDHW;
      return aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT16, nullptr, 0, format, shape.data(), shape.size(),
                             nullptr);
    };
    aclTensor *x = tensor(l.x), *w = tensor(l.w), *gy = tensor(l.gy), *gx = tensor(l.x), *gw = tensor(l.w);
    const Shape bias_shape = {l.gy[1]};
    aclTensor* gb =
        aclCreateTensor(bias_shape.data(), 1, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, bias_shape.data(), 1, nullptr);
    const Shape ones(p, 1), pads(p, l.w[2] / 2), zeros(p, 0);
    aclIntArray* stride = aclCreateIntArray(ones.data(), p);
    aclIntArray* padding = aclCreateIntArray(pads.data(), p);
    aclIntArray* output_padding = aclCreateIntArray(zeros.data(), p);
    aclIntArray* bias_sizes = aclCreateIntArray(bias_shape.data(), 1);
    const bool all[3] = {true, true, true};
    aclBoolArray* mask = aclCreateBoolArray(all, 3);
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(
        aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, bias_sizes, stride, padding, stride, false, output_padding,
                                                 1, mask, 0, gx, gw, gb, &workspace_size, &executor),
        0)
        << aclGetRecentErrMsg();
    EXPECT_GT(workspace_size, 0u);
    EXPECT_EQ(aclnnConvolutionBackward(nullptr, 0, executor, nullptr), ACLNN_ERR_PARAM_NULLPTR);  // no data: refused
    for (aclTensor* t : {x, w, gy, gx, gw, gb}) aclDestroyTensor(t);
    for (aclIntArray* a : {stride, padding, output_padding, bias_sizes}) aclDestroyIntArray(a);
    aclDestroyBoolArray(mask);
  }
}

TEST(ConvExecution, WorkspaceSmallerThanReportedIsRefused) {
  Planned plan;
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(plan.executor), 0);
  Workspace ws(plan.workspace_size);
  const std::vector<uint8_t> before = plan.gw.bytes();
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size - 1, plan.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  const char* message = aclGetRecentErrMsg();
  ASSERT_NE(message, nullptr);
  EXPECT_NE(std::string(message).find("smaller than"), std::string::npos);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(plan.gw.bytes(), before);
  // The repeatable executor survives a refused run.
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, nullptr), 0);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(plan.gw.read(), plan.expected(0).grad_weight);
  EXPECT_EQ(aclDestroyAclOpExecutor(plan.executor), 0);
}

TEST(ConvExecution, UnknownStreamIsARuntimeError) {
  Planned plan;
  Workspace ws(plan.workspace_size);
  int not_a_stream = 0;
  EXPECT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, &not_a_stream),
            ACLNN_ERR_RUNTIME_ERROR);
}

TEST(ConvExecution, MaskedOutputsAreNeverTouched) {
  for (int i = 0; i < 3; ++i) {
    std::array<bool, 3> mask = {true, true, true};
    mask[static_cast<size_t>(i)] = false;
    Planned plan(mask);
    const std::vector<std::vector<uint8_t>> before = {plan.gx.bytes(), plan.gw.bytes(), plan.gb.bytes()};
    Workspace ws(plan.workspace_size);
    ASSERT_EQ(aclnnConvolutionBackward(ws.ptr, plan.workspace_size, plan.executor, nullptr), 0);
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
    const std::vector<std::vector<uint8_t>> after = {plan.gx.bytes(), plan.gw.bytes(), plan.gb.bytes()};
    for (int j = 0; j < 3; ++j) EXPECT_EQ(after[j] == before[j], j == i) << "mask off " << i << ", output " << j;
  }
}

TEST(ConvExecution, NothingRequestedNeedsNoWorkspace) {
  Planned plan({false, false, false});
  EXPECT_EQ(plan.workspace_size, 0u);
  EXPECT_EQ(aclnnConvolutionBackward(nullptr, 0, plan.executor, nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
}

// ---- empty tensors: the true gradients ----------------------------------------------------------

ConvSpec empty_spec(int64_t n, int64_t cin, int64_t cout, Shape size, Shape k) {
  ConvSpec s;
  s.spatial = static_cast<int>(size.size());
  s.batch = n, s.in_channels = cin, s.out_channels = cout;
  s.input_size = size, s.kernel = k;
  s.stride = s.dilation = Shape(size.size(), 1);
  s.pad_lo = s.pad_hi = s.output_padding = Shape(size.size(), 0);
  return s;
}

TEST(ConvEmpty, ZeroBatchGivesZeroWeightAndBiasGradients) {
  const ConvSpec s = empty_spec(0, 3, 4, {5, 5}, {3, 3});
  RunOptions o;
  o.output_layout = Layout::kStrided;
  const RunResult r = run_convolution_backward(s, o, {}, pattern(4 * 3 * 9, 2), {});
  ASSERT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(r.grads.grad_input.size(), 0u);
  EXPECT_EQ(r.grads.grad_weight, std::vector<double>(4 * 3 * 9, 0.0));
  EXPECT_EQ(r.grads.grad_bias, std::vector<double>(4, 0.0));
}

TEST(ConvEmpty, ZeroInputChannelsStillSumGradOutputIntoGradBias) {
  // CANN writes zeros here; the true gradient of the bias is the sum of gradOutput.
  const ConvSpec s = empty_spec(2, 0, 3, {4}, {2});
  const std::vector<double> gy = pattern(2 * 3 * 3, 3);
  RunOptions o;
  const RunResult r = run_convolution_backward(s, o, {}, {}, gy);
  ASSERT_EQ(r.status, 0) << r.error;
  const ConvGrads want = oracle_backward(s, {}, {}, gy);
  EXPECT_EQ(r.grads.grad_bias, want.grad_bias);
  EXPECT_NE(want.grad_bias, std::vector<double>(3, 0.0));
}

TEST(ConvEmpty, TransposedZeroBatch) {
  ConvSpec s = empty_spec(0, 4, 6, {3, 3}, {2, 2});
  s.transposed = true;
  s.groups = 2;
  s.stride = {2, 2};
  RunOptions o;
  const RunResult r = run_convolution_backward(s, o, {}, pattern(4 * 3 * 4, 2), {});
  ASSERT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(r.grads.grad_weight, std::vector<double>(4 * 3 * 4, 0.0));
  EXPECT_EQ(r.grads.grad_bias, std::vector<double>(6, 0.0));
}

// A direct conv1d, 2 groups, whose input (1, 0, 2^62 - 1) is empty (its data null) with a plane far
// too large for a pointer offset; the empty path checks no output size, so a 4-wide gradOutput is
// accepted. gradInput and gradWeight are empty (nothing to write); gradBias is each channel's sum.
void run_zero_input_channels_with_a_huge_plane(int64_t stride, const std::vector<int64_t>& x_strides) {
  const int64_t width = (int64_t{1} << 62) - 1, empty = 0, gy_storage = 8;
  const std::vector<int64_t> x_shape = {1, 0, width};
  const std::vector<int64_t> w_shape = {2, 0, 1}, w_strides = {0, 1, 1};
  const std::vector<int64_t> gy_shape = {1, 2, 4}, gy_strides = {8, 4, 1};
  std::vector<float> gy_data = {1, 2, 3, 4, 5, 6, 7, 8};
  auto tensor = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, const int64_t* storage,
                   void* data) {
    return aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_NCL, storage, 1, data);
  };
  aclTensor* x = tensor(x_shape, x_strides, &empty, nullptr);
  aclTensor* gx = tensor(x_shape, x_strides, &empty, nullptr);
  aclTensor* w = tensor(w_shape, w_strides, &empty, nullptr);
  aclTensor* gw = tensor(w_shape, w_strides, &empty, nullptr);
  aclTensor* gy = tensor(gy_shape, gy_strides, &gy_storage, gy_data.data());
  std::vector<float> gb_data = {-1, -1};  // gradBias: each channel's sum of gradOutput
  const int64_t bias_size = 2, one = 1;
  aclTensor* gb = aclCreateTensor(&bias_size, 1, ACL_FLOAT, &one, 0, ACL_FORMAT_ND, &bias_size, 1, gb_data.data());
  aclIntArray* bias_sizes = aclCreateIntArray(&bias_size, 1);
  const int64_t pad = 0, dilation = 2, output_padding = 0;
  aclIntArray* stride_array = aclCreateIntArray(&stride, 1);
  aclIntArray* pad_array = aclCreateIntArray(&pad, 1);
  aclIntArray* dilation_array = aclCreateIntArray(&dilation, 1);
  aclIntArray* output_padding_array = aclCreateIntArray(&output_padding, 1);
  const bool mask[] = {true, true, true};
  aclBoolArray* mask_array = aclCreateBoolArray(mask, 3);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  ASSERT_EQ(
      aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, bias_sizes, stride_array, pad_array, dilation_array, false,
                                               output_padding_array, 2, mask_array, 0, gx, gw, gb, &size, &executor),
      0)
      << aclGetRecentErrMsg();
  std::vector<unsigned char> workspace(static_cast<size_t>(size) + 1, 0xFF);  // NaN: unwritten scratch shows
  EXPECT_EQ(aclnnConvolutionBackward(workspace.data(), size, executor, nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(gb_data, (std::vector<float>{1 + 2 + 3 + 4, 5 + 6 + 7 + 8}));
  for (aclTensor* t : {x, gx, w, gw, gy, gb}) aclDestroyTensor(t);
  for (aclIntArray* a : {stride_array, pad_array, dilation_array, output_padding_array, bias_sizes})
    aclDestroyIntArray(a);
  aclDestroyBoolArray(mask_array);
}

TEST(ConvEmpty, ZeroInputChannelsWithAHugePlane) {
  // The fuzzer's first such problem: the flipped forward gradInput had cut the plane into tiles and
  // formed a pointer per tile from the null result (undefined behaviour, an abort under the sanitizer
  // presets).
  run_zero_input_channels_with_a_huge_plane(1, {0, (int64_t{1} << 62) - 1, 1});
}

TEST(ConvEmpty, ZeroInputChannelsWithAHugeStride) {
  // The fuzzer's second: stride 3 and the empty input's entries 2^62 - 1 apart along W; the small-group
  // gradWeight staged slices of that input for its empty result and multiplied the two (a signed
  // overflow). An empty result now gets no step at all.
  run_zero_input_channels_with_a_huge_plane(3, {0, 1, (int64_t{1} << 62) - 1});
}

TEST(ConvEmpty, ZeroBatchWithAHugeStrideGivesZeroWeightGradient) {
  // The fuzzer's third: a conv3d of batch 0 with a depth stride of 2^63 - 1 and a 2-deep gradOutput
  // (the empty path checks no output size). gradWeight sums over no sample: zeros. The GEMM
  // gradWeight had sized its source window from that stride (a signed overflow); a gradient whose
  // inputs are empty now gets a step that writes zeros, and no kernel sees the problem.
  const int64_t huge = INT64_MAX, none = 0, weight_count = 2 * 2 * 1 * 3 * 3;
  const std::vector<int64_t> x_shape = {0, 2, 1, 7, 6}, x_strides = {84, 42, 42, 6, 1};
  const std::vector<int64_t> gy_shape = {0, 2, 2, 2, 8}, gy_strides = {64, 32, 16, 8, 1};
  const std::vector<int64_t> w_shape = {2, 2, 1, 3, 3}, w_strides = {18, 9, 9, 3, 1};
  std::vector<float> w_data(weight_count, 0.5f), gw_data(weight_count, -1.0f);
  auto tensor = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t storage,
                   void* data) {
    return aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_NCDHW, &storage, 1,
                           data);
  };
  aclTensor* x = tensor(x_shape, x_strides, none, nullptr);
  aclTensor* gy = tensor(gy_shape, gy_strides, none, nullptr);
  aclTensor* w = tensor(w_shape, w_strides, weight_count, w_data.data());
  aclTensor* gw = tensor(w_shape, w_strides, weight_count, gw_data.data());
  const int64_t stride[] = {huge, 3, 1}, pad[] = {2, 1, 2}, dilation[] = {1, 2, 1}, output_padding[] = {0, 0, 0};
  const int64_t bias_size = 2;
  aclIntArray* arrays[] = {aclCreateIntArray(stride, 3), aclCreateIntArray(pad, 3), aclCreateIntArray(dilation, 3),
                           aclCreateIntArray(output_padding, 3), aclCreateIntArray(&bias_size, 1)};
  const bool mask[] = {false, true, false};
  aclBoolArray* mask_array = aclCreateBoolArray(mask, 3);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  ASSERT_EQ(
      aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, arrays[4], arrays[0], arrays[1], arrays[2], false, arrays[3],
                                               1, mask_array, 0, nullptr, gw, nullptr, &size, &executor),
      0)
      << aclGetRecentErrMsg();
  std::vector<unsigned char> workspace(static_cast<size_t>(size) + 1, 0xFF);  // NaN: unwritten scratch shows
  EXPECT_EQ(aclnnConvolutionBackward(workspace.data(), size, executor, nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(gw_data, std::vector<float>(weight_count, 0.0f));
  for (aclTensor* t : {x, gy, w, gw}) aclDestroyTensor(t);
  for (aclIntArray* a : arrays) aclDestroyIntArray(a);
  aclDestroyBoolArray(mask_array);
}

}  // namespace
}  // namespace testing_support

namespace testing_support {
namespace {

// Outputs whose views overlap themselves are accepted (as CANN does) and written as if element
// by element in view order: where elements share storage the last one wins, for any thread
// count and any implementation (this file also runs with ACLNN_CONVBWD_KERNELS=ref).
TEST(ConvOverlappingOutputs, LastWriteInViewOrderWins) {
  ConvSpec s;
  s.spatial = 2, s.batch = 3, s.in_channels = 4, s.out_channels = 6, s.groups = 2;
  s.input_size = {5, 6}, s.kernel = {3, 3}, s.stride = {1, 2}, s.dilation = {1, 1};
  s.pad_lo = s.pad_hi = {1, 1};
  const std::vector<double> x = pattern(product(s.input_shape()), 1), w = pattern(product(s.weight_shape()), 2);
  const std::vector<double> gy = pattern(product(s.grad_output_shape()), 3);
  const ConvGrads want = oracle_backward(s, x, w, gy);
  const struct {
    const char* name;
    std::vector<int64_t> gx, gw, gb;
  } aliasings[] = {
      {"batch and bias broadcast (stride 0)", {0, 30, 6, 1}, {18, 9, 3, 1}, {0}},
      {"interleaved rows", {120, 30, 1, 1}, {9, 9, 3, 1}, {1}},  // gx: w and h steps alias
      {"channels on one plane", {30, 0, 6, 1}, {0, 0, 0, 1}, {2}},
  };
  for (const auto& a : aliasings) {
    for (aclDataType dtype : {ACL_FLOAT, ACL_BF16}) {
      RunOptions o;
      o.grad_input_strides = a.gx, o.grad_weight_strides = a.gw, o.grad_bias_strides = a.gb;
      o.grad_input_dtype = o.grad_weight_dtype = o.grad_bias_dtype = dtype;
      const RunResult r = run_convolution_backward(s, o, x, w, gy);
      ASSERT_EQ(r.status, 0) << a.name << ": " << r.error;
      EXPECT_EQ(r.grads.grad_input, last_writes(rounded(want.grad_input, dtype), r.output_offsets[0])) << a.name;
      EXPECT_EQ(r.grads.grad_weight, last_writes(rounded(want.grad_weight, dtype), r.output_offsets[1])) << a.name;
      EXPECT_EQ(r.grads.grad_bias, last_writes(rounded(want.grad_bias, dtype), r.output_offsets[2])) << a.name;
    }
  }
}

// TBC: view order is the user's (T, B, C), not the kernels' (B, C, T).
TEST(ConvOverlappingOutputs, TbcFollowsTheUsersDimOrder) {
  const TbcSpec s{5, 2, 3, 4, 3, 1};
  const std::vector<double> x = pattern(s.time * s.batch * s.in_channels, 1);
  const std::vector<double> w = pattern(s.kernel * s.in_channels * s.out_channels, 2);
  const std::vector<double> gy = pattern(s.out_time() * s.batch * s.out_channels, 3);
  const ConvGrads want = oracle_tbc_backward(s, x, w, gy);
  RunOptions o;
  o.grad_input_strides = {1, 1, 0};   // element t + b: (t, b) pairs collide, t outermost decides
  o.grad_weight_strides = {1, 1, 1};  // k + ci + co
  o.grad_bias_strides = {0};
  const RunResult r = run_conv_tbc_backward(s, o, x, w, gy);
  ASSERT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(r.grads.grad_input, last_writes(rounded(want.grad_input, ACL_FLOAT), r.output_offsets[0]));
  EXPECT_EQ(r.grads.grad_weight, last_writes(rounded(want.grad_weight, ACL_FLOAT), r.output_offsets[1]));
  EXPECT_EQ(r.grads.grad_bias, last_writes(rounded(want.grad_bias, ACL_FLOAT), r.output_offsets[2]));
}

}  // namespace
}  // namespace testing_support
