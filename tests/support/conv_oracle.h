// Test oracle: convolution gradients computed naively in double, straight from the definitions
// of the direct and the transposed convolution (scatter form). It shares no code with the
// library's kernels, which work in gather form on a role-swapped direct problem.
#pragma once

#include <cstdint>
#include <vector>

namespace testing_support {

struct ConvSpec {
  int spatial = 2;  // 1, 2 or 3
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  std::vector<int64_t> input_size;  // spatial size of the operator's `input`
  std::vector<int64_t> kernel, stride, dilation;
  std::vector<int64_t> pad_lo, pad_hi;  // leading / trailing padding per spatial dim
  bool transposed = false;
  std::vector<int64_t> output_padding;  // transposed only

  // Spatial size of gradOutput (the forward output).
  std::vector<int64_t> output_size() const;
  std::vector<int64_t> input_shape() const;        // (N, Cin, input_size...)
  std::vector<int64_t> weight_shape() const;       // direct (Cout, Cin/g, k), transposed (Cin, Cout/g, k)
  std::vector<int64_t> grad_output_shape() const;  // (N, Cout, output_size...)
};

struct ConvGrads {
  std::vector<double> grad_input, grad_weight, grad_bias;
};

ConvGrads oracle_backward(const ConvSpec& spec, const std::vector<double>& input, const std::vector<double>& weight,
                          const std::vector<double>& grad_output);

// A spec from its fields: `op` empty gives zero output padding.
ConvSpec make_spec(int spatial, int64_t n, int64_t cin, int64_t cout, int64_t groups, std::vector<int64_t> size,
                   std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> lo, std::vector<int64_t> hi,
                   std::vector<int64_t> d, bool transposed = false, std::vector<int64_t> op = {});

// The forward result (the operator's output, shaped like gradOutput) + bias (empty: none).
std::vector<double> oracle_forward(const ConvSpec& spec, const std::vector<double>& input,
                                   const std::vector<double>& weight, const std::vector<double>& bias);

int64_t product(const std::vector<int64_t>& values);

}  // namespace testing_support
