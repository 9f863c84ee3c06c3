// The bf16 pair products (kernels/gemm/bf16_dot.h), where the CPU has them: every entry is the
// chain its header promises, emulated here with std::fma in double-checked float (bit for bit),
// over sizes that straddle the 8 x 32 tile, the 16-column half tile and the depth blocks; and within
// float accumulation's error of a double-precision product. Skipped where the CPU lacks AVX512_BF16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/gemm/bf16_dot.h"

namespace aclnn_cpu {
namespace {

float bf16_value(uint16_t bits) {
  const uint32_t word = uint32_t{bits} << 16;
  float value = 0.0f;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

TEST(Bf16Dot, Bf16BitsRoundToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits(-2.5f), 0xC020);
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);                         // a tie: to even
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -9)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_bits(1.0f + std::ldexp(1.0f, -7) + std::ldexp(1.0f, -8)), 0x3F82);  // a tie: to even
  EXPECT_EQ(bf16_bits(INFINITY), 0x7F80);
  EXPECT_TRUE(std::isnan(bf16_value(bf16_bits(NAN))));
  EXPECT_EQ(bf16_pair(0x1234, 0xABCD), 0xABCD1234u);
}

TEST(Bf16Dot, RowsFollowTheirChainsBitForBit) {
  if (!bf16_dot_supported()) GTEST_SKIP() << "the CPU has no AVX512_BF16";
  struct Size {
    int64_t m, n, pairs, kc;
  };
  // Partial slivers of rows, a last tile of 16 columns (half) or of 20 (a whole one), depth blocks
  // of 8 pairs with a remainder, and one block.
  for (const Size& size : {Size{13, 40, 37, 16}, Size{8, 48, 5, 512}, Size{21, 64, 130, 100}, Size{3, 16, 1, 16}}) {
    std::mt19937 rng(static_cast<unsigned>(size.m * 131 + size.n));
    std::normal_distribution<float> normal;
    const int64_t rows = (size.m + 7) / 8 * 8, columns = (size.n + 31) / 32 * 32, ldb = columns + 9;
    std::vector<uint16_t> a(rows * 2 * size.pairs, 0), b(size.pairs * 2 * ldb * 2);
    for (int64_t i = 0; i < size.m; ++i)
      for (int64_t p = 0; p < 2 * size.pairs; ++p) a[i * 2 * size.pairs + p] = bf16_bits(normal(rng));
    for (uint16_t& x : b) x = bf16_bits(normal(rng));
    // A packed as pairs; B's pair rows read in place, in reverse order and ldb apart.
    std::vector<uint32_t> packed(packed_pairs_words(size.m, size.pairs));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t q = 0; q < size.pairs; ++q)
        packed[i / 8 * 8 * size.pairs + q * 8 + i % 8] =
            bf16_pair(a[i * 2 * size.pairs + 2 * q], a[i * 2 * size.pairs + 2 * q + 1]);
    std::vector<uint32_t> words(size.pairs * ldb);
    for (size_t w = 0; w < words.size(); ++w) words[w] = bf16_pair(b[2 * w], b[2 * w + 1]);
    std::vector<int64_t> b_rows(size.pairs);
    for (int64_t q = 0; q < size.pairs; ++q) b_rows[q] = (size.pairs - 1 - q) * ldb;
    GemmBlocking blocking;
    blocking.isa = Isa::kAvx512, blocking.kc = 2 * size.kc, blocking.mc = 8, blocking.nc = 32;
    std::vector<float> c(rows * columns, NAN);
    bf16_dot_rows(blocking, size.m, size.n, size.pairs, PackedPairs{packed.data(), size.pairs}, words.data(),
                  b_rows.data(), c.data(), columns);
    for (int64_t i = 0; i < size.m; ++i) {
      for (int64_t j = 0; j < size.n; ++j) {
        float chain = 0.0f;
        double exact = 0.0, magnitude = 0.0;
        for (int64_t q = 0; q < size.pairs; ++q) {
          const uint32_t pair = words[b_rows[q] + j];
          const float b_even = bf16_value(static_cast<uint16_t>(pair)), b_odd = bf16_value(pair >> 16);
          const float a_even = bf16_value(a[i * 2 * size.pairs + 2 * q]);
          const float a_odd = bf16_value(a[i * 2 * size.pairs + 2 * q + 1]);
          chain = std::fma(a_odd, b_odd, chain);
          chain = std::fma(a_even, b_even, chain);
          exact += double(a_odd) * b_odd + double(a_even) * b_even;
          magnitude += std::abs(double(a_odd) * b_odd) + std::abs(double(a_even) * b_even);
        }
        const float got = c[i * columns + j];
        ASSERT_EQ(got, chain) << i << " " << j << " of " << size.m << "x" << size.n << "x" << size.pairs;
        EXPECT_LE(std::abs(got - exact), std::ldexp(double(2 * size.pairs + 1), -24) * magnitude);
      }
    }
  }
}

// A read in place (rows at odd offsets in reverse order, pair columns with gaps), B packed by
// pack_pairs_right at a pair offset, accumulating or not, partial tiles in both directions.
TEST(Bf16Dot, LeftRowsInPlaceFollowTheirChainsBitForBit) {
  if (!bf16_dot_supported()) GTEST_SKIP() << "the CPU has no AVX512_BF16";
  for (const bool accumulate : {false, true}) {
    for (const int64_t m : {13, 16}) {
      const int64_t n = accumulate ? 45 : 32, pairs = 37, offset = 3, depth = pairs + 5, line = 3 * pairs + 7;
      std::mt19937 rng(static_cast<unsigned>(m + n));
      std::normal_distribution<float> normal;
      std::vector<uint16_t> a(m * line + 9);
      for (uint16_t& x : a) x = bf16_bits(normal(rng));
      std::vector<int64_t> a_rows(m), a_columns(pairs);
      for (int64_t i = 0; i < m; ++i) a_rows[i] = (m - 1 - i) * line + 1;
      for (int64_t q = 0; q < pairs; ++q) a_columns[q] = 2 * q + q / 5;
      // B: column j's depth entries as floats holding BF16 values, packed from pair `offset` on.
      std::vector<float> b(n * 2 * pairs);
      for (float& x : b) x = bf16_value(bf16_bits(normal(rng)));
      std::vector<uint32_t> packed(packed_pairs_right_words(n, depth), 0xFFFFFFFFu);
      pack_pairs_right(b.data(), 2 * pairs, n, pairs, packed.data(), depth, 0, offset);
      for (int64_t j = n; j < (n + 31) / 32 * 32; ++j)  // the sliver's padding columns: zero
        for (int64_t q = 0; q < depth; ++q) packed[j / 32 * 32 * depth + q * 32 + j % 32] = 0;
      const int64_t ldc = n + 3;
      std::vector<float> c(m * ldc), c0(m * ldc);
      for (float& x : c0) x = normal(rng);
      c = c0;
      GemmBlocking blocking;
      blocking.isa = Isa::kAvx512, blocking.kc = 2 * 16, blocking.mc = 8, blocking.nc = 32;
      bf16_dot_a_rows(blocking, m, n, pairs, a.data(), a_rows.data(), a_columns.data(),
                      PackedPairsRight{packed.data(), depth, offset}, accumulate, c.data(), ldc);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float chain = accumulate ? c0[i * ldc + j] : 0.0f;
          for (int64_t q = 0; q < pairs; ++q) {
            const uint16_t* pair = a.data() + a_rows[i] + a_columns[q];
            chain = std::fma(bf16_value(pair[1]), b[j * 2 * pairs + 2 * q + 1], chain);
            chain = std::fma(bf16_value(pair[0]), b[j * 2 * pairs + 2 * q], chain);
          }
          ASSERT_EQ(c[i * ldc + j], chain) << i << " " << j << " m " << m << " accumulate " << accumulate;
        }
        for (int64_t j = n; j < ldc; ++j) EXPECT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "past column n";
      }
    }
  }
}

}  // namespace
}  // namespace aclnn_cpu
