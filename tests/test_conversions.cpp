// The vectorised FLOAT16 and BF16 conversions (kernels/common/convert.h) of every kit this CPU runs
// under the settings (runnable_kits(selected_isa()): ACLNN_CONVBWD_ISA) against Eigen's portable ones,
// bit for bit: every 16-bit pattern widened, and narrowing of floats around every rounding boundary,
// infinities, NaNs (with payloads and signs) and subnormals.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "kernels/common/convert.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {
namespace {

// The kits' conversions this CPU runs under the settings, each named by its kit's set: "avx512" for
// AVX-512F's narrowing, "avx512_bf16" for AVX512_BF16's, where the CPU has it.
struct ConversionPath {
  const char* name;
  const Conversions16* conversions;
};
std::vector<ConversionPath> conversion_paths() {
  std::vector<ConversionPath> paths;
  for (const IsaKit* kit : runnable_kits(selected_isa())) {
    if (kit->conversions == nullptr) continue;
    const char* name = isa_name(kit->isa);
#ifdef ACLNN_HAVE_X86_KERNELS
    if (kit == &kKitAvx512Bf16) name = "avx512_bf16";
#endif
    paths.push_back({name, kit->conversions});
  }
  return paths;
}
constexpr const char* kNoPaths = "no vector conversions on this CPU (or ACLNN_CONVBWD_ISA=generic)";

uint32_t bits_of(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  return bits;
}
float float_of(uint32_t bits) {
  float value = 0.0f;
  std::memcpy(&value, &bits, 4);
  return value;
}

// Every 16-bit pattern (NaNs included), in an odd count so the tail path runs too.
std::vector<uint16_t> all_patterns() {
  std::vector<uint16_t> patterns;
  for (uint32_t i = 0; i < 65536; ++i) patterns.push_back(static_cast<uint16_t>(i));
  patterns.push_back(0x7FC1);
  return patterns;
}

// Floats that exercise rounding: around every 16-bit pattern's ties, specials, and random bits.
std::vector<float> narrowing_inputs() {
  std::vector<float> values;
  for (uint32_t top = 0; top < 65536; top += 7) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      values.push_back(float_of(top << 16 | low));
    }
  }
  for (uint32_t special : {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7FFFFFFFu, 0x00000001u,
                           0x807FFFFFu, 0x477FF000u, 0x477FEFFFu, 0x38800000u, 0x33000000u, 0x33000001u}) {
    values.push_back(float_of(special));
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 100003; ++i) values.push_back(float_of(rng()));
  return values;
}

TEST(Conversions, VectorisedWideningMatchesEigen) {
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    const std::vector<uint16_t> in = all_patterns();
    std::vector<float> half(in.size()), bf16(in.size());
    cv.halves_to_floats(in.data(), half.data(), static_cast<int64_t>(in.size()));
    cv.bf16_to_floats(in.data(), bf16.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      const float want_half = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(in[i]));
      const float want_bf16 = static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(in[i]));
      if (std::isnan(want_half)) {
        EXPECT_TRUE(std::isnan(half[i])) << std::hex << in[i];
      } else {
        EXPECT_EQ(bits_of(half[i]), bits_of(want_half)) << std::hex << in[i];
      }
      EXPECT_EQ(bits_of(bf16[i]), bits_of(want_bf16)) << std::hex << in[i];
    }
  }
}

TEST(Conversions, VectorisedNarrowingMatchesEigen) {
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    const std::vector<float> in = narrowing_inputs();
    std::vector<uint16_t> half(in.size()), bf16(in.size());
    cv.floats_to_halves(in.data(), half.data(), static_cast<int64_t>(in.size()));
    cv.floats_to_bf16(in.data(), bf16.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      const uint16_t want_bf16 = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(in[i]));
      EXPECT_EQ(bf16[i], want_bf16) << std::hex << bits_of(in[i]);
      if (!std::isnan(in[i])) {  // (NaN payloads: any NaN will do for FLOAT16)
        const uint16_t want_half = Eigen::numext::bit_cast<uint16_t>(Eigen::half(in[i]));
        EXPECT_EQ(half[i], want_half) << std::hex << bits_of(in[i]);
      }
    }
  }
}

TEST(Conversions, ShortRunsMatchTheLongOnesAndStopAtTheirEnds) {
  // Runs of 1-24 values (a tail in a block of 8 of its own below 8, else inside the run's last 8,
  // written twice): each value as the whole-array conversion gives it, nothing written past the run.
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    const std::vector<uint16_t> patterns = all_patterns();
    const std::vector<float> floats = narrowing_inputs();
    std::vector<float> half_want(patterns.size()), bf16_want(patterns.size());
    cv.halves_to_floats(patterns.data(), half_want.data(), static_cast<int64_t>(patterns.size()));
    cv.bf16_to_floats(patterns.data(), bf16_want.data(), static_cast<int64_t>(patterns.size()));
    std::vector<uint16_t> to_half_want(floats.size()), to_bf16_want(floats.size());
    cv.floats_to_halves(floats.data(), to_half_want.data(), static_cast<int64_t>(floats.size()));
    cv.floats_to_bf16(floats.data(), to_bf16_want.data(), static_cast<int64_t>(floats.size()));
    constexpr float kSentinel = 12345.0f;
    constexpr uint16_t kSentinelBits = 0xABCD;
    for (int64_t n = 1; n <= 24; ++n) {
      for (size_t first = 0; first + static_cast<size_t>(n) <= 4096; first += 509) {
        std::vector<float> half(n + 8, kSentinel), bf16(n + 8, kSentinel);
        cv.halves_to_floats(&patterns[first], half.data(), n);
        cv.bf16_to_floats(&patterns[first], bf16.data(), n);
        std::vector<uint16_t> to_half(n + 8, kSentinelBits), to_bf16(n + 8, kSentinelBits);
        cv.floats_to_halves(&floats[first], to_half.data(), n);
        cv.floats_to_bf16(&floats[first], to_bf16.data(), n);
        for (int64_t i = 0; i < n + 8; ++i) {
          const bool inside = i < n;
          EXPECT_EQ(bits_of(half[i]), bits_of(inside ? half_want[first + i] : kSentinel)) << n << " " << i;
          EXPECT_EQ(bits_of(bf16[i]), bits_of(inside ? bf16_want[first + i] : kSentinel)) << n << " " << i;
          EXPECT_EQ(to_half[i], inside ? to_half_want[first + i] : kSentinelBits) << n << " " << i;
          EXPECT_EQ(to_bf16[i], inside ? to_bf16_want[first + i] : kSentinelBits) << n << " " << i;
        }
      }
    }
  }
}

TEST(Conversions, NarrowedRowsMatchTheRunConversions) {
  // A block of result rows narrowed in one call (narrow_rows: AVX2's, or AVX-512's in the AVX-512 kits
  // AVX-512F): rows of 1-40 values (whole blocks of 8 or 16 and the tails), gaps between the rows in
  // and out left untouched, every value as the run conversions (VectorisedNarrowingMatchesEigen) give
  // it; and all the narrowing inputs as one long row.
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    const std::vector<float> floats = narrowing_inputs();
    const auto total = static_cast<int64_t>(floats.size());
    std::vector<uint16_t> half_want(floats.size()), bf16_want(floats.size());
    cv.floats_to_halves(floats.data(), half_want.data(), total);
    cv.floats_to_bf16(floats.data(), bf16_want.data(), total);
    const auto narrow = cv.narrow_rows;
    {
      for (const bool bf16 : {false, true}) {
        const std::vector<uint16_t>& want = bf16 ? bf16_want : half_want;
        std::vector<uint16_t> whole(floats.size());
        narrow(floats.data(), total, total, 1, whole.data(), total, bf16);
        EXPECT_EQ(whole, want) << path.name << " " << bf16;
        constexpr uint16_t kSentinel = 0xABCD;
        constexpr int64_t kRows = 3;
        for (int64_t n = 1; n <= 40; ++n) {
          for (int64_t first = 0; first + kRows * (n + 3) <= 20000; first += 4999) {
            const int64_t out_stride = n + 5;
            std::vector<uint16_t> out(kRows * out_stride, kSentinel);
            narrow(&floats[first], n + 3, n, kRows, out.data(), out_stride, bf16);
            for (int64_t r = 0; r < kRows; ++r) {
              for (int64_t i = 0; i < out_stride; ++i) {
                const uint16_t expected = i < n ? want[first + r * (n + 3) + i] : kSentinel;
                EXPECT_EQ(out[r * out_stride + i], expected)
                    << path.name << " " << bf16 << " " << n << " " << r << " " << i;
              }
            }
          }
        }
      }
    }
  }
}

TEST(Conversions, WidenedRowsMatchTheRunConversions) {
  // widen_rows_avx2 (window lines: several rows, unit or stride-2 entries) against the run
  // conversions above (checked against Eigen on every pattern), bit for bit: every 16-bit pattern
  // across rows, counts around the blocks of 8 (and of 16 inputs for stride 2).
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    const std::vector<uint16_t> patterns = all_patterns();
    for (const bool bf16 : {false, true}) {
      for (const int64_t step : {1, 2}) {
        for (const int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 33}) {
          const int64_t rows = 3, in_stride = step * n + 5, out_stride = n + 3;
          for (size_t base = 0; base + rows * in_stride < patterns.size(); base += 4093) {
            // (the last row ends the buffer: under AddressSanitizer a read past it fails)
            const size_t size = n == 0 ? 0 : static_cast<size_t>((rows - 1) * in_stride + (n - 1) * step + 1);
            std::vector<uint16_t> in(patterns.begin() + static_cast<std::ptrdiff_t>(base),
                                     patterns.begin() + static_cast<std::ptrdiff_t>(base + size));
            std::vector<float> got(rows * out_stride, -1.0f), want(rows * out_stride, -1.0f);
            if (n > 0) cv.widen_rows(in.data(), bf16, in_stride, step, n, rows, got.data(), out_stride);
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t i = 0; i < n; ++i) {
                const uint16_t bits = in[r * in_stride + i * step];
                bf16 ? cv.bf16_to_floats(&bits, &want[r * out_stride + i], 1)
                     : cv.halves_to_floats(&bits, &want[r * out_stride + i], 1);
              }
            }
            ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << "bf16 " << bf16 << " step " << step << " n " << n << " at " << base;
          }
        }
      }
    }
  }
}

TEST(Conversions, StridedWideningMatchesTheRunConversions) {
  // widen_strided_avx2 (a strided window's phase) against the run conversions, bit for bit: every
  // 16-bit pattern, steps 2 to 16, counts around the blocks of 8, the last entry ending the buffer.
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    const std::vector<uint16_t> patterns = all_patterns();
    for (const bool bf16 : {false, true}) {
      for (const int64_t step : {2, 3, 8, 16}) {
        for (const int64_t n : {1, 7, 8, 9, 16, 17, 40}) {
          for (size_t base = 0; base + static_cast<size_t>((n - 1) * step + 1) <= patterns.size(); base += 1531) {
            const std::vector<uint16_t> in(patterns.begin() + static_cast<std::ptrdiff_t>(base),
                                           patterns.begin() + static_cast<std::ptrdiff_t>(base + (n - 1) * step + 1));
            std::vector<float> got(n + 2, -1.0f), want(n + 2, -1.0f);
            cv.widen_strided(in.data(), bf16, step, n, got.data());
            for (int64_t i = 0; i < n; ++i) {
              bf16 ? cv.bf16_to_floats(&in[i * step], &want[i], 1) : cv.halves_to_floats(&in[i * step], &want[i], 1);
            }
            ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << "bf16 " << bf16 << " step " << step << " n " << n << " at " << base;
          }
        }
      }
    }
  }
}

TEST(Conversions, CopiedRowsAreExactAndStopAtTheirEnds) {
  // copy_rows_avx2 (short float rows of several channels) and copy_rows_even_avx2 (their even entries:
  // a stride-2 window's phase): every bit pattern kept (NaNs, negative zeros, denormals), counts around
  // the blocks of 8 and 16, nothing written past a row's n entries, and the last row ending the buffer
  // at its last entry read (under AddressSanitizer a read past it fails).
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    std::mt19937 rng(11);
    for (const int64_t step : {1, 2}) {
      for (const int64_t n : {1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 28, 56}) {
        const int64_t rows = 3, in_stride = step * n + 5, out_stride = n + 3;
        std::vector<uint32_t> bits(static_cast<size_t>((rows - 1) * in_stride + step * (n - 1) + 1));
        for (uint32_t& b : bits) b = static_cast<uint32_t>(rng());
        std::vector<float> in(bits.size()), got(rows * out_stride, -1.0f), want(got);
        std::memcpy(in.data(), bits.data(), bits.size() * sizeof(float));
        step == 1 ? cv.copy_rows(in.data(), in_stride, n, rows, got.data(), out_stride)
                  : cv.copy_rows_even(in.data(), in_stride, n, rows, got.data(), out_stride);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < n; ++i)
            std::memcpy(&want[r * out_stride + i], &in[r * in_stride + step * i], sizeof(float));
        }
        ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << "step " << step << " n " << n;
      }
    }
  }
}

TEST(Conversions, SplitRowsAreExactAndStopAtTheirEnds) {
  // split_rows_avx2 (a stride-2 layer's rows into their even and odd columns): every bit pattern kept, counts
  // 0 to 57 (every tail past the blocks of 16), nothing written past either output's count, and the last row
  // ending the buffer at its last entry.
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    std::mt19937 rng(12);
    for (int64_t n = 0; n <= 57; ++n) {  // (every tail length, twice or more)
      const int64_t rows = 3, in_stride = n + 5, out_stride = n / 2 + 4;
      std::vector<uint32_t> bits(static_cast<size_t>((rows - 1) * in_stride + n));
      for (uint32_t& b : bits) b = static_cast<uint32_t>(rng());
      std::vector<float> in(bits.size()), even(rows * out_stride, -1.0f), odd(even), want_even(even), want_odd(even);
      std::memcpy(in.data(), bits.data(), bits.size() * sizeof(float));
      cv.split_rows(in.data(), in_stride, n, rows, even.data(), odd.data(), out_stride);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; 2 * i < n; ++i)
          std::memcpy(&want_even[r * out_stride + i], &in[r * in_stride + 2 * i], sizeof(float));
        for (int64_t i = 0; 2 * i + 1 < n; ++i)
          std::memcpy(&want_odd[r * out_stride + i], &in[r * in_stride + 2 * i + 1], sizeof(float));
      }
      ASSERT_EQ(std::memcmp(even.data(), want_even.data(), even.size() * sizeof(float)), 0) << "n " << n;
      ASSERT_EQ(std::memcmp(odd.data(), want_odd.data(), odd.size() * sizeof(float)), 0) << "n " << n;
    }
  }
}

TEST(Conversions, RowsCutIntoVectorsLandInTheirSlots) {
  // rows_to_vectors_avx2 (small-group dY staging: vectors of 16 of several channels side by side):
  // FLOAT bits kept, FLOAT16/BF16 widened as the run conversions do, every vector of 16 at its
  // slot, nothing written between the slots or past a row (the sentinels stay), the last row ending
  // the input (under AddressSanitizer a read past it fails); vector stride 16 is contiguous rows.
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    std::mt19937 rng(5);
    for (const int kind : {0, 1, 2}) {
      for (const int64_t vector_stride : {16, 48}) {
        for (const int64_t n : {1, 7, 8, 9, 15, 16, 17, 24, 28, 33, 56}) {
          const int64_t rows = 3, in_stride = n + 3, vectors = (n + 15) / 16;
          const int64_t out_stride = vectors * vector_stride + 5;
          const size_t count = static_cast<size_t>((rows - 1) * in_stride + n);
          std::vector<uint32_t> words(count);
          std::vector<uint16_t> halves(count);
          for (size_t i = 0; i < count; ++i)
            words[i] = static_cast<uint32_t>(rng()), halves[i] = static_cast<uint16_t>(rng());
          std::vector<float> floats(count);
          std::memcpy(floats.data(), words.data(), count * sizeof(float));
          const void* in =
              kind == 0 ? static_cast<const void*>(floats.data()) : static_cast<const void*>(halves.data());
          std::vector<float> got(static_cast<size_t>(rows * out_stride), -7.0f), want(got);
          cv.rows_to_vectors(in, kind, in_stride, n, rows, got.data(), out_stride, vector_stride);
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
              float* to = &want[static_cast<size_t>(r * out_stride + i / 16 * vector_stride + i % 16)];
              const size_t at = static_cast<size_t>(r * in_stride + i);
              if (kind == 0) std::memcpy(to, &floats[at], sizeof(float));
              if (kind == 1) cv.halves_to_floats(&halves[at], to, 1);
              if (kind == 2) cv.bf16_to_floats(&halves[at], to, 1);
            }
          }
          ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
              << "kind " << kind << " vector stride " << vector_stride << " n " << n;
        }
      }
    }
  }
}

TEST(Conversions, VectorisedBiasLanesMatchTheScalarOrder) {
  // add_to_double_lanes_avx2 against lanes[w % 8] += in[r * stride + w] in order, bit for bit: widths
  // around the blocks of 8, one row or three (a gap between them), lanes that already hold sums,
  // and negative zeros (which the padded tail must leave negative).
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1e3f, 1e3f);
    for (int64_t rows : {1, 3}) {
      for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 300}) {
        const int64_t stride = n + 5;
        std::vector<float> in(static_cast<size_t>(rows * stride) + 1);
        for (float& x : in) x = u(rng);
        double want[8], got[8];
        for (int l = 0; l < 8; ++l) want[l] = got[l] = l % 2 == 0 ? 0.1 * l : -0.0;
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < n; ++i) want[i % 8] += static_cast<double>(in[static_cast<size_t>(r * stride + i)]);
        }
        cv.add_to_double_lanes(in.data(), rows, stride, n, got);
        for (int l = 0; l < 8; ++l) {
          EXPECT_EQ(std::signbit(got[l]), std::signbit(want[l])) << "n " << n << " lane " << l;
          EXPECT_EQ(got[l], want[l]) << "rows " << rows << " n " << n << " lane " << l;
        }
        // The same rows as FLOAT16 and as BF16 (add_halves_to_double_lanes_avx2, widened in registers),
        // with negative zeros among them.
        for (const bool bf16 : {false, true}) {
          std::vector<uint16_t> bits(in.size());
          double want16[8], got16[8];
          for (int l = 0; l < 8; ++l) want16[l] = got16[l] = l % 2 == 0 ? 0.1 * l : -0.0;
          for (size_t i = 0; i < in.size(); ++i) {
            const float value = i % 5 == 0 ? -0.0f : in[i] / 64;
            bits[i] = bf16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(value))
                           : Eigen::numext::bit_cast<uint16_t>(Eigen::half(value));
          }
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
              const uint16_t b = bits[static_cast<size_t>(r * stride + i)];
              want16[i % 8] +=
                  bf16 ? static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b)))
                       : static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(b)));
            }
          }
          cv.add_halves_to_double_lanes(bits.data(), bf16, rows, stride, n, got16);
          for (int l = 0; l < 8; ++l) {
            EXPECT_EQ(std::signbit(got16[l]), std::signbit(want16[l]))
                << "bf16 " << bf16 << " n " << n << " lane " << l;
            EXPECT_EQ(got16[l], want16[l]) << "bf16 " << bf16 << " rows " << rows << " n " << n << " lane " << l;
          }
        }
      }
    }
  }
}

TEST(Conversions, ChannelsBiasLanesMatchTheScalarOrder) {
  // add_channels_to_double_lanes_avx2 against each channel's lanes[w % 8] += in[c * cs + r * stride + w]
  // in order, bit for bit: channel counts around its blocks of 4, widths around the blocks of 8,
  // channels further apart than their rows, lanes that already hold sums, negative zeros.
  const std::vector<ConversionPath> paths = conversion_paths();
  if (paths.empty()) GTEST_SKIP() << kNoPaths;
  for (const ConversionPath& path : paths) {
    SCOPED_TRACE(path.name);
    const Conversions16& cv = *path.conversions;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1e3f, 1e3f);
    for (int64_t channels : {1, 3, 4, 5, 8, 9}) {
      for (int64_t rows : {1, 3}) {
        for (int64_t n : {1, 7, 8, 9, 28, 56}) {
          const int64_t stride = n + 3, channel_stride = rows * stride + 13;
          std::vector<float> in(static_cast<size_t>(channels * channel_stride));
          for (size_t i = 0; i < in.size(); ++i) in[i] = i % 7 == 0 ? -0.0f : u(rng);
          std::vector<double> want(static_cast<size_t>(channels * 8)), got(want.size());
          for (size_t l = 0; l < want.size(); ++l) want[l] = got[l] = l % 3 == 0 ? -0.0 : 0.25 * double(l);
          for (int64_t c = 0; c < channels; ++c) {
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t i = 0; i < n; ++i)
                want[static_cast<size_t>(c * 8 + i % 8)] +=
                    static_cast<double>(in[static_cast<size_t>(c * channel_stride + r * stride + i)]);
            }
          }
          cv.add_channels_to_double_lanes(in.data(), channels, channel_stride, rows, stride, n, got.data());
          for (size_t l = 0; l < want.size(); ++l) {
            EXPECT_EQ(std::signbit(got[l]), std::signbit(want[l]))
                << "channels " << channels << " n " << n << " lane " << l;
            EXPECT_EQ(got[l], want[l]) << "channels " << channels << " rows " << rows << " n " << n << " lane " << l;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace aclnn_cpu
