// Pieces several implementations share: packing strided views into dense arrays, and the bias reduction.
#pragma once

#include <cstdint>

#include "kernels/common/convert.h"
#include "kernels/core/conv_problem.h"

namespace aclnn_cpu {

// True when the view is FLOAT laid out densely in (N, C, D, H, W) order (unit dims may have any
// stride): kernels can then read or write it in place.
bool is_dense_float(const View5& view);

// True when kernels read the view's values as they lie: a dense FLOAT array (is_dense_float) read
// without cubeMathType rounding (kFull). The plan then gives its data as the float input
// (StepInputs::f32), and steps read it in place rather than converting it.
bool float_in_place(const View5& view, MathMode math);

// The view's first element, as float (valid when is_dense_float; nullptr for a view without
// data, which phase 1 may plan but phase 2 never runs).
float* dense_float_data(const View5& view);

// True unless the view provably maps distinct indices to distinct elements (a stride of 0 on a
// dim of size > 1, or strides that interleave). Such outputs are written by one thread in the
// user's dim order (View5::order), so the last write in that order wins, for any thread count.
bool may_overlap(const View5& view);

// The routines below that read or store runs of a view take the plan's kit's conversions
// (`conversions`: Conversions16, null for the portable paths): the same values either way.

// Copies a view into a dense (N, C, D, H, W) array of T (double or float), rounding each value
// to FLOAT16 first when `math` asks for it. Exact otherwise (FLOAT16/BF16 widen exactly).
// Each of these runs on up to `threads` OpenMP threads.
template <typename T>
void pack_dense(const View5& view, MathMode math, T* out, int threads, const Conversions16* conversions);

// Plane (n, c) of a view into `out` (D x H x W values, row-major): floats as read_plane_floats
// reads them; doubles widened exactly (then rounded to FLOAT16 when `math` asks for it).
void pack_plane(const View5& view, MathMode math, int64_t n, int64_t c, float* out, const Conversions16* conversions);
void pack_plane(const View5& view, MathMode math, int64_t n, int64_t c, double* out);

// True when each (n, c) plane of the view is contiguous (D, H, W dense with W stride 1): a run of
// positions may then cross W rows (element (n, c, 0, 0, i) is position i of the plane).
bool planes_contiguous(const View5& view);
// Asks the memory system for planes (n, c0 .. c0 + channels - 1) of the view ahead of their use (a
// hint: no effect on any value; nothing unless the planes are contiguous and the indices inside).
void prefetch_planes(const View5& view, int64_t n, int64_t c0, int64_t channels);
// The same for positions [first, first + count) of each of those planes, into L2 (the positions
// inside the plane).
void prefetch_plane_positions(const View5& view, int64_t n, int64_t c0, int64_t channels, int64_t first, int64_t count);
// Asks for each cache line of `rows` rows of `row_floats` floats, `stride` floats apart from `first`
// on, ahead of their use: into L1 (kLocality 3) or L2 (2). A hint: addresses are computed as
// integers, nothing is dereferenced, and lines past a tensor's end are fetched for nothing.
template <int kLocality>
inline void prefetch_rows(const float* first, int64_t rows, int64_t row_floats, int64_t stride) {
  for (int64_t r = 0; r < rows; ++r) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(first) + uintptr_t(r * stride) * sizeof(float);
    for (uintptr_t line = begin & ~uintptr_t{63}; line < begin + uintptr_t(row_floats) * sizeof(float); line += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 0, kLocality);
  }
}
// Those planes' first byte and their bytes where they lie one after another in memory (contiguous
// planes, channels a plane apart; the indices inside), else no run (at null).
struct PlanesRun {
  const char* at = nullptr;
  int64_t bytes = 0;
};
PlanesRun planes_run(const View5& view, int64_t n, int64_t c0, int64_t channels);

// True when the view is contiguous in (N, C, D, H, W) order (any dtype): element i of the tensor at
// data + offset + i.
bool is_dense(const View5& view);

// out[i] = position first + i of plane (n, c) of the view (positions count (d, h, w) row-major), as
// read_row_floats reads it, for i < count: one run per W row crossed, or one run in all where the
// planes are contiguous. The one routine for reading a stretch of a plane (dense copies, staged
// windows, operands converted while packed).
void read_plane_floats(const View5& view, MathMode math, int64_t n, int64_t c, int64_t first, int64_t count, float* out,
                       const Conversions16* conversions);

// out[i] = element first + i of a dense view (is_dense: elements in (N, C, D, H, W) order, any dtype) for
// i < count, as read_row_floats reads them (one run: e.g. a block of a kernel's weights across taps and
// channels, converted as it is packed instead of through a whole-tensor copy).
void read_dense_floats(const View5& view, MathMode math, int64_t first, int64_t count, float* out,
                       const Conversions16* conversions);

// out[i] = element (n, c, d, h, w0 + i*step) of the view for i < count, as float (widened exactly,
// then rounded to FLOAT16 when `math` asks for it: the values pack_dense<float> would give).
void read_row_floats(const View5& view, MathMode math, int64_t n, int64_t c, int64_t d, int64_t h, int64_t w0,
                     int64_t step, int64_t count, float* out, const Conversions16* conversions);

// The same for `channels` channels from c0 on, position-major (for views whose channels are closer
// in memory than their positions, as channels-last ones): out[k * channel_stride + i] = element
// (n, c0 + k, d, h, w0 + i*step), each position's channels read together.
void read_row_channels(const View5& view, MathMode math, int64_t n, int64_t c0, int64_t channels, int64_t d, int64_t h,
                       int64_t w0, int64_t step, int64_t count, float* out, int64_t channel_stride);

// out[c] = sum over n and space of dy[n, c, ...] in double, rounded once into out's dtype.
// (A vector reduction: cubeMathType does not apply to it.) Each channel's sum is formed in eight
// lanes (element w of a row to lane w % 8, in memory order), each sample's lanes from zero and then
// added to the previous samples' in sample order, the lanes added in order at the end; so a step
// that has the samples' lanes by other means gives the same bits (store_bias_lanes).
void reduce_bias(const View5& dy, const View5& out, int threads, const Conversions16* conversions);
// Adds the lanes of `channels` planes of floats (the view's shape[2..4] and strides, its sample and
// channel ignored; channel c's data at data + c * channel_stride, its lanes at lanes + c * 8) as
// reduce_bias forms them.
void add_float_planes_lanes(const View5& plane, const float* data, int64_t channels, int64_t channel_stride,
                            double* lanes, const Conversions16* conversions);
// reduce_bias from its samples' lanes: lanes[(n * C + c) * 8 + l] for n < samples, C = out's channels.
void store_bias_lanes(const double* lanes, int64_t samples, const View5& out);

// Stores values[i] into position first + i of plane (n, c) of the view for i < count, rounding once
// as store_dense does (one thread; the view must not overlap itself).
void store_plane_floats(const float* values, const View5& out, int64_t n, int64_t c, int64_t first, int64_t count,
                        const Conversions16* conversions);

// Stores values[i] into element first + i of a dense view (is_dense; element e at out.offset + e) for
// i < count, rounding once as store_dense does (one thread).
void store_dense_floats(const float* values, const View5& out, int64_t first, int64_t count,
                        const Conversions16* conversions);

// store_plane_floats for channels c .. c + channels - 1, channel c + i's values at values + i * value_stride:
// narrowable_rows views narrowed in one call, the kit's (not a call per row, each through the dtype
// dispatch of store_plane_floats), the rest channel by channel.
void store_rows_floats(const float* values, int64_t value_stride, int64_t channels, const View5& out, int64_t n,
                       int64_t c, int64_t first, int64_t count, const Conversions16* conversions);

// The forward operators' bias (ConvProblem::grad_input_bias, a (1, C, 1, 1, 1) view of any dtype):
// channel c's value as float.
float channel_bias(const View5& bias, int64_t c);
// values[i * value_stride + j] += bias of channel c0 + i, for i < channels and j < count (one fp32
// addition each: the same bits on every CPU).
void add_channel_bias(const View5& bias, int64_t c0, int64_t channels, float* values, int64_t value_stride,
                      int64_t count);
// store_rows_floats of the values plus their channels' bias (added in float, then rounded once).
void store_rows_with_bias(const float* values, int64_t value_stride, int64_t channels, const View5& out,
                          const View5& bias, int64_t n, int64_t c, int64_t first, int64_t count,
                          const Conversions16* conversions);
// add_channel_bias over a dense (N, C, D, H, W) float array shaped like `shape`, on up to `threads` threads.
void add_bias_to_dense(const View5& bias, float* values, const View5& shape, int threads);

// Whether a block of channels' rows of the view can be narrowed in one call (store_rows_floats,
// and the micro-kernel's NarrowedRows): FLOAT16 or BF16 with contiguous planes, so that channel
// c + i's row lies i channel strides after channel c's.
bool narrowable_rows(const View5& view);

// Where a product (kernels/matmul/sgemm.h) may store its results narrowed instead of into its float
// matrix C: row i of C at out + i * ld, FLOAT16 bits (or, `bf16`, BF16), each rounded once to nearest
// even as it is computed.
struct NarrowedRows {
  uint16_t* out = nullptr;
  int64_t ld = 0;
  bool bf16 = false;
};

// Stores a dense (N, C, D, H, W) array shaped like `out` into the strided view, rounding once.
// A view that may overlap itself is written by one thread in the user's dim order.
template <typename T>
void store_dense(const T* values, const View5& out, int threads, const Conversions16* conversions);

// Writes zero to every element of the view (+0 in every dtype: all bytes zero), on up to `threads`
// threads. A view that overlaps itself gets the same zeros whatever the order.
void store_zeros(const View5& out, int threads);

}  // namespace aclnn_cpu
