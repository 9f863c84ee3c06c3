// What the quantized convolution's entries compute (aclnnQuantConvolution, docs/quant_convolution.md):
// the operator's own problem and entries, and the float steps every entry takes after its integer sums.
//
// With Cg = Cin / groups and g = o / (Cout / groups), for output channel o at output position (od, oh, ow):
//   acc = sum_{ci < Cg, kd, kh, kw} weight[o, ci, kd, kh, kw] * x[n, g*Cg + ci, od*sD - pD + kd*dD, ...]
// in int32 modulo 2^32 (the INT8 products are exact and so is every partial sum while |acc| < 2^31, that
// is always when Cg*KD*KH*KW < 131072; past that the sum wraps as the hardware's int32 accumulator does,
// and any order of the terms gives the same wrapped value); x is `pad_value` outside the image. Then in
// float, each step rounded to nearest even and none fused (the files that compute them are compiled
// without contraction: src/CMakeLists.txt):
//   float bias (FLOAT, FLOAT16, BF16 widened exactly): output = round16(float(acc) * scale[o] + bias[o])
//   INT32 bias:                                          output = round16(float(acc + bias[o]) * scale[o])
// round16 rounding to the output's FLOAT16 or BF16. (Atlas A2's vector dequantization, and Ascend 950's
// order for an INT32 bias.)
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <memory>

#include "acl/acl_base.h"
#include "kernels/core/conv_problem.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/core/entry_list.h"
#include "kernels/core/list_plan.h"

namespace aclnn_cpu {

struct QuantProblem {
  ConvGeometry geometry;  // a 2-D problem has a leading unit spatial dim
  View5 input;            // INT8 (N, Cin, D, H, W)
  View5 weight;           // INT8 (Cout, Cg, KD, KH, KW)
  View5 output;           // FLOAT16 or BF16 (N, Cout, OD, OH, OW)
  View5 scale;            // (1, Cout, 1, 1, 1): FLOAT, INT64 or UINT64
  View5 bias;             // (1, Cout, 1, 1, 1): FLOAT, FLOAT16, BF16 or INT32
  int8_t pad_value = 0;   // what x reads outside the image
  int max_threads = 1;    // threads phase 2 may use, fixed at phase 1
};

// One output channel's dequantization, read from the scale and bias tensors at phase 2.
struct ChannelDequant {
  float scale = 1;
  float bias = 0;        // a float bias (zero with an INT32 one)
  int32_t int_bias = 0;  // an INT32 bias (zero with a float one)
  bool integer_bias = false;
};

// The scale an INT64 or UINT64 scale element holds: the float whose bits are its low 32 bits, with the
// 13 lowest mantissa bits cleared (the 19 bits Ascend's fixpipe multiplies with; the bits above 31 hold
// flags and an offset that only its requantizing modes read).
inline float packed_scale(uint64_t packed) {
  const uint32_t bits = static_cast<uint32_t>(packed) & 0xFFFFE000u;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline ChannelDequant channel_dequant(const QuantProblem& p, int64_t channel) {
  ChannelDequant d;
  const int64_t s = p.scale.offset + channel * p.scale.stride[1];
  switch (p.scale.dtype) {
    case ACL_INT64:
    case ACL_UINT64: d.scale = packed_scale(static_cast<const uint64_t*>(p.scale.data)[s]); break;
    default: d.scale = static_cast<const float*>(p.scale.data)[s];
  }
  const int64_t b = p.bias.offset + channel * p.bias.stride[1];
  switch (p.bias.dtype) {
    case ACL_INT32:
      d.int_bias = static_cast<const int32_t*>(p.bias.data)[b];
      d.integer_bias = true;
      break;
    case ACL_FLOAT16: d.bias = static_cast<float>(static_cast<const Eigen::half*>(p.bias.data)[b]); break;
    case ACL_BF16: d.bias = static_cast<float>(static_cast<const Eigen::bfloat16*>(p.bias.data)[b]); break;
    default: d.bias = static_cast<const float*>(p.bias.data)[b];
  }
  return d;
}

// a + b in int32 modulo 2^32.
inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// The float steps above, up to round16, for one channel's scale and bias.
inline float dequantize(int32_t acc, float scale, float bias, int32_t int_bias, bool integer_bias) {
  if (integer_bias) return static_cast<float>(wrapping_add(acc, int_bias)) * scale;
  const float scaled = static_cast<float>(acc) * scale;
  return scaled + bias;
}
inline float dequantize(int32_t acc, const ChannelDequant& d) {
  return dequantize(acc, d.scale, d.bias, d.int_bias, d.integer_bias);
}

// round16: the bits of `value` rounded to BF16 (`bf16`) or FLOAT16, to nearest even (past the largest
// finite value: infinity); a NaN gives the quiet NaN of its sign (0x7FC0 or 0x7E00), whatever its payload.
inline uint16_t round16_bits(float value, bool bf16) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>(bits >> 16 & 0x8000u);
  if (value != value) return static_cast<uint16_t>(sign | (bf16 ? 0x7FC0u : 0x7E00u));
  if (bf16) return static_cast<uint16_t>((bits + 0x7FFFu + (bits >> 16 & 1u)) >> 16);
  const Eigen::half half(value);  // (Eigen rounds to nearest even, in software or with F16C)
  uint16_t out;
  std::memcpy(&out, &half, sizeof out);
  return out;
}

// round16 of `value` stored at out[index] (out FLOAT16 or BF16).
inline void store_rounded(const View5& out, int64_t index, float value) {
  static_cast<uint16_t*>(out.data)[index] = round16_bits(value, out.dtype == ACL_BF16);
}

// An entry of the operator's one list (kernels/quant/implementations.cpp).
struct QuantImpl {
  const char* name;
  const char* family;
  Support (*supports)(const QuantProblem& problem, const CpuFeatures& cpu);
  std::unique_ptr<OperatorStep> (*plan)(const QuantProblem& problem, StepBuilder& builder);
};

}  // namespace aclnn_cpu
