// keep_in_register(x): the one way the kernels pin a value in a register of its own. An empty
// asm statement that claims to read and change `x`: the compiler must hold it in a register at
// that point and forgets what it knew of its value, so it can neither fold it into the
// instructions that use it (a load into each multiply-add, a pointer added to each offset) nor
// hoist or rematerialise it. No instruction is emitted; the values never change.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace aclnn_cpu {

// A pointer, in a general-purpose register.
template <typename T>
inline __attribute__((always_inline)) void keep_in_register(T*& pointer) {
  asm("" : "+r"(pointer));
}

#if defined(__AVX512F__)
// Vectors in a translation unit compiled for AVX-512: any of the 32 vector registers.
inline __attribute__((always_inline)) void keep_in_register(__m512& v) { asm("" : "+v"(v)); }
inline __attribute__((always_inline)) void keep_in_register(__m256& v) { asm("" : "+v"(v)); }
#elif defined(__AVX__)
// Vectors in a translation unit compiled for AVX/AVX2: one of the 16 ymm registers.
inline __attribute__((always_inline)) void keep_in_register(__m256& v) { asm("" : "+x"(v)); }
#endif

}  // namespace aclnn_cpu
