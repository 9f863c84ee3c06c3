// AVX-512F micro-kernel: MicroTile (microkernel_tile.h) on zmm vectors, an 8 x 32 tile in 16
// accumulators (8 x 16 for a last column sliver with at most 16 valid columns), and its results
// narrowed to 16 bits as they leave the registers. Compiled with -mavx512f -mfma; called only when
// the CPU has AVX-512F.
#include <immintrin.h>

#include "kernels/common/narrow_avx512.h"
#include "kernels/gemm/microkernel.h"
#include "kernels/gemm/microkernel_tile.h"
#include "kernels/gemm/transpose_avx.h"

namespace aclnn_cpu {
namespace {

constexpr int kMr = 8;

struct avx512_ops {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec madd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static void prefetch_a(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};
using Tile = MicroTile<avx512_ops, kMr, 2>;
constexpr int kNr = Tile::kNr;

// Results rounded once as they leave the registers: row i's at out + i * ld, as BF16 (bf16) or FLOAT16.
struct NarrowStore {
  uint16_t* out;
  int64_t ld;
  bool bf16;
  void operator()(float*, int64_t, int i, int v, __m512 acc) const {
    narrow_avx512::store16(out + i * ld + 16 * v, acc, bf16);
  }
};

void run_rows_narrow_avx512(int64_t kc, const float* a, const float* b_base, const int64_t* b_rows, const float* c,
                            int64_t ldc, bool load_c, uint16_t* out, int64_t ldo, bool bf16) {
  // (c is only read: with load_c, the earlier depth blocks' sums)
  Tile::columns<2, true, false>(kc, a, b_base, const_cast<float*>(c), ldc, load_c, b_rows, {},
                                NarrowStore{out, ldo, bf16});
}
void run_narrow_avx512(int64_t kc, const float* a, const float* b, const float* c, int64_t ldc, bool load_c,
                       uint16_t* out, int64_t ldo, bool bf16) {
  // (c is only read: with load_c, the earlier depth blocks' sums)
  Tile::columns<2, false, false>(kc, a, b, const_cast<float*>(c), ldc, load_c, nullptr, {},
                                 NarrowStore{out, ldo, bf16});
}

void interleave_mr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kMr>(rows, stride, depth, out);
}
void interleave_nr_avx512(const float* rows, int64_t stride, int64_t depth, float* out) {
  interleave_rows_avx<kNr>(rows, stride, depth, out);
}

}  // namespace

extern const MicroKernel kMicroKernelAvx512 = [] {
  MicroKernel kernel = Tile::float_kernel(Isa::kAvx512);
  kernel.interleave_mr = interleave_mr_avx512;
  kernel.interleave_nr = interleave_nr_avx512;
  kernel.run_rows_narrow = run_rows_narrow_avx512;
  kernel.run_narrow = run_narrow_avx512;
  return kernel;
}();

}  // namespace aclnn_cpu
