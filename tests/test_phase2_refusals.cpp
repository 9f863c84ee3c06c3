// Phase 2 refuses, before it touches anything, tensors whose addresses it cannot work with: an
// output that shares memory with an input or another output, and a data address that is not a
// multiple of the element size (161002 and a message naming the tensors). Outputs whose elements
// only interleave with another tensor's (channel slices of one buffer) are computed as usual.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "support/conv_oracle.h"
#include "support/device_tensor.h"

namespace testing_support {
namespace {

// A 1-D layer (N 2, C 3 -> 4, L 6, k 3, pad 1, stride 1) whose six tensors are views into one float
// buffer, each at the element offset and with the strides its test gives.
struct View {
  int64_t offset;
  std::vector<int64_t> strides;  // empty: dense
};
struct Layer {
  std::vector<float> buffer = std::vector<float>(4096, 0.0f);
  ConvSpec spec;
  aclTensor *gy = nullptr, *x = nullptr, *w = nullptr, *gx = nullptr, *gw = nullptr, *gb = nullptr;

  // `byte_shift`: every tensor's data address moved by that many bytes (a misaligned buffer).
  Layer(const View& gy_at, const View& x_at, const View& w_at, const View& gx_at, const View& gw_at, const View& gb_at,
        size_t byte_shift = 0) {
    spec.spatial = 1, spec.batch = 2, spec.in_channels = 3, spec.out_channels = 4;
    spec.input_size = {6}, spec.kernel = {3}, spec.stride = {1}, spec.dilation = {1};
    spec.pad_lo = spec.pad_hi = {1};
    char* base = reinterpret_cast<char*>(buffer.data()) + byte_shift;
    auto make = [&](const std::vector<int64_t>& shape, const View& at, aclFormat format) {
      std::vector<int64_t> strides = at.strides;
      if (strides.empty()) {
        strides.assign(shape.size(), 1);
        for (size_t i = shape.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * shape[i];
      }
      const int64_t storage = 4096 - 16;
      return aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), at.offset, format, &storage, 1,
                             base);
    };
    gy = make(spec.grad_output_shape(), gy_at, ACL_FORMAT_NCL);
    x = make(spec.input_shape(), x_at, ACL_FORMAT_NCL);
    w = make(spec.weight_shape(), w_at, ACL_FORMAT_NCL);
    gx = make(spec.input_shape(), gx_at, ACL_FORMAT_NCL);
    gw = make(spec.weight_shape(), gw_at, ACL_FORMAT_NCL);
    gb = make({4}, gb_at, ACL_FORMAT_ND);
  }
  ~Layer() {
    for (aclTensor* t : {gy, x, w, gx, gw, gb}) aclDestroyTensor(t);
  }
  // Fills the inputs through their views (which may be interleaved with the outputs).
  void fill(const View& gy_at, const View& x_at, const View& w_at, const std::vector<double>& gy_values,
            const std::vector<double>& x_values, const std::vector<double>& w_values) {
    write(spec.grad_output_shape(), gy_at, gy_values);
    write(spec.input_shape(), x_at, x_values);
    write(spec.weight_shape(), w_at, w_values);
  }
  std::vector<double> read(const std::vector<int64_t>& shape, const View& at) const {
    std::vector<double> out;
    for_each(shape, at, [&](int64_t element) { out.push_back(buffer[static_cast<size_t>(element)]); });
    return out;
  }
  // Runs both phases; returns phase 2's status (phase 1 must succeed) and keeps its message.
  aclnnStatus run(std::string* message) {
    const int64_t one = 1, zero = 0, four = 4;
    aclIntArray* s = aclCreateIntArray(&one, 1);
    aclIntArray* op = aclCreateIntArray(&zero, 1);
    aclIntArray* bias = aclCreateIntArray(&four, 1);
    const bool m[3] = {true, true, true};
    aclBoolArray* mask = aclCreateBoolArray(m, 3);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, bias, s, s, s, false, op, 1, mask, 0, gx, gw, gb,
                                                       &size, &executor),
              0)
        << aclGetRecentErrMsg();
    std::vector<unsigned char> workspace(static_cast<size_t>(size) + 1, 0xFF);
    aclnnStatus status = aclnnConvolutionBackward(workspace.data(), size, executor, nullptr);
    if (status == 0) status = aclrtSynchronizeStream(nullptr);
    if (status != 0) *message = aclGetRecentErrMsg();
    aclDestroyIntArray(s);
    aclDestroyIntArray(op);
    aclDestroyIntArray(bias);
    aclDestroyBoolArray(mask);
    return status;
  }

 private:
  template <typename Body>
  static void for_each(const std::vector<int64_t>& shape, const View& at, Body body) {
    std::vector<int64_t> strides = at.strides;
    if (strides.empty()) {
      strides.assign(shape.size(), 1);
      for (size_t i = shape.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * shape[i];
    }
    const int64_t count = product(shape);
    for (int64_t logical = 0; logical < count; ++logical) {
      int64_t rest = logical, element = at.offset;
      for (size_t i = shape.size(); i-- > 0;) {
        element += rest % shape[i] * strides[i];
        rest /= shape[i];
      }
      body(element);
    }
  }
  void write(const std::vector<int64_t>& shape, const View& at, const std::vector<double>& values) {
    size_t i = 0;
    for_each(shape, at,
             [&](int64_t element) { buffer[static_cast<size_t>(element)] = static_cast<float>(values[i++]); });
  }
};

// Dense tensors one after another from element 0 (gy 48, x 36, w 36, gx 36, gw 36, gb 4 elements).
const View kGy{0, {}}, kX{48, {}}, kW{84, {}}, kGx{120, {}}, kGw{156, {}}, kGb{192, {}};

// `other` the tensor's name, `role` "an input" or "another output".
void expect_refused_untouched(Layer& layer, const char* output, const char* other, const char* role) {
  const std::vector<float> before = layer.buffer;
  std::string message;
  EXPECT_EQ(layer.run(&message), 161002);
  EXPECT_NE(message.find("aclnnConvolutionBackward: "), std::string::npos) << message;
  EXPECT_NE(message.find(std::string(output) + " (bytes ["), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("shares memory with ") + other + " (bytes ["), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("), ") + role + "): an output may not overlap"), std::string::npos) << message;
  EXPECT_TRUE(layer.buffer == before) << "the buffer was written";
}

TEST(Phase2Refusals, GradInputOverInputIsRefused) {
  Layer layer(kGy, kX, kW, kX, kGw, kGb);
  expect_refused_untouched(layer, "gradInput", "input", "an input");
}

TEST(Phase2Refusals, GradInputOverlappingGradOutputIsRefused) {
  Layer layer(kGy, kX, kW, View{40, {}}, kGw, kGb);  // gradInput's first 8 elements are gradOutput's last
  expect_refused_untouched(layer, "gradInput", "gradOutput", "an input");
}

TEST(Phase2Refusals, OutputsOverlappingEachOtherAreRefused) {
  Layer layer(kGy, kX, kW, kGx, kGw, View{190, {}});  // gradBias starts inside gradWeight
  expect_refused_untouched(layer, "gradWeight", "gradBias", "another output");
}

TEST(Phase2Refusals, WeightReadAsGradWeightWrittenIsRefused) {
  Layer layer(kGy, kX, kW, kGx, View{84, {9, 3, 1}}, kGb);
  expect_refused_untouched(layer, "gradWeight", "weight", "an input");
}

TEST(Phase2Refusals, MisalignedDataIsRefused) {
  Layer layer(kGy, kX, kW, kGx, kGw, kGb, 2);  // every float at an address 2 bytes off
  const std::vector<float> before = layer.buffer;
  std::string message;
  EXPECT_EQ(layer.run(&message), 161002);
  EXPECT_NE(message.find("gradOutput data address"), std::string::npos) << message;
  EXPECT_NE(message.find("is not a multiple of its element size 4 (FLOAT)"), std::string::npos) << message;
  EXPECT_TRUE(layer.buffer == before);
}

// gradInput and gradOutput as channel slices of one (N, 7, L) buffer, as a concatenation's gradient
// is: their spans overlap, their elements do not. Accepted, and the numbers are the oracle's.
TEST(Phase2Refusals, InterleavedChannelSlicesAreComputed) {
  const View gy_slice{18, {42, 6, 1}}, gx_slice{0, {42, 6, 1}};
  Layer layer(gy_slice, View{100, {}}, View{136, {}}, gx_slice, View{172, {}}, View{208, {}});
  const std::vector<double> gy = pattern(product(layer.spec.grad_output_shape()), 3);
  const std::vector<double> x = pattern(product(layer.spec.input_shape()), 1);
  const std::vector<double> w = pattern(product(layer.spec.weight_shape()), 2);
  layer.fill(gy_slice, View{100, {}}, View{136, {}}, gy, x, w);
  std::string message;
  ASSERT_EQ(layer.run(&message), 0) << message;
  const ConvGrads want = oracle_backward(layer.spec, x, w, gy);
  EXPECT_EQ(layer.read(layer.spec.input_shape(), gx_slice), want.grad_input);
  EXPECT_EQ(layer.read(layer.spec.weight_shape(), View{172, {}}), want.grad_weight);
  EXPECT_EQ(layer.read({4}, View{208, {}}), want.grad_bias);
  EXPECT_EQ(layer.read(layer.spec.grad_output_shape(), gy_slice), gy);  // the input is left as it was
}

// Inputs may share memory with each other: they are only read.
TEST(Phase2Refusals, InputsMayShareMemory) {
  Layer layer(kGy, View{0, {}}, kW, kGx, kGw, kGb);  // input over gradOutput's first 36 elements
  std::string message;
  EXPECT_EQ(layer.run(&message), 0) << message;
}

}  // namespace
}  // namespace testing_support
