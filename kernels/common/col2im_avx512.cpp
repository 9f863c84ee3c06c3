// col2im_unit_rows_avx512 (col2im_avx512.h): each (c, kd, kh) group's kernel_w rows are added into
// an output row's source row together, 16 source columns at a time: the source row is loaded once,
// each tap's columns added under a mask of the lanes it reaches (the other lanes keep their value,
// signed zeros too), and stored once, instead of a run per tap (on rows 7 or 14 wide, walking the
// runs costs more than the adding). Compiled with -mavx512f.
#include "kernels/common/col2im_avx512.h"

#include <immintrin.h>

#include <cstdint>

namespace aclnn_cpu {
namespace {

inline int64_t at_least(int64_t a, int64_t b) { return a > b ? a : b; }
inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

// Lanes [lo, hi) of 16 (0 <= lo < hi <= 16).
inline __mmask16 lanes(int64_t lo, int64_t hi) { return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1)); }

}  // namespace

void col2im_unit_rows_avx512(const Col2imUnitRows& job) {
  const int64_t taps = job.kernel[0] * job.kernel[1] * job.kernel[2], src_plane = job.src[0] * job.src[1] * job.src[2];
  const int64_t col_begin = job.q0 * job.out_w;
  for (int64_t r = job.row_begin; r < job.row_end;) {
    const int64_t c = r / taps, k = r % taps, kd = k / (job.kernel[1] * job.kernel[2]);
    const int64_t kh = k / job.kernel[2] % job.kernel[1], kw0 = k % job.kernel[2];
    const int64_t group_end = at_most(job.row_end, r + job.kernel[2] - kw0);  // rows of (c, kd, kh) from kw0 on
    const float* group = job.cols + (r - job.row_begin) * job.ld;
    for (int64_t q = job.q0; q < job.q1; ++q) {
      const int64_t id = q / job.out_h * job.stride[0] - job.pad[0] + kd * job.dilation[0];
      const int64_t ih = q % job.out_h * job.stride[1] - job.pad[1] + kh * job.dilation[1];
      if (id < 0 || id >= job.src[0] || ih < 0 || ih >= job.src[1]) continue;
      float* out = job.dst + c * src_plane + (id * job.src[1] + ih) * job.src[2];
      const float* in = group + (q * job.out_w - col_begin);  // ow = 0 of this output row, first tap
      for (int64_t x0 = 0; x0 < job.src[2]; x0 += 16) {
        const int64_t width = at_most(16, job.src[2] - x0);
        const __mmask16 row = lanes(0, width);
        __m512 acc = _mm512_maskz_loadu_ps(row, out + x0);
        for (int64_t j = 0; j < group_end - r; ++j) {
          const int64_t shift = (kw0 + j) * job.dilation[2] - job.pad[2];  // iw = ow + shift
          const int64_t lo = at_least(x0, shift), hi = at_most(x0 + width, job.out_w + shift);
          if (lo >= hi) continue;
          const __mmask16 mask = lanes(lo - x0, hi - x0);
          // Lane l holds ow = x0 + l - shift of this tap's row; only the masked lanes are read (lane 0's
          // address, lo - x0 entries before lane lo - x0's, may lie before the row: as an integer).
          const float* first = in + j * job.ld + (lo - shift);  // lane lo - x0's entry
          const auto lane0 = reinterpret_cast<uintptr_t>(first) - static_cast<uintptr_t>(lo - x0) * sizeof(float);
          const __m512 v = _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(lane0));
          acc = _mm512_mask_add_ps(acc, mask, acc, v);
        }
        _mm512_mask_storeu_ps(out + x0, row, acc);
      }
    }
    r = group_end;
  }
}

}  // namespace aclnn_cpu
