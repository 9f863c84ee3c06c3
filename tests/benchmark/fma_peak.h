// The measured fused-multiply-add peak of this machine (GFLOP/s) for `threads` threads, with the
// widest vectors the CPU has: the denominator of the benchmark's "% of peak".
#pragma once

namespace bench {

struct FmaPeak {
  const char* isa;  // "avx512", "avx2" or "sse"
  double gflops;    // all threads together
};

// `widest`: "avx2" or "generic" caps the vectors (as ACLNN_CONVBWD_ISA caps our kernels'); "" the CPU's widest.
FmaPeak measure_fma_peak(int threads, const char* widest = "");

}  // namespace bench
