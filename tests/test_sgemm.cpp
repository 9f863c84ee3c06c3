// The GEMM engine on every instruction-set path this CPU runs, against a double-precision product:
// sizes that straddle every micro-kernel's register tile and the cache blocks, all four operand
// orientations, accumulation. Then identical bits from every path that fuses its multiply-adds.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/blocked_sum.h"
#include "kernels/core/cpu_isa.h"
#include "kernels/kits/kit.h"
#include "kernels/matmul/sgemm.h"
#include "support/env.h"

namespace aclnn_cpu {
namespace {

// (Tests here set the choice settings for their own checks: each next test gets back the forced one.)
[[maybe_unused]] const bool kChoiceSettingsRestored = testing_support::restore_choice_settings();

std::vector<Isa> runnable_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (isa <= detected_isa()) isas.push_back(isa);
  }
  return isas;
}

struct Product {
  int64_t m, n, k;
  bool ta, tb, accumulate;
};

// C = op(A) op(B) (+ C) with `blocking`; A, B, C0 from `seed`; also the double-precision answer.
// `bound` gets the standard error bound of a float sum of k products: (k + 1) u sum |terms|.
std::vector<float> multiply(const Product& p, const GemmBlocking& blocking, unsigned seed, std::vector<double>* exact,
                            std::vector<double>* bound = nullptr) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> a(p.m * p.k), b(p.k * p.n), c(p.m * p.n);
  for (std::vector<float>* v : {&a, &b, &c}) {
    for (float& x : *v) x = normal(rng);
  }
  const int64_t lda = p.ta ? p.m : p.k, ldb = p.tb ? p.k : p.n;
  auto at = [&](int64_t i, int64_t q) { return double(p.ta ? a[q * lda + i] : a[i * lda + q]); };
  auto bt = [&](int64_t q, int64_t j) { return double(p.tb ? b[j * ldb + q] : b[q * ldb + j]); };
  if (exact != nullptr) {
    exact->assign(p.m * p.n, 0.0);
    bound->assign(p.m * p.n, 0.0);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double sum = p.accumulate ? c[i * p.n + j] : 0.0, magnitude = std::abs(sum);
        for (int64_t q = 0; q < p.k; ++q) sum += at(i, q) * bt(q, j), magnitude += std::abs(at(i, q) * bt(q, j));
        (*exact)[i * p.n + j] = sum;
        (*bound)[i * p.n + j] = std::ldexp(double(p.k + 1), -24) * magnitude;
      }
    }
  }
  std::vector<float> scratch(blocking.scratch_floats() + 16);
  float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
  sgemm(blocking, aligned, p.m, p.n, p.k, MatrixRef{a.data(), lda, p.ta}, MatrixRef{b.data(), ldb, p.tb}, p.accumulate,
        c.data(), p.n);
  return c;
}

std::vector<Product> products() {
  std::vector<Product> list;
  for (int64_t m : {2, 7, 17, 33}) {
    for (int64_t n : {2, 15, 33, 70}) {
      for (int64_t k : {1, 9, 300}) list.push_back({m, n, k, (m + k) % 2 == 0, (n + k) % 3 == 0, n % 2 == 1});
    }
  }
  list.push_back({1, 40, 50, false, true, true});   // one row: the dot-product path
  list.push_back({40, 1, 50, true, false, false});  // one column
  list.push_back({3, 5, 0, false, false, false});   // no depth: C = 0
  return list;
}

TEST(Sgemm, EveryPathMatchesDoublePrecision) {
  for (Isa isa : runnable_isas()) {
    for (const Product& p : products()) {
      // Small blocks as well as the planned ones, so that every loop of the blocking runs.
      GemmBlocking small = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      small.kc = 8, small.mc = isa_kit(isa).gemm.mr * 2, small.nc = isa_kit(isa).gemm.nr * 2;
      for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), small}) {
        std::vector<double> exact, bound;
        const std::vector<float> got = multiply(p, blocking, 3, &exact, &bound);
        int64_t outside = 0;
        for (size_t i = 0; i < got.size(); ++i) outside += std::abs(got[i] - exact[i]) > bound[i];
        EXPECT_EQ(outside, 0) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
      }
    }
  }
}

// The paths that fuse their multiply-adds (the generic x86-64 path has none).
std::vector<Isa> fused_isas() {
  std::vector<Isa> fused;
  for (Isa isa : runnable_isas()) {
#if !defined(__aarch64__)
    if (isa == Isa::kGeneric) continue;
#endif
    fused.push_back(isa);
  }
  return fused;
}

TEST(Sgemm, FusedPathsGiveIdenticalBitsForAnyBlocking) {
  // Every entry is the blocked sum of kernels/common/blocked_sum.h, whatever the register tile, the
  // cache blocks of A and B or the instruction set.
  const std::vector<Isa> fused = fused_isas();
  if (fused.empty()) GTEST_SKIP() << "no fused-multiply-add path on this CPU";
  for (const Product& p : products()) {
    const std::vector<float> first = multiply(p, plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{fused[0]}), 5, nullptr);
    for (Isa isa : fused) {
      GemmBlocking odd = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      odd.mc = isa_kit(isa).gemm.mr, odd.nc = isa_kit(isa).gemm.nr;
      for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), odd}) {
        EXPECT_EQ(multiply(p, blocking, 5, nullptr), first) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
      }
    }
  }
}

// Each entry is the blocked sum, emulated here with std::fma: chains of kSumBlock products from zero,
// added in order within each group of kSumGroup, the groups' sums added in order to C (or to nothing).
TEST(Sgemm, EveryEntryIsTheBlockedSum) {
  const std::vector<Isa> fused = fused_isas();
  if (fused.empty()) GTEST_SKIP() << "no fused-multiply-add path on this CPU";
  const int64_t m = 9, n = 37, k = 2 * kSumGroup + kSumBlock + 5;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  for (std::vector<float>* v : {&a, &b, &c0}) {
    for (float& x : *v) x = normal(rng);
  }
  for (bool accumulate : {false, true}) {
    std::vector<float> expected(m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float result = accumulate ? c0[i * n + j] : 0.0f;
        for (int64_t g0 = 0; g0 < k; g0 += kSumGroup) {
          float group = 0.0f;
          for (int64_t b0 = g0; b0 < std::min(k, g0 + kSumGroup); b0 += kSumBlock) {
            float chain = 0.0f;
            for (int64_t q = b0; q < std::min(k, b0 + kSumBlock); ++q)
              chain = std::fma(a[i * k + q], b[q * n + j], chain);
            group += chain;
          }
          result = g0 == 0 && !accumulate ? group : result + group;
        }
        expected[i * n + j] = result;
      }
    }
    for (Isa isa : fused) {
      const GemmBlocking blocking = plan_gemm_blocking(m, n, k, CpuFeatures{isa});
      std::vector<float> scratch(blocking.scratch_floats() + 16), c = c0;
      float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
      // C (m x n) (+)= A (m x k) * B (k x n)
      sgemm(blocking, aligned, m, n, k, MatrixRef{a.data(), k, false}, MatrixRef{b.data(), n, false}, accumulate,
            c.data(), n);
      EXPECT_EQ(c, expected) << isa_name(isa) << (accumulate ? " accumulating" : "");
    }
  }
}

// A product cut into pieces gives each entry the same bits, down to pieces of one row or one column
// (the channels-last gradWeight cuts its rows by the thread count): on every path.
TEST(Sgemm, OneRowOrOneColumnIsTheSameSum) {
  const int64_t m = 7, n = 19, k = 1500;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  for (std::vector<float>* v : {&a, &b, &c0}) {
    for (float& x : *v) x = normal(rng);
  }
  for (Isa isa : runnable_isas()) {
    for (bool accumulate : {false, true}) {
      const GemmBlocking blocking = plan_gemm_blocking(m, n, k, CpuFeatures{isa});
      std::vector<float> scratch(blocking.scratch_floats() + 16);
      float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
      // C (m x n) = A (m x k) * B (k x n) (+ C0), whole
      std::vector<float> whole = c0;
      sgemm(blocking, aligned, m, n, k, MatrixRef{a.data(), k, false}, MatrixRef{b.data(), n, false}, accumulate,
            whole.data(), n);
      for (int64_t i = 0; i < m; ++i) {  // row i: C (1 x n) = A[i, :] (1 x k) * B (k x n)
        std::vector<float> row(c0.begin() + i * n, c0.begin() + (i + 1) * n);
        sgemm(blocking, aligned, 1, n, k, MatrixRef{a.data() + i * k, k, false}, MatrixRef{b.data(), n, false},
              accumulate, row.data(), n);
        EXPECT_TRUE(std::equal(row.begin(), row.end(), whole.begin() + i * n)) << isa_name(isa) << " row " << i;
      }
      for (int64_t j = 0; j < n; ++j) {  // column j: C (m x 1) = A (m x k) * B[:, j] (k x 1)
        std::vector<float> column(m);
        for (int64_t i = 0; i < m; ++i) column[i] = c0[i * n + j];
        sgemm(blocking, aligned, m, 1, k, MatrixRef{a.data(), k, false}, MatrixRef{b.data() + j, n, false}, accumulate,
              column.data(), 1);
        for (int64_t i = 0; i < m; ++i) EXPECT_EQ(column[i], whole[i * n + j]) << isa_name(isa) << " column " << j;
      }
    }
  }
}

// op(B) written into the packed slivers by a PanelWriter, from a row-major k x n matrix.
struct WrittenMatrix {
  const float* b;
  int64_t ld;
  static void write(const void* context, int64_t p0, int64_t depth, int64_t j0, int64_t cols, int width, float* out) {
    const auto* self = static_cast<const WrittenMatrix*>(context);
    for (int64_t j = 0; j < (cols + width - 1) / width * width; ++j) {
      for (int64_t p = 0; p < depth; ++p) {
        out[j / width * width * depth + p * width + j % width] =
            j < cols ? self->b[(p0 + p) * self->ld + j0 + j] : 0.0f;
      }
    }
  }
};

TEST(Sgemm, PrepackedLeftAndWrittenRightGiveTheSameBits) {
  // The same product with op(A) packed beforehand (at a depth offset inside a deeper PackedLeft)
  // and op(B) written by a PanelWriter or packed beforehand too: packing moves the operands, never the order of a sum.
  // The scratch is exactly scratch_floats(true) (no op(A) block), so a sanitizer build sees overruns.
  for (Isa isa : runnable_isas()) {
    for (const Product& p : products()) {
      if (p.m == 1 || p.n == 1 || p.ta || p.tb) continue;  // the micro-kernel path; row-major operands
      std::mt19937 rng(9);
      std::normal_distribution<float> normal;
      std::vector<float> a(p.m * p.k), b(p.k * p.n), c0(p.m * p.n);
      for (std::vector<float>* v : {&a, &b, &c0}) {
        for (float& x : *v) x = normal(rng);
      }
      GemmBlocking small = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      small.kc = 8, small.mc = isa_kit(isa).gemm.mr * 2, small.nc = isa_kit(isa).gemm.nr * 2;
      for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), small}) {
        std::vector<float> scratch(blocking.scratch_floats() + 16);
        float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
        float* const aligned_full = aligned;
        std::vector<float> want = c0;
        sgemm(blocking, aligned, p.m, p.n, p.k, MatrixRef{a.data(), p.k, false}, MatrixRef{b.data(), p.n, false},
              p.accumulate, want.data(), p.n);
        const int64_t depth = p.k + 7, offset = 3;
        std::vector<float> packed(packed_left_floats(blocking, p.m, depth), -1.0f);
        pack_left(blocking, p.m, p.k, MatrixRef{a.data(), p.k, false}, packed.data(), depth, offset);
        std::vector<float> small_scratch(blocking.scratch_floats(true) + 16);
        aligned = small_scratch.data() + (16 - reinterpret_cast<uintptr_t>(small_scratch.data()) / 4 % 16) % 16;
        const WrittenMatrix written{b.data(), p.n};
        std::vector<float> got = c0, got_matrix = c0;
        sgemm(blocking, aligned, p.m, p.n, p.k, PackedLeft{packed.data(), depth, offset},
              PanelWriter{WrittenMatrix::write, &written}, p.accumulate, got.data(), p.n);
        sgemm(blocking, aligned, p.m, p.n, p.k, PackedLeft{packed.data(), depth, offset},
              MatrixRef{b.data(), p.n, false}, p.accumulate, got_matrix.data(), p.n);
        EXPECT_EQ(got, want) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
        EXPECT_EQ(got_matrix, want) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
        // And op(B) packed once (PackedRight, at a depth offset inside a deeper one, by pack_right), with
        // op(A) packed too (no scratch at all) or a matrix.
        std::vector<float> deeper((p.k + 7) * p.n, 5.0f);
        std::copy(b.begin(), b.end(), deeper.begin() + offset * p.n);
        std::vector<float> packed_b(packed_right_floats(blocking, p.n, depth), -1.0f);
        pack_right(blocking, depth, p.n, MatrixRef{deeper.data(), p.n, false}, packed_b.data());
        const PackedRight right{packed_b.data(), depth, offset};
        std::vector<float> got_packed = c0, got_left_matrix = c0;
        sgemm(blocking, p.m, p.n, p.k, PackedLeft{packed.data(), depth, offset}, right, p.accumulate, got_packed.data(),
              p.n);
        sgemm(blocking, aligned_full, p.m, p.n, p.k, MatrixRef{a.data(), p.k, false}, right, p.accumulate,
              got_left_matrix.data(), p.n);
        EXPECT_EQ(got_packed, want) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
        EXPECT_EQ(got_left_matrix, want) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
      }
    }
  }
}

TEST(Sgemm, NarrowedProductsRoundTheSameSums) {
  // sgemm from a packed op(A) with NarrowedRows: the whole MR x NR tiles of C go narrowed (each float
  // result rounded once, as Eigen's conversion of the unnarrowed product's C rounds it), the rest of C
  // holds the unnarrowed product's bits; over depths in several blocks (C reloaded between them),
  // accumulation, op(B) a matrix or written by a PanelWriter, rows and columns off the tiles.
  for (Isa isa : runnable_isas()) {
    for (const Product& p : products()) {
      if (p.m == 1 || p.n == 1 || p.ta || p.tb || p.k == 0) continue;
      GemmBlocking small = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      small.kc = 8, small.mc = isa_kit(isa).gemm.mr * 2, small.nc = isa_kit(isa).gemm.nr * 2;
      const int64_t mr = isa_kit(isa).gemm.mr, nr = isa_kit(isa).gemm.nr, ldc = p.n + 3, ldo = p.n + 5;
      std::mt19937 rng(13);
      std::normal_distribution<float> normal;
      std::vector<float> a(p.m * p.k), b(p.k * p.n), c0(p.m * ldc);
      for (std::vector<float>* v : {&a, &b, &c0}) {
        for (float& x : *v) x = normal(rng);
      }
      for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), small}) {
        std::vector<float> packed(packed_left_floats(blocking, p.m, p.k)), scratch(blocking.scratch_floats(true) + 16);
        pack_left(blocking, p.m, p.k, MatrixRef{a.data(), p.k, false}, packed.data(), p.k, 0);
        float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
        const PackedLeft left{packed.data(), p.k, 0};
        const WrittenMatrix written{b.data(), p.n};
        std::vector<float> want = c0;
        sgemm(blocking, aligned, p.m, p.n, p.k, left, MatrixRef{b.data(), p.n, false}, p.accumulate, want.data(), ldc);
        for (int written_b = 0; written_b < 2; ++written_b) {
          for (bool bf16 : {false, true}) {
            std::vector<float> got = c0;
            std::vector<uint16_t> out(p.m * ldo, 0xFFFF);
            const NarrowedRows narrowed{out.data(), ldo, bf16};
            if (written_b == 1) {
              sgemm(blocking, aligned, p.m, p.n, p.k, left, PanelWriter{WrittenMatrix::write, &written}, p.accumulate,
                    got.data(), ldc, narrowed);
            } else {
              sgemm(blocking, aligned, p.m, p.n, p.k, left, MatrixRef{b.data(), p.n, false}, p.accumulate, got.data(),
                    ldc, narrowed);
            }
            const std::string where = std::string(isa_name(isa)) + (bf16 ? " bf16 " : " half ") + std::to_string(p.m) +
                                      "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " kc " +
                                      std::to_string(blocking.kc) + (written_b == 1 ? " written" : " matrix");
            for (int64_t i = 0; i < p.m; ++i) {
              for (int64_t j = 0; j < p.n; ++j) {
                const float value = want[i * ldc + j];
                if (i >= p.m / mr * mr || j >= p.n / nr * nr) {
                  ASSERT_EQ(got[i * ldc + j], value) << where << " at " << i << "," << j;
                  ASSERT_EQ(out[i * ldo + j], 0xFFFF) << where << " at " << i << "," << j;
                  continue;
                }
                const uint16_t bits = bf16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(value))
                                           : Eigen::numext::bit_cast<uint16_t>(Eigen::half(value));
                ASSERT_EQ(out[i * ldo + j], bits) << where << " at " << i << "," << j;
              }
            }
          }
        }
      }
    }
  }
}

TEST(Sgemm, RowsReadInPlaceGiveTheSameBits) {
  // sgemm_rows (implicit GEMM: op(B)'s rows read in place at scattered offsets of a buffer, each
  // micro-kernel's run_rows or the generic packing fallback) against the same B as a matrix: the
  // same bits, with C computed in whole tiles (its padding rows and columns ignored); n of 2, 15 and
  // the last tiles of 33 and 70 take AVX-512's half-width kernel. With a bias per row
  // (sgemm_rows_with_bias), those bits plus the row's bias.
  for (Isa isa : runnable_isas()) {
    for (const Product& p : products()) {
      if (p.m == 1 || p.n == 1 || p.ta || p.tb || p.accumulate) continue;
      std::mt19937 rng(5);
      std::normal_distribution<float> normal;
      GemmBlocking small = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      small.kc = 8, small.mc = isa_kit(isa).gemm.mr * 2;
      small.prefetch_c = true;  // (AMD's prefetch of C's next tile: the same bits)
      const int64_t mr = isa_kit(isa).gemm.mr, nr = isa_kit(isa).gemm.nr;
      const int64_t rows = (p.m + mr - 1) / mr * mr, cols = (p.n + nr - 1) / nr * nr, pitch = cols + 5;
      std::vector<float> a(p.m * p.k), b(p.k * p.n), base(p.k * pitch + 3);
      for (std::vector<float>* v : {&a, &b, &base}) {
        for (float& x : *v) x = normal(rng);
      }
      std::vector<int64_t> offsets(p.k);
      for (int64_t q = 0; q < p.k; ++q) {  // B's rows in reverse order, each at an odd shift
        offsets[q] = (p.k - 1 - q) * pitch + q % 3;
        for (int64_t j = 0; j < p.n; ++j) b[q * p.n + j] = base[offsets[q] + j];
      }
      for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), small}) {
        std::vector<float> scratch(blocking.scratch_floats() + 16);
        float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
        std::vector<float> want(p.m * p.n);
        sgemm(blocking, aligned, p.m, p.n, p.k, MatrixRef{a.data(), p.k, false}, MatrixRef{b.data(), p.n, false}, false,
              want.data(), p.n);
        std::vector<float> packed(packed_left_floats(blocking, p.m, p.k));
        pack_left(blocking, p.m, p.k, MatrixRef{a.data(), p.k, false}, packed.data(), p.k, 0);
        std::vector<float> got(rows * cols, -1.0f);
        sgemm_rows(blocking, p.m, p.n, p.k, PackedLeft{packed.data(), p.k, 0}, base.data(), offsets.data(), got.data(),
                   cols);
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            ASSERT_EQ(got[i * cols + j], want[i * p.n + j])
                << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k << " at " << i << "," << j;
          }
        }
        if (p.k == 0) continue;
        // sgemm_rows_with_bias: each row's sums plus its bias, one fp32 addition (over every depth block)
        std::vector<float> bias(rows);
        for (float& x : bias) x = normal(rng);
        std::fill(got.begin(), got.end(), -1.0f);
        sgemm_rows_with_bias(blocking, p.m, p.n, p.k, PackedLeft{packed.data(), p.k, 0}, base.data(), offsets.data(),
                             got.data(), cols, bias.data());
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            ASSERT_EQ(got[i * cols + j], want[i * p.n + j] + bias[i])
                << isa_name(isa) << " with bias " << p.m << "x" << p.n << "x" << p.k << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(Sgemm, SixteenBitRowsReadInPlaceGiveTheSameBits) {
  // sgemm_rows_16bit (op(B)'s FLOAT16 or BF16 rows read in place and widened by the micro-kernel)
  // against sgemm_rows on the same values widened: the same bits in C, over depths in several blocks
  // (C reloaded between them) and every tile; with `narrowed`, whole slivers of rows rounded once to
  // the output's dtype (Eigen's conversion of C's float), the rest in C.
  for (Isa isa : runnable_isas()) {
    for (const Product& p : products()) {
      if (p.m == 1 || p.n == 1 || p.ta || p.tb || p.accumulate || p.k == 0) continue;
      GemmBlocking small = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      small.kc = 8, small.mc = isa_kit(isa).gemm.mr * 2;
      const int64_t mr = isa_kit(isa).gemm.mr, nr = isa_kit(isa).gemm.nr;
      const int64_t rows = (p.m + mr - 1) / mr * mr, cols = (p.n + nr - 1) / nr * nr, pitch = cols + 5;
      for (bool b_bf16 : {false, true}) {
        std::mt19937 rng(7);
        std::normal_distribution<float> normal;
        std::vector<float> a(p.m * p.k), widened(p.k * pitch + 3);
        std::vector<uint16_t> base(widened.size());
        for (float& x : a) x = normal(rng);
        for (size_t i = 0; i < base.size(); ++i) {
          const float x = normal(rng);
          base[i] = b_bf16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x))
                           : Eigen::numext::bit_cast<uint16_t>(Eigen::half(x));
          widened[i] = b_bf16 ? static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(base[i]))
                              : static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(base[i]));
        }
        std::vector<int64_t> offsets(p.k);
        for (int64_t q = 0; q < p.k; ++q) offsets[q] = (p.k - 1 - q) * pitch + q % 3;  // reversed, odd shifts
        for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), small}) {
          std::vector<float> packed(packed_left_floats(blocking, p.m, p.k));
          pack_left(blocking, p.m, p.k, MatrixRef{a.data(), p.k, false}, packed.data(), p.k, 0);
          const PackedLeft left{packed.data(), p.k, 0};
          std::vector<float> want(rows * cols), got(rows * cols, -1.0f);
          sgemm_rows(blocking, p.m, cols, p.k, left, widened.data(), offsets.data(), want.data(), cols);
          const std::string where = std::string(isa_name(isa)) + (b_bf16 ? " bf16 " : " half ") + std::to_string(p.m) +
                                    "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " kc " +
                                    std::to_string(blocking.kc);
          EXPECT_EQ(sgemm_rows_16bit(blocking, p.m, p.n, p.k, left, base.data(), offsets.data(), b_bf16, got.data(),
                                     cols, NarrowedRows{nullptr, 0, false}),
                    0);
          for (int64_t i = 0; i < p.m; ++i) {
            for (int64_t j = 0; j < p.n; ++j) ASSERT_EQ(got[i * cols + j], want[i * cols + j]) << where;
          }
          for (bool out_bf16 : {false, true}) {
            std::vector<uint16_t> out(rows * cols, 0xFFFF);
            const int64_t narrowed =
                sgemm_rows_16bit(blocking, p.m, cols, p.k, left, base.data(), offsets.data(), b_bf16, got.data(), cols,
                                 NarrowedRows{out.data(), cols, out_bf16});
            ASSERT_EQ(narrowed, p.m / mr * mr) << where;
            for (int64_t i = 0; i < p.m; ++i) {
              for (int64_t j = 0; j < p.n; ++j) {
                const float value = want[i * cols + j];
                if (i >= narrowed) {
                  ASSERT_EQ(got[i * cols + j], value) << where << " row " << i;
                  continue;
                }
                const uint16_t bits = out_bf16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(value))
                                               : Eigen::numext::bit_cast<uint16_t>(Eigen::half(value));
                ASSERT_EQ(out[i * cols + j], bits)
                    << where << (out_bf16 ? " to bf16" : " to half") << " at " << i << "," << j;
              }
            }
          }
        }
      }
    }
  }
}

TEST(Sgemm, LeftRowsReadInPlaceGiveTheSameBits) {
  // sgemm_a_rows (op(A)'s rows read in place at scattered offsets, the positions along them through
  // a column table; each micro-kernel's run_a_rows or the generic packing fallback) against the same
  // A as a matrix with op(B) a PackedRight at a depth offset: the same bits, accumulating or not,
  // partial tiles of C (its rows and columns off the micro-kernel's) written only where valid; and
  // sgemm_a_rows_bf16 the same way.
  for (Isa isa : runnable_isas()) {
    for (const Product& p : products()) {
      if (p.ta || p.tb) continue;
      std::mt19937 rng(9);
      std::normal_distribution<float> normal;
      const int64_t pitch = 2 * p.k + 7, offset = 3, depth = p.k + 5;
      std::vector<float> a(p.m * p.k), b(depth * p.n), base(p.m * pitch + 1), c0(p.m * p.n);
      for (std::vector<float>* v : {&b, &base, &c0}) {
        for (float& x : *v) x = normal(rng);
      }
      std::vector<int64_t> rows(p.m), columns(p.k);
      for (int64_t q = 0; q < p.k; ++q) columns[q] = 2 * q - q / 3;  // increasing, with gaps
      for (int64_t i = 0; i < p.m; ++i) {
        rows[i] = (p.m - 1 - i) * pitch + i % 2;  // rows in reverse order, at odd shifts
        for (int64_t q = 0; q < p.k; ++q) a[i * p.k + q] = base[rows[i] + columns[q]];
      }
      GemmBlocking small = plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa});
      small.kc = 8;
      for (const GemmBlocking& blocking : {plan_gemm_blocking(p.m, p.n, p.k, CpuFeatures{isa}), small}) {
        std::vector<float> packed_b(packed_right_floats(blocking, p.n, depth));
        pack_right(blocking, depth, p.n, MatrixRef{b.data(), p.n, false}, packed_b.data());
        const PackedRight right{packed_b.data(), depth, offset};
        std::vector<float> scratch(blocking.scratch_floats() + 16);
        float* aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
        std::vector<float> want = c0, got = c0;
        sgemm(blocking, aligned, p.m, p.n, p.k, MatrixRef{a.data(), p.k, false}, right, p.accumulate, want.data(), p.n);
        sgemm_a_rows(blocking, p.m, p.n, p.k, base.data(), rows.data(), columns.data(), right, p.accumulate, got.data(),
                     p.n);
        EXPECT_EQ(got, want) << isa_name(isa) << " " << p.m << "x" << p.n << "x" << p.k;
        // The same with A's entries BF16 values (sgemm_a_rows_bf16: widened as they are read) against those
        // values widened: the buffer starts with a NaN's bits, the 16 bits below the lowest entry, which a
        // micro-kernel may load with it and must then clear.
        std::vector<uint16_t> base16(base.size() + 1, 0xFFFF);
        std::vector<float> widened(p.m * p.k);
        for (size_t i = 0; i < base.size(); ++i)
          base16[i + 1] = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(base[i]));
        std::vector<int64_t> rows16(p.m);
        for (int64_t i = 0; i < p.m; ++i) {
          rows16[i] = rows[i] + 1;
          for (int64_t q = 0; q < p.k; ++q)
            widened[i * p.k + q] =
                static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(base16[rows16[i] + columns[q]]));
        }
        std::vector<float> want16 = c0, got16 = c0;
        sgemm(blocking, aligned, p.m, p.n, p.k, MatrixRef{widened.data(), p.k, false}, right, p.accumulate,
              want16.data(), p.n);
        sgemm_a_rows_bf16(blocking, p.m, p.n, p.k, base16.data(), rows16.data(), columns.data(), right, p.accumulate,
                          got16.data(), p.n);
        EXPECT_EQ(got16, want16) << isa_name(isa) << " bf16 " << p.m << "x" << p.n << "x" << p.k;
      }
    }
  }
}

TEST(Sgemm, IsaSelection) {
  const char* outer = std::getenv("ACLNN_CONVBWD_ISA");  // restored at the end
  const std::string saved = outer != nullptr ? outer : "";
  unsetenv("ACLNN_CONVBWD_ISA");
  EXPECT_EQ(selected_isa(), detected_isa());
  for (Isa isa : runnable_isas()) {
    setenv("ACLNN_CONVBWD_ISA", isa_name(isa), 1);
    EXPECT_EQ(selected_isa(), isa);
    EXPECT_EQ(plan_gemm_blocking(10, 10, 10, CpuFeatures::current()).isa, isa);
  }
  setenv("ACLNN_CONVBWD_ISA", "avx512", 1);  // never faster than the CPU: the CPU's own at most
  EXPECT_EQ(selected_isa(), detected_isa());
  setenv("ACLNN_CONVBWD_ISA", "sse9", 1);  // unknown: the CPU's own
  EXPECT_EQ(selected_isa(), detected_isa());
  if (outer != nullptr) {
    setenv("ACLNN_CONVBWD_ISA", saved.c_str(), 1);
  } else {
    unsetenv("ACLNN_CONVBWD_ISA");
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  EXPECT_EQ(detected_isa() == Isa::kAvx512, bool(__builtin_cpu_supports("avx512f")));
#endif
  const CacheSizes& cache = cache_sizes();
  EXPECT_GE(cache.l1, 16 << 10);
  EXPECT_GE(cache.l2, cache.l1);
  EXPECT_GE(cache.l3_per_core, cache.l2);
}

}  // namespace
}  // namespace aclnn_cpu
