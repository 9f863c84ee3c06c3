#include "kernels/gemm/bf16_dot.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/gemm/cpu_isa.h"

namespace aclnn_cpu {

bool bf16_dot_available() {
#if defined(__x86_64__) && defined(ACLNN_HAVE_X86_KERNELS)
  static const bool cpu = [] {  // cpuid leaf 7, sub-leaf 1: EAX bit 5
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 5)) != 0;
  }();
  const char* value = std::getenv("ACLNN_CONVBWD_BF16_DOT");
  return cpu && selected_isa() == Isa::kAvx512 && !(value != nullptr && std::strcmp(value, "0") == 0);
#else
  return false;
#endif
}

uint16_t bf16_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(bits >> 16 | 0x40);  // NaN: quiet
  return static_cast<uint16_t>((bits + 0x7FFFu + (bits >> 16 & 1u)) >> 16);
}

int64_t packed_pairs_words(int64_t m, int64_t pairs) {
  return (std::max<int64_t>(1, m) + kBf16DotRows - 1) / kBf16DotRows * kBf16DotRows * pairs;
}

void bf16_dot_rows(const GemmBlocking& blocking, int64_t m, int64_t n, int64_t pairs, const PackedPairs& a,
                   const uint32_t* b_base, const int64_t* b_rows, float* c, int64_t ldc) {
#ifdef ACLNN_HAVE_X86_KERNELS
  constexpr int mr = kBf16DotRows, nr = kBf16DotColumns;
  const int64_t kc = std::max<int64_t>(1, blocking.kc / 2), mc = std::max<int64_t>(mr, blocking.mc / mr * mr);
  for (int64_t ic = 0; ic < m; ic += mc) {
    const int64_t rows = std::min(mc, m - ic);
    for (int64_t pc = 0; pc < pairs; pc += kc) {
      const int64_t depth = std::min(kc, pairs - pc);
      for (int64_t jr = 0; jr < n; jr += nr) {  // A's block stays in L2 while B's columns pass
        for (int64_t ir = 0; ir < rows; ir += mr) {
          const uint32_t* sliver = a.data + (ic + ir) / mr * mr * a.pairs + pc * mr;
          bf16_dot_rows_tile_avx512(depth, sliver, b_base + jr, b_rows + pc, c + (ic + ir) * ldc + jr, ldc, pc > 0,
                             n - jr <= nr / 2);
        }
      }
    }
  }
  if (pairs == 0) {
    for (int64_t i = 0; i < (m + mr - 1) / mr * mr; ++i)
      std::memset(c + i * ldc, 0, static_cast<size_t>((n + nr - 1) / nr * nr) * sizeof(float));
  }
#else
  (void)blocking, (void)m, (void)n, (void)pairs, (void)a, (void)b_base, (void)b_rows, (void)c, (void)ldc;
  std::abort();  // never planned: bf16_dot_available() is false without the x86 kernels
#endif
}

}  // namespace aclnn_cpu
