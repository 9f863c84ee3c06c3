// 12 independent chains of vector FMAs per thread (enough to cover the latency of two FMA
// pipes), best of 3 timings; functions compiled for their instruction set by target attributes
// and called only when cpuid says the CPU has it.
#include "fma_peak.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {
namespace {

constexpr long kIterations = 20000000;
constexpr int kChains = 12;

#if defined(__x86_64__)
__attribute__((target("avx512f,fma"))) float chains_avx512() {
  __m512 acc[kChains];
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
  for (long t = 0; t < kIterations; ++t) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  float out[16];
  _mm512_storeu_ps(out, acc[0]);
  return out[0];
}

__attribute__((target("avx2,fma"))) float chains_avx2() {
  __m256 acc[kChains];
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i));
  for (long t = 0; t < kIterations; ++t) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  float out[8];
  _mm256_storeu_ps(out, acc[0]);
  return out[0];
}
#endif

float chains_generic() {  // 4-float vectors, multiply then add (no FMA in baseline x86-64)
  typedef float Vec __attribute__((vector_size(16)));
  Vec acc[kChains];
  const Vec x = {0.999999f, 0.999999f, 0.999999f, 0.999999f}, y = {1e-7f, 1e-7f, 1e-7f, 1e-7f};
  for (int i = 0; i < kChains; ++i) acc[i] = Vec{float(i), float(i), float(i), float(i)};
  for (long t = 0; t < kIterations; ++t) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * x + y;
  }
  for (int i = 1; i < kChains; ++i) acc[0] += acc[i];
  return acc[0][0];
}

}  // namespace

FmaPeak measure_fma_peak(int threads, const char* widest) {
  (void)widest;  // (x86-64 only)
  float (*chains)() = chains_generic;
  FmaPeak peak{"sse", 0.0};
  int lanes = 4;
#if defined(__x86_64__)
  __builtin_cpu_init();
  const std::string cap = widest;
  if (cap == "generic") {
    // (the generic chains)
  } else if (cap != "avx2" && __builtin_cpu_supports("avx512f")) {
    chains = chains_avx512, peak.isa = "avx512", lanes = 16;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    chains = chains_avx2, peak.isa = "avx2", lanes = 8;
  }
#endif
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    std::vector<float> sinks(threads);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sinks[t] = chains(); });
    for (std::thread& t : pool) t.join();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (sinks[0] == 12345.0f) best *= 1.0;  // keep the results alive
  }
  peak.gflops = 2.0 * lanes * kChains * double(kIterations) * threads / best / 1e9;
  return peak;
}

}  // namespace bench
