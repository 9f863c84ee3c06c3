// FLOAT16 and BF16 <-> float conversion of contiguous runs with the CPU's F16C and AVX2
// instructions (AVX-512's and AVX512_BF16's for narrowing), for reading and storing rows of views
// (pack.cpp), and the row copies and gradBias lane sums on the same registers. Exact or rounded to
// nearest even, as Eigen's portable conversions do: only the speed differs. Callers take them from
// the plan's kit (Conversions16, IsaKit::conversions), never by name.
#pragma once

#include <cstdint>

namespace aclnn_cpu {

// The conversions a kit has (kernels/kits/kit.h, IsaKit::conversions), each the widest its CPU runs:
// what the functions below of the same name without suffix do. A plan's steps take the pointer at
// phase 1 (PlanBuilder::cpu().conversions) and hand it to the routines of this layer (pack.h, im2col.h), which
// take their portable paths where it is null (the generic kit).
struct Conversions16 {
  void (*halves_to_floats)(const uint16_t* in, float* out, int64_t n);
  void (*floats_to_halves)(const float* in, uint16_t* out, int64_t n);
  void (*bf16_to_floats)(const uint16_t* in, float* out, int64_t n);
  void (*floats_to_bf16)(const float* in, uint16_t* out, int64_t n);
  void (*narrow_rows)(const float* in, int64_t in_stride, int64_t n, int64_t rows, uint16_t* out, int64_t out_stride,
                      bool bf16);
  void (*widen_rows)(const uint16_t* in, bool bf16, int64_t in_stride, int64_t step, int64_t n, int64_t rows,
                     float* out, int64_t out_stride);
  void (*widen_strided)(const uint16_t* in, bool bf16, int64_t step, int64_t n, float* out);
  void (*copy_rows)(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride);
  void (*copy_rows_even)(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride);
  void (*split_rows)(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out_even, float* out_odd,
                     int64_t out_stride);
  void (*rows_to_vectors)(const void* in, int kind, int64_t in_stride, int64_t n, int64_t rows, float* out,
                          int64_t out_stride, int64_t vector_stride);
  void (*add_to_double_lanes)(const float* in, int64_t rows, int64_t row_stride, int64_t width, double* lanes);
  void (*add_channels_to_double_lanes)(const float* in, int64_t channels, int64_t channel_stride, int64_t rows,
                                       int64_t row_stride, int64_t width, double* lanes);
  void (*add_halves_to_double_lanes)(const uint16_t* in, bool bf16, int64_t rows, int64_t row_stride, int64_t width,
                                     double* lanes);
};

#ifdef ACLNN_HAVE_X86_KERNELS
// convert_avx2.cpp (-mavx2 -mf16c), the AVX2 kit's (kit_avx2.cpp): out[i] = in[i] for i < n.
void halves_to_floats_avx2(const uint16_t* in, float* out, int64_t n);
void floats_to_halves_avx2(const float* in, uint16_t* out, int64_t n);
// out[r * out_stride + i] = in[r * in_stride + i * step] widened, FLOAT16 (or, `bf16`, BF16), for
// r < rows, i < n, step 1 or 2 (reading nothing past each row's last entry): window lines of
// several channels in one call. Prefetches ahead as copy_rows_avx2 does.
void widen_rows_avx2(const uint16_t* in, bool bf16, int64_t in_stride, int64_t step, int64_t n, int64_t rows,
                     float* out, int64_t out_stride);
// out[i] = in[i * step] widened, FLOAT16 (or, `bf16`, BF16), for i < n and any step > 0: the entries
// of a strided window's phase, 8 picked into a vector for each conversion (none converted in vain).
void widen_strided_avx2(const uint16_t* in, bool bf16, int64_t step, int64_t n, float* out);
// out[r * out_stride + i] = in[r * in_stride + i] for r < rows, i < n (reading nothing past each
// row's last entry): short float rows of several channels in one call, without a call per row.
// What lies ahead is prefetched as it is copied: 8 KiB ahead where the rows are one run of memory
// (in_stride == n: a plane's rows; past the run too: the next plane, which the next task reads),
// else 448 floats ahead of each row (in its plane: that channel's rows to come).
void copy_rows_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride);
// out[r * out_stride + i] = in[r * in_stride + 2 * i] for r < rows, i < n (reading nothing past each row's
// entry 2(n - 1)): the even entries of rows (a stride-2 window's phase), 8 per shuffle, prefetched as
// copy_rows_avx2 does.
void copy_rows_even_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride);
// out_even[r * out_stride + i] = in[r * in_stride + 2i] for i < (n + 1) / 2, and out_odd[r * out_stride + i] =
// in[r * in_stride + 2i + 1] for i < n / 2, r < rows (reading nothing past each row's entry n - 1): rows split into
// their even and odd columns (a stride-2 layer's two column phases) in one pass, 8 of each per two loads.
void split_rows_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out_even, float* out_odd,
                     int64_t out_stride);
// out[r * out_stride + i / 16 * vector_stride + i % 16] = in[r * in_stride + i] for r < rows, i < n:
// rows cut into vectors of 16 that land `vector_stride` floats apart (several channels' vectors side
// by side), row by row in memory order; FLOAT (`kind` 0), FLOAT16 (1) or BF16 (2) values widened.
void rows_to_vectors_avx2(const void* in, int kind, int64_t in_stride, int64_t n, int64_t rows, float* out,
                          int64_t out_stride, int64_t vector_stride);
// The same for BF16 (to BF16: nearest even, NaNs quiet with their sign, as Eigen::bfloat16).
void bf16_to_floats_avx2(const uint16_t* in, float* out, int64_t n);
void floats_to_bf16_avx2(const float* in, uint16_t* out, int64_t n);
// out[r * out_stride + i] = in[r * in_stride + i] narrowed to FLOAT16 (or, `bf16`, BF16) for r < rows,
// i < n: the run conversions above row by row (a block of channels' result rows in one call).
void narrow_rows_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, uint16_t* out, int64_t out_stride,
                      bool bf16);
// convert_avx512.cpp (-mavx512f), the AVX-512 kit's: the same narrowing, the same bits, 16 values at a time.
void floats_to_bf16_avx512(const float* in, uint16_t* out, int64_t n);
// out[r * out_stride + i] = in[r * in_stride + i] narrowed to FLOAT16 (or, `bf16`, BF16) for r < rows,
// i < n, the same bits as floats_to_halves_avx2 / floats_to_bf16_avx2 (masked past each row's last
// entry): a block of channels' result rows in one call.
void narrow_rows_avx512(const float* in, int64_t in_stride, int64_t n, int64_t rows, uint16_t* out, int64_t out_stride,
                        bool bf16);
// convert_avx512_bf16.cpp (-mavx512f -mavx512dq -mavx512bf16), the AVX512_BF16 kit's (the AVX-512 kit
// where the CPU has AVX512_BF16): the same bits again, with VCVTNEPS2BF16
// (a block of 16 holding a NaN or a denormal through floats_to_bf16_avx512).
void floats_to_bf16_avx512bf16(const float* in, uint16_t* out, int64_t n);
// lanes[w % 8] += in[r * row_stride + w] (widened to double) for r < rows, w < width, in that
// order: the gradBias lanes, held in registers over the rows.
void add_to_double_lanes_avx2(const float* in, int64_t rows, int64_t row_stride, int64_t width, double* lanes);
// The same for each of `channels` channels, channel c's rows from in + c * channel_stride into lanes
// + c * 8 (the same bits as a call per channel; faster: the channels' additions interleave).
void add_channels_to_double_lanes_avx2(const float* in, int64_t channels, int64_t channel_stride, int64_t rows,
                                       int64_t row_stride, int64_t width, double* lanes);
// The same for FLOAT16 (or, `bf16`, BF16) values, widened exactly in registers.
void add_halves_to_double_lanes_avx2(const uint16_t* in, bool bf16, int64_t rows, int64_t row_stride, int64_t width,
                                     double* lanes);
#endif

}  // namespace aclnn_cpu
