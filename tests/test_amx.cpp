// AMX tile products (kernels/amx/amx.h): the emulated tiles against the order written out plainly
// over unpacked matrices (packing, staging and tiling checked bit for bit), against float64 within
// the order's rounding bound, and the CPU's tiles against the emulation where it has them.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/amx/amx.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/matmul/bf16_pairs.h"

namespace aclnn_cpu {
namespace {

float as_float(uint32_t bits) {
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
// BF16 value `half` (the high or low 16 bits of a pair), a denormal one as zero of its sign.
float daz(uint16_t half) {
  const uint32_t bits = uint32_t{half} << 16;
  return as_float((bits & 0x7F800000u) == 0 ? bits & 0x80000000u : bits);
}
// A step's float result r of the exact value `exact` (a double: BF16 products and float sums near
// FLT_MIN are exact there), flushed to zero of its sign where tiny as x86's FTZ finds it: the exact
// value rounded to 24 bits with an unbounded exponent is below FLT_MIN.
float ftz(float r, double exact) {
  if (exact == 0.0) return r;
  int e = 0;
  const double m = std::frexp(std::fabs(exact), &e);                             // |exact| = m * 2^e, m in [0.5, 1)
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(m, 24)), e - 24);  // 24 bits, ties to even
  return rounded < FLT_MIN ? std::copysign(0.0f, static_cast<float>(exact)) : r;
}
float step_fma(float x, float y, float z) {
  return ftz(std::fmaf(x, y, z), static_cast<double>(x) * static_cast<double>(y) + static_cast<double>(z));
}
float step_add(float x, float y) { return ftz(x + y, static_cast<double>(x) + static_cast<double>(y)); }

// A (m x pairs) and B (pairs x n) as pair words, row-major; values of every kind: ordinary ones, zeros of
// both signs, denormals, and tiny ones whose products and sums fall below float's normal range.
struct Operands {
  int64_t m, n, pairs;
  std::vector<uint32_t> a, b;
};
uint16_t some_bf16(std::mt19937& rng) {
  const uint32_t kind = rng() % 16, sign = (rng() & 1u) << 15, mantissa = rng() & 0x7Fu;
  if (kind == 0) return static_cast<uint16_t>(sign);                                    // +-0
  if (kind == 1) return static_cast<uint16_t>(sign | std::max<uint32_t>(1, mantissa));  // denormal
  if (kind == 2) return static_cast<uint16_t>(sign | (1u << 7) | mantissa);  // just above: products underflow
  const uint32_t exponent = 127 - 6 + rng() % 12;                            // 2^-6 .. 2^5
  return static_cast<uint16_t>(sign | exponent << 7 | mantissa);
}
Operands some_operands(int64_t m, int64_t n, int64_t pairs, unsigned seed) {
  std::mt19937 rng(seed);
  Operands o{m, n, pairs, std::vector<uint32_t>(m * pairs), std::vector<uint32_t>(pairs * n)};
  for (uint32_t& w : o.a) w = some_bf16(rng) | uint32_t{some_bf16(rng)} << 16;
  for (uint32_t& w : o.b) w = some_bf16(rng) | uint32_t{some_bf16(rng)} << 16;
  return o;
}

// Entry (i, j) in amx.h's order, from `start` (C's value where the product accumulates): chunks of 16
// pairs (zero pairs past the last), per chunk an even and an odd chain from zero, even + odd, the entry
// + that; denormal inputs as zero, every tiny result flushed.
float ordered_entry(const Operands& o, int64_t i, int64_t j, float start = 0.0f) {
  float entry = start;
  for (int64_t q0 = 0; q0 < o.pairs; q0 += 16) {
    float even = 0.0f, odd = 0.0f;
    for (int64_t q = q0; q < q0 + 16; ++q) {
      const uint32_t x = q < o.pairs ? o.a[i * o.pairs + q] : 0u, y = q < o.pairs ? o.b[q * o.n + j] : 0u;
      even = step_fma(daz(x & 0xFFFFu), daz(y & 0xFFFFu), even);
      odd = step_fma(daz(x >> 16), daz(y >> 16), odd);
    }
    entry = step_add(entry, step_add(even, odd));
  }
  return entry;
}

// C (round_up(m, 32) x round_up(n, 32), ldc) from amx_pair_rows with `tiles`, B's rows read from a
// padded copy: evenly spaced in even chunks (read in place), reversed in odd ones (staged).
std::vector<float> tile_product(AmxTiles tiles, const Operands& o, int64_t* ldc) {
  const int64_t rows = (o.m + 31) / 32 * 32, columns = (o.n + 31) / 32 * 32, stride = columns + 7;
  std::vector<uint32_t> packed(amx_left_words(o.m, o.pairs));
  pack_amx_left(
      tiles, o.m, o.pairs, 0, rows, [&](int64_t i, int64_t q) { return o.a[i * o.pairs + q]; }, packed.data());
  // B's pair row q at b_rows[q], `stride` words apart
  std::vector<uint32_t> b_base(o.pairs * stride + columns, 0u);
  std::vector<int64_t> b_rows(o.pairs);
  for (int64_t q = 0; q < o.pairs; ++q) {
    const int64_t q0 = q / 16 * 16, reversed = q0 + 16 <= o.pairs && q / 16 % 2 == 1;
    b_rows[q] = (reversed ? q0 + 15 - (q - q0) : q) * stride + 3;
    std::memcpy(b_base.data() + b_rows[q], o.b.data() + q * o.n, o.n * sizeof(uint32_t));
  }
  std::vector<uint32_t> stage(amx_stage_words(o.pairs));
  *ldc = columns + 5;
  std::vector<float> c(rows * *ldc, std::nanf(""));
  amx_pair_rows(tiles, o.m, o.n, o.pairs, packed.data(), b_base.data(), b_rows.data(), stage.data(), c.data(), *ldc);
  return c;
}

TEST(AmxTiles, Bf16BitsRoundToNearestEven) {
  const auto value = [](uint16_t bits) { return as_float(uint32_t{bits} << 16); };
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(-2.5f), 0xC020);
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);                         // a tie: to even
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -9)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -7) + std::ldexp(1.0f, -8)), 0x3F82);  // a tie: to even
  EXPECT_EQ(bf16_bits(INFINITY), 0x7F80);
  EXPECT_TRUE(std::isnan(value(bf16_bits(NAN))));
  EXPECT_EQ(bf16_pair(0x1234, 0xABCD), 0xABCD1234u);
}

// The tile implementations this machine runs, each checked against the order: the emulation always,
// the float FMAs of every vector set the CPU runs, AVX512_BF16's re-paired pair instructions where the
// CPU has them (the CPU's tiles: below).
struct Kind {
  AmxTiles tiles;
  const char* name;
};
std::vector<Kind> ordered_kinds() {
  std::vector<Kind> kinds{{AmxTiles::kEmulated, "emulated"}};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) kinds.push_back({AmxTiles::kFmaAvx512, "fma avx512"});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    kinds.push_back({AmxTiles::kFmaAvx2, "fma avx2"});
#elif defined(__aarch64__)
  kinds.push_back({AmxTiles::kFmaNeon, "fma neon"});
#endif
  if (bf16_dot_supported()) kinds.push_back({AmxTiles::kVectors, "avx512bf16"});
  return kinds;
}
// The kFma* value ACLNN_CONVBWD_AMX=fma gives on this machine (its best vector set).
AmxTiles fma_tiles() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return AmxTiles::kFmaAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return AmxTiles::kFmaAvx2;
  return AmxTiles::kEmulated;
#elif defined(__aarch64__)
  return AmxTiles::kFmaNeon;
#else
  return AmxTiles::kEmulated;
#endif
}

TEST(AmxTiles, EmulationFollowsTheOrderBitForBit) {
  // whole and partial blocks of rows and columns, a depth of whole and of partial chunks
  // (300 pairs: the depth in passes of kPassChunks chunks, C reloaded between them; none: C = 0)
  const int64_t shapes[][3] = {{32, 32, 16}, {40, 45, 37},  {7, 70, 1}, {64, 33, 100},
                               {1, 1, 17},   {40, 45, 300}, {33, 40, 0}};
  for (const auto& shape : shapes) {
    const Operands o = some_operands(shape[0], shape[1], shape[2], 7 + static_cast<unsigned>(shape[2]));
    for (const Kind& kind : ordered_kinds()) {
      int64_t ldc = 0;
      const std::vector<float> c = tile_product(kind.tiles, o, &ldc);
      for (int64_t i = 0; i < o.m; ++i) {
        for (int64_t j = 0; j < o.n; ++j) {
          const float want = ordered_entry(o, i, j), got = c[i * ldc + j];
          ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
              << kind.name << " " << o.m << "x" << o.n << "x" << o.pairs << " entry " << i << "," << j << ": " << got
              << " vs " << want;
          // (a float64 check: within the order's roundings of the exact sum, denormals aside)
          double exact = 0.0, magnitude = 0.0;
          for (int64_t q = 0; q < o.pairs; ++q) {
            const uint32_t x = o.a[i * o.pairs + q], y = o.b[q * o.n + j];
            for (int h = 0; h < 2; ++h) {
              const double p = double(daz(uint16_t(x >> 16 * h))) * double(daz(uint16_t(y >> 16 * h)));
              exact += p, magnitude += std::fabs(p);
            }
          }
          const double roundings = 16 + 1 + static_cast<double>((o.pairs + 15) / 16);
          EXPECT_LE(std::fabs(double(got) - exact), roundings * std::ldexp(magnitude, -24) + std::ldexp(1.0, -120))
              << "entry " << i << "," << j;
        }
      }
    }
  }
}

// A chain whose exact value falls just below FLT_MIN, FLT_MIN - 2^-150, which rounds to FLT_MIN only in
// denormal precision (std::fmaf's answer): tiny as x86's FTZ finds it, so flushed to +0.
TEST(AmxTiles, TinyAfterRoundingIsFlushed) {
  constexpr uint32_t kTwoToMinus63 = 0x2000, kTwoToMinus75 = 0x1A00, kMinus = 0x8000;
  Operands o{1, 1, 2, {kTwoToMinus63, kMinus | kTwoToMinus75}, {kTwoToMinus63, kTwoToMinus75}};
  EXPECT_EQ(std::fmaf(-0x1p-75f, 0x1p-75f, FLT_MIN), FLT_MIN);  // (what the float rounding alone gives)
  const float want = ordered_entry(o, 0, 0);
  for (const Kind& kind : ordered_kinds()) {
    int64_t ldc = 0;
    const std::vector<float> c = tile_product(kind.tiles, o, &ldc);
    EXPECT_EQ(std::memcmp(&want, &c[0], sizeof want), 0) << kind.name << " " << c[0];
    EXPECT_EQ(c[0], 0.0f) << kind.name;
    EXPECT_FALSE(std::signbit(c[0])) << kind.name;
  }
}

// What C holds where a product accumulates onto it: 0.5, -0 and denormals of both signs (used as they
// are: only tiny results are flushed), but for aarch64's FMAs, whose FZ takes a denormal input as zero
// (amx_fma_tiles.h; the loops' callers never accumulate onto one).
float start_value(AmxTiles tiles, int64_t i, int64_t j) {
  const float values[] = {0.5f, -0.0f, 0x1p-140f, -0x1.8p-130f};
  return values[(i + 2 * j) % (tiles == AmxTiles::kFmaNeon ? 2 : 4)];
}

// C (m x ldc, ldc = n + 3) from amx_pair_a_rows with `tiles`: A's pairs read in place (rows at shuffled
// offsets, pairs two positions apart with a gap after every 20, as at a band's row ends), B packed in slivers of 32
// columns from an offset of 3 pairs (NaN pairs where nothing may be read), C accumulated onto start_value or not (NaN
// before; 0.5 in the gaps).
std::vector<float> a_rows_product(AmxTiles tiles, const Operands& o, bool accumulate, int64_t* ldc) {
  const int64_t row_length = 2 * o.pairs + 4 * (o.pairs / 20) + 6;
  std::vector<uint16_t> a_base(o.m * row_length + 8);
  std::vector<int64_t> a_rows(o.m), a_columns(o.pairs);
  for (int64_t q = 0; q < o.pairs; ++q) a_columns[q] = 2 * q + 4 * (q / 20);
  for (int64_t i = 0; i < o.m; ++i) {
    a_rows[i] = (o.m - 1 - i) * row_length + 1;
    for (int64_t q = 0; q < o.pairs; ++q) {
      const uint32_t pair = o.a[i * o.pairs + q];
      uint16_t* at = &a_base[a_rows[i] + a_columns[q]];
      at[0] = static_cast<uint16_t>(pair), at[1] = static_cast<uint16_t>(pair >> 16);
    }
  }
  const int64_t offset = 3, b_pairs = o.pairs + offset + 5, slivers = (o.n + 31) / 32;
  std::vector<uint32_t> b(slivers * 32 * b_pairs, 0x7FC07FC0u);
  for (int64_t j = 0; j < slivers * 32; ++j) {
    for (int64_t q = 0; q < o.pairs; ++q)
      b[j / 32 * 32 * b_pairs + (offset + q) * 32 + j % 32] = j < o.n ? o.b[q * o.n + j] : 0u;
  }
  std::vector<uint32_t> stage(amx_a_stage_words(o.pairs));
  *ldc = o.n + 3;
  std::vector<float> c(o.m * *ldc, accumulate ? 0.5f : std::nanf(""));
  for (int64_t i = 0; i < o.m && accumulate; ++i)
    for (int64_t j = 0; j < o.n; ++j) c[i * *ldc + j] = start_value(tiles, i, j);
  amx_pair_a_rows(tiles, o.m, o.n, o.pairs, a_base.data(), a_rows.data(), a_columns.data(), b.data(), b_pairs, offset,
                  accumulate, c.data(), *ldc, stage.data());
  return c;
}

TEST(AmxTiles, InPlaceRowsFollowTheOrderBitForBit) {
  // (no depth: C as it was, or 0)
  const int64_t shapes[][3] = {{32, 32, 16}, {45, 40, 37}, {5, 70, 3}, {64, 33, 50}, {40, 64, 130}, {40, 45, 0}};
  for (const auto& shape : shapes) {
    const Operands o = some_operands(shape[0], shape[1], shape[2], 11 + static_cast<unsigned>(shape[0]));
    for (const Kind& kind : ordered_kinds()) {
      for (const bool accumulate : {false, true}) {
        int64_t ldc = 0;
        const std::vector<float> c = a_rows_product(kind.tiles, o, accumulate, &ldc);
        for (int64_t i = 0; i < o.m; ++i) {
          for (int64_t j = 0; j < o.n; ++j) {
            const float want = ordered_entry(o, i, j, accumulate ? start_value(kind.tiles, i, j) : 0.0f),
                        got = c[i * ldc + j];
            ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
                << kind.name << " " << o.m << "x" << o.n << "x" << o.pairs << (accumulate ? " accumulating" : "")
                << " entry " << i << "," << j << ": " << got << " vs " << want;
          }
          for (int64_t j = o.n; j < ldc; ++j) {  // the gaps between C's rows as they were
            EXPECT_TRUE(accumulate ? c[i * ldc + j] == 0.5f : std::isnan(c[i * ldc + j])) << "gap " << i << "," << j;
          }
        }
      }
    }
  }
}

// The settings' precedence (amx.h), on any machine: emulate, fma, then 0, then asked for (AMX=1 or ISA=amx)
// whatever else is set, then off with BF16_DOT=0 or an ISA naming a vector set, else where available
// (an ISA that names no set, or an unknown AMX value, counts as unset).
TEST(AmxTiles, SettingsPrecedence) {
  struct Row {
    const char *amx, *isa, *pairs;
    AmxWish want;
  } rows[] = {
      {nullptr, nullptr, nullptr, AmxWish::kWhereAvailable},
      {"", "", "", AmxWish::kWhereAvailable},
      {"emulate", "avx2", "0", AmxWish::kEmulate},
      {"fma", "avx2", "0", AmxWish::kFma},
      {"fma", "amx", nullptr, AmxWish::kFma},
      {"0", "amx", nullptr, AmxWish::kOff},
      {"1", "avx2", "0", AmxWish::kAsked},
      {nullptr, "amx", "0", AmxWish::kAsked},
      {nullptr, "avx512", nullptr, AmxWish::kOff},
      {nullptr, "avx2", nullptr, AmxWish::kOff},
      {nullptr, "generic", nullptr, AmxWish::kOff},
      {nullptr, nullptr, "0", AmxWish::kOff},
      {nullptr, nullptr, "1", AmxWish::kWhereAvailable},
      {nullptr, "avx-512", nullptr, AmxWish::kWhereAvailable},
      {"yes", nullptr, nullptr, AmxWish::kWhereAvailable},
      {"yes", nullptr, "0", AmxWish::kOff},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(amx_wish(r.amx, r.isa, r.pairs), r.want)
        << (r.amx ? r.amx : "-") << " " << (r.isa ? r.isa : "-") << " " << (r.pairs ? r.pairs : "-");
  }
}

// amx_tiles() reads the settings: the CPU's tiles where they are wanted and it has them (else none),
// the emulation where asked for.
TEST(AmxTiles, DefaultWhereTheCpuHasThem) {
  unsetenv("ACLNN_CONVBWD_AMX");
  unsetenv("ACLNN_CONVBWD_ISA");
  unsetenv("ACLNN_CONVBWD_BF16_DOT");
  const AmxTiles by_default = amx_tiles();
  EXPECT_NE(by_default, AmxTiles::kEmulated);
  // without the CPU's tiles: VDPBF16PS in the tiles' order where BF16 pairs may take it
  const AmxTiles vectors = bf16_dot_available() ? AmxTiles::kVectors : AmxTiles::kNone;
  if (!cpu_has_amx_bf16()) {
    EXPECT_EQ(by_default, vectors);
  }
  setenv("ACLNN_CONVBWD_AMX", "0", 1);
  EXPECT_EQ(amx_tiles(), vectors);
  setenv("ACLNN_CONVBWD_ISA", "avx2", 1);
  EXPECT_EQ(amx_tiles(), AmxTiles::kNone);
  setenv("ACLNN_CONVBWD_AMX", "1", 1);
  EXPECT_EQ(amx_tiles(), by_default == AmxTiles::kHardware ? by_default : AmxTiles::kNone);
  unsetenv("ACLNN_CONVBWD_ISA");
  setenv("ACLNN_CONVBWD_AMX", "emulate", 1);
  EXPECT_EQ(amx_tiles(), AmxTiles::kEmulated);
  EXPECT_STREQ(amx_detail(amx_tiles()), ":amx_emulated");
  setenv("ACLNN_CONVBWD_AMX", "fma", 1);
  EXPECT_EQ(amx_tiles(), fma_tiles());
  EXPECT_STREQ(amx_detail(amx_tiles()), amx_detail(fma_tiles()));
  unsetenv("ACLNN_CONVBWD_AMX");
}

// Where the CPU has tiles: the hardware gives the emulation's bits.
TEST(AmxTiles, HardwareGivesTheEmulatedBits) {
  setenv("ACLNN_CONVBWD_ISA", "amx", 1);
  const AmxTiles tiles = amx_tiles();
  unsetenv("ACLNN_CONVBWD_ISA");
  if (tiles != AmxTiles::kHardware) GTEST_SKIP() << "no AMX-BF16 tiles on this CPU";
  const Operands o = some_operands(96, 100, 300, 3);
  int64_t ldc = 0;
  const std::vector<float> hardware = tile_product(AmxTiles::kHardware, o, &ldc);
  const std::vector<float> emulated = tile_product(AmxTiles::kEmulated, o, &ldc);
  for (int64_t i = 0; i < o.m; ++i) {
    ASSERT_EQ(std::memcmp(hardware.data() + i * ldc, emulated.data() + i * ldc, o.n * sizeof(float)), 0) << "row " << i;
  }
  for (const bool accumulate : {false, true}) {
    const std::vector<float> on_hardware = a_rows_product(AmxTiles::kHardware, o, accumulate, &ldc);
    const std::vector<float> on_emulation = a_rows_product(AmxTiles::kEmulated, o, accumulate, &ldc);
    for (int64_t i = 0; i < o.m; ++i) {
      ASSERT_EQ(std::memcmp(on_hardware.data() + i * ldc, on_emulation.data() + i * ldc, o.n * sizeof(float)), 0)
          << "in-place rows, row " << i << (accumulate ? ", accumulating" : "");
    }
  }
}

}  // namespace
}  // namespace aclnn_cpu
