#include "kernels/common/finite.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/dtype.h"
#include "kernels/common/pack.h"

namespace aclnn_cpu {
namespace {

// Element bits whose exponent field is all ones (Inf or NaN) get their top bit set by adding one
// exponent step to the exponent field: OR over a run, then one test. (A loop of ORs vectorises.)
template <typename Bits, Bits kExponent, Bits kStep>
bool finite_bits(const void* data, int64_t count) {
  const auto* bits = static_cast<const Bits*>(data);
  Bits seen = 0;
  for (int64_t i = 0; i < count; ++i) seen |= static_cast<Bits>((bits[i] & kExponent) + kStep);
  return (seen >> (sizeof(Bits) * 8 - 1)) == 0;
}

// A contiguous run of `count` elements from element `first`, read without rounding.
bool finite_run(const View5& view, int64_t first, int64_t count) {
  const size_t size = dtype_size(view.dtype);
  const void* at = static_cast<const unsigned char*>(view.data) + first * static_cast<int64_t>(size);
  switch (view.dtype) {
    case ACL_FLOAT16: return finite_bits<uint16_t, 0x7c00, 0x0400>(at, count);
    case ACL_BF16: return finite_bits<uint16_t, 0x7f80, 0x0080>(at, count);
    default: return finite_bits<uint32_t, 0x7f800000u, 0x00800000u>(at, count);
  }
}

// Planes (n, c0 .. c0 + channels - 1) of a view read at its strides, without rounding (the test of
// finite_bits, element by element).
template <typename Bits, Bits kExponent, Bits kStep>
bool finite_strided(const View5& view, int64_t n, int64_t c0, int64_t channels) {
  const auto* bits = static_cast<const Bits*>(view.data);
  const int64_t step = view.stride[4];
  Bits seen = 0;
  for (int64_t c = c0; c < c0 + channels; ++c) {
    for (int64_t d = 0; d < view.shape[2]; ++d) {
      for (int64_t h = 0; h < view.shape[3]; ++h) {
        const Bits* row = bits + view.element(n, c, d, h, 0);
        for (int64_t w = 0; w < view.shape[4]; ++w) seen |= static_cast<Bits>((row[w * step] & kExponent) + kStep);
      }
    }
  }
  return (seen >> (sizeof(Bits) * 8 - 1)) == 0;
}

}  // namespace

bool all_finite(const float* values, int64_t count) {
  return finite_bits<uint32_t, 0x7f800000u, 0x00800000u>(values, count);
}

bool all_finite(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t channels) {
  const int64_t plane = view.shape[2] * view.shape[3] * view.shape[4];
  if (channels <= 0 || plane == 0) return true;
  // FLOAT16 values stay what they are when rounded to FLOAT16.
  const bool as_stored = math == MathMode::kFull || view.dtype == ACL_FLOAT16;
  if (as_stored && is_dense(view)) return finite_run(view, view.element(n, c0, 0, 0, 0), channels * plane);
  if (as_stored) {  // (a strided view, ConvTbc's say: its stored bits at its strides)
    switch (view.dtype) {
      case ACL_FLOAT: return finite_strided<uint32_t, 0x7f800000u, 0x00800000u>(view, n, c0, channels);
      case ACL_FLOAT16: return finite_strided<uint16_t, 0x7c00, 0x0400>(view, n, c0, channels);
      case ACL_BF16: return finite_strided<uint16_t, 0x7f80, 0x0080>(view, n, c0, channels);
      default: break;
    }
  }
  float values[256];
  for (int64_t c = c0; c < c0 + channels; ++c) {
    for (int64_t first = 0; first < plane; first += 256) {
      const int64_t count = std::min<int64_t>(256, plane - first);
      // (rounded as the kernels round; math rounds here, which the kits' conversions do not: none)
      read_plane_floats(view, math, n, c, first, count, values, nullptr);
      for (int64_t i = 0; i < count; ++i) {
        if (!std::isfinite(values[i])) return false;
      }
    }
  }
  return true;
}

}  // namespace aclnn_cpu
