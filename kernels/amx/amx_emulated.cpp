// The tile operations in portable C++, exactly as TDPBF16PS computes (amx.h): the reference the
// hardware is checked against, and the path every test runs on machines without AMX.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/amx/amx.h"
#include "kernels/amx/amx_tiles.h"

namespace aclnn_cpu {
namespace {

float float_of(uint32_t bits) {
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
// A BF16 value (the high 16 bits of `bits`, the low ones zero), a denormal one as zero of its sign.
float bf16_input(uint32_t bits) { return float_of((bits & 0x7F800000u) == 0 ? bits & 0x80000000u : bits); }

// x * y + z and x + y rounded once to float, flushed to zero of its sign where tiny as x86's FTZ finds
// it: below FLT_MIN after rounding to float's 24 bits with an unbounded exponent (a result that rounds
// to FLT_MIN only in denormal precision is flushed too). Where the float result is at most FLT_MIN
// (and not zero) the step is redone scaled by 2^32, where that rounding is the normal one; the operands
// are then far below 2^96 (a larger one's multiples could not cancel to so small a sum), so nothing overflows.
constexpr float kScale = 0x1p32f;
float flushed_if_tiny(float result, float scaled) {
  return std::fabs(scaled) < FLT_MIN * kScale ? std::copysign(0.0f, scaled) : result;
}
float fused(float x, float y, float z) {
  const float r = std::fmaf(x, y, z);
  if (r == 0.0f || std::fabs(r) > FLT_MIN) return r;
  const bool x_smaller = std::fabs(x) <= std::fabs(y);
  return flushed_if_tiny(r, std::fmaf(x_smaller ? x * kScale : x, x_smaller ? y : y * kScale, z * kScale));
}
float added(float x, float y) {
  const float r = x + y;
  if (r == 0.0f || std::fabs(r) > FLT_MIN) return r;
  return flushed_if_tiny(r, x * kScale + y * kScale);
}

struct EmulatedAmxTiles : AmxTilesAsStaged {
  uint32_t tile[8][kAmxRows][kAmxPairs] = {};  // 16 rows of 64 bytes each
  float* c_block = nullptr;
  int64_t c_stride = 0;

  void begin_c(float* c, int64_t ldc_bytes, bool load_it) {
    c_block = c, c_stride = ldc_bytes;
    if (!load_it) std::memset(tile, 0, 4 * sizeof tile[0]);
    for (int t = 0; t < 4 && load_it; ++t)
      load(t, reinterpret_cast<const char*>(c) + (t / 2) * kAmxRows * ldc_bytes + (t % 2) * 64, ldc_bytes);
  }
  void load(int t, const void* p, int64_t stride) {
    for (int64_t r = 0; r < kAmxRows; ++r) std::memcpy(tile[t][r], static_cast<const char*>(p) + r * stride, 64);
  }
  void load_ab(const void* a0, const void* a1, int64_t a_stride, const void* b0, const void* b1, int64_t b_stride,
               bool /*b_prepared*/) {
    load(4, a0, a_stride), load(5, a1, a_stride), load(6, b0, b_stride), load(7, b1, b_stride);
  }
  // TDPBF16PS tile c += tile a * tile b.
  void dot(int c, int a, int b) {
    for (int64_t i = 0; i < kAmxRows; ++i) {
      for (int64_t j = 0; j < kAmxPairs; ++j) {
        float even = 0.0f, odd = 0.0f;
        for (int64_t r = 0; r < kAmxPairs; ++r) {
          const uint32_t x = tile[a][i][r], y = tile[b][r][j];
          even = fused(bf16_input(x << 16), bf16_input(y << 16), even);
          odd = fused(bf16_input(x & 0xFFFF0000u), bf16_input(y & 0xFFFF0000u), odd);
        }
        tile[c][i][j] = bits_of(added(float_of(tile[c][i][j]), added(even, odd)));
      }
    }
  }
  void dot() { dot(0, 4, 6), dot(1, 4, 7), dot(2, 5, 6), dot(3, 5, 7); }
  void end_c() {
    for (int t = 0; t < 4; ++t) {
      char* block = reinterpret_cast<char*>(c_block) + (t / 2) * kAmxRows * c_stride + (t % 2) * 64;
      for (int64_t r = 0; r < kAmxRows; ++r) std::memcpy(block + r * c_stride, tile[t][r], 64);
    }
  }
};

}  // namespace

ACLNN_AMX_DEFINE_PRODUCTS(emulated, EmulatedAmxTiles)

}  // namespace aclnn_cpu
