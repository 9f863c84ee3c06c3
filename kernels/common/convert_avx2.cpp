// F16C and AVX2 conversions (kernels/common/convert.h). Compiled with -mavx2 -mf16c; called only
// through the AVX2 and AVX-512 kits' conversions (IsaKit::conversions), on CPUs with both. Only intrinsics here (no
// shared inline code).
#include <immintrin.h>

#include <cstdint>

#include "kernels/common/convert.h"
#include "kernels/common/halves_avx2.h"

namespace aclnn_cpu {

void halves_to_floats_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  const auto eight = [&](int64_t at) {
    _mm256_storeu_ps(out + at, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + at))));
  };
  for (; i + 8 <= n; i += 8) eight(i);
  if (i < n && n >= 8) {  // the last 1-7 as part of the last 8 (a few written twice, the same values)
    eight(n - 8);
  } else if (i < n) {  // fewer than 8 in all: through a zero-padded block of 8
    alignas(16) uint16_t last[8] = {};
    alignas(32) float wide[8];
    for (int64_t j = 0; j < n - i; ++j) last[j] = in[i + j];
    _mm256_store_ps(wide, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(last))));
    for (int64_t j = 0; j < n - i; ++j) out[i + j] = wide[j];
  }
}

namespace {

// One FLOAT16 (or BF16 when kBf16) value as a float, in registers (a tail through a block of 8 on
// the stack would cost a store-forwarding stall).
template <bool kBf16>
inline float widen_one(uint16_t bits) {
  if constexpr (kBf16) {
    const uint32_t wide = uint32_t{bits} << 16;
    float value;
    __builtin_memcpy(&value, &wide, sizeof(wide));
    return value;
  } else {
    return _cvtsh_ss(bits);
  }
}

// out[i] = in[i * kStep] widened (FLOAT16, or BF16 when kBf16) for i < n, reading nothing past
// in[(n - 1) * kStep].
template <bool kBf16, int kStep>
void avx2_widen_run(const uint16_t* in, int64_t n, float* out) {
  int64_t i = 0;
  const auto widen8 = widen8_avx2<kBf16>;
  if constexpr (kStep == 1) {
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, widen8(in + i));
    if (i < n && n >= 8) {  // the last 1-7 as part of the last 8 (a few written twice, the same values)
      _mm256_storeu_ps(out + n - 8, widen8(in + n - 8));
      return;
    }
  } else {
    for (; i + 8 < n; i += 8) {  // (reads in[2i .. 2i+15]: never past in[2(n-1)])
      const __m256 low = widen8(in + 2 * i), high = widen8(in + 2 * i + 8);
      const __m256 evens = _mm256_shuffle_ps(low, high, _MM_SHUFFLE(2, 0, 2, 0));  // lows' and highs' per lane
      _mm256_storeu_ps(out + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(evens), 0xD8)));
    }
  }
  for (; i < n; ++i) out[i] = widen_one<kBf16>(in[i * kStep]);
}

// Each line of a row's `bytes` at `row`, the line `ahead` bytes further prefetched (copy_rows_avx2 says why).
void prefetch_ahead(const void* row, int64_t bytes, int64_t ahead) {
  for (int64_t at = 0; at < bytes; at += 64)
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(row) + at + ahead), _MM_HINT_T0);
}

// The distance copy_rows_avx2 and widen_rows_avx2 prefetch at, in entries: 2048 where the rows are one
// run of memory, 448 (ahead in each row's own plane) where they are not.
int64_t entries_ahead(bool one_run) { return one_run ? 2048 : 448; }

template <bool kBf16>
void avx2_widen_rows(const uint16_t* in, int64_t in_stride, int64_t step, int64_t n, int64_t rows, float* out,
                     int64_t out_stride) {
  const int64_t ahead = 2 * entries_ahead(in_stride == n * step);
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
    prefetch_ahead(in, 2 * n * step, ahead);
    step == 1 ? avx2_widen_run<kBf16, 1>(in, n, out) : avx2_widen_run<kBf16, 2>(in, n, out);
  }
}

}  // namespace

void widen_rows_avx2(const uint16_t* in, bool bf16, int64_t in_stride, int64_t step, int64_t n, int64_t rows,
                     float* out, int64_t out_stride) {
  bf16 ? avx2_widen_rows<true>(in, in_stride, step, n, rows, out, out_stride)
       : avx2_widen_rows<false>(in, in_stride, step, n, rows, out, out_stride);
}

void widen_strided_avx2(const uint16_t* in, bool bf16, int64_t step, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16_t* at = in + i * step;
    __m128i bits = _mm_cvtsi32_si128(at[0]);
    bits = _mm_insert_epi16(bits, at[step], 1);
    bits = _mm_insert_epi16(bits, at[2 * step], 2);
    bits = _mm_insert_epi16(bits, at[3 * step], 3);
    bits = _mm_insert_epi16(bits, at[4 * step], 4);
    bits = _mm_insert_epi16(bits, at[5 * step], 5);
    bits = _mm_insert_epi16(bits, at[6 * step], 6);
    bits = _mm_insert_epi16(bits, at[7 * step], 7);
    _mm256_storeu_ps(out + i, bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16))
                                   : _mm256_cvtph_ps(bits));
  }
  for (; i < n; ++i) out[i] = bf16 ? widen_one<true>(in[i * step]) : widen_one<false>(in[i * step]);
}

void copy_rows_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n % 8)), lane);  // the tail's lanes
  // Each line copied, the line `ahead` further prefetched: a small plane's rows (a few KiB) or a row
  // of each of a group's planes (such as 8 rows of 28 floats) are streams too short or too many for
  // the hardware prefetchers of Intel's cores to get ahead of. Rows that are one run: 8 KiB ahead in
  // it (the next plane is the next task's); rows of separate planes: each 448 floats ahead in its own
  // plane (its rows to come).
  const int64_t ahead = 4 * entries_ahead(in_stride == n);
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
    prefetch_ahead(in, 4 * n, ahead);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256 a = _mm256_loadu_ps(in + i), b = _mm256_loadu_ps(in + i + 8);
      _mm256_storeu_ps(out + i, a);
      _mm256_storeu_ps(out + i + 8, b);
    }
    if (i + 8 <= n) {
      _mm256_storeu_ps(out + i, _mm256_loadu_ps(in + i));
      i += 8;
    }
    if (i < n && n >= 8) {  // the last 1-7 as part of the last 8 (a few copied twice, the same values)
      _mm256_storeu_ps(out + n - 8, _mm256_loadu_ps(in + n - 8));
    } else if (i < n) {  // (a masked store is microcoded on AMD's cores: only for rows of 1-7)
      _mm256_maskstore_ps(out + i, last, _mm256_maskload_ps(in + i, last));
    }
  }
}

void copy_rows_even_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride) {
  // Entry 2n - 1 is past the row's last (2n - 2): the last vector reads it under a mask.
  const __m256i all_but_last = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
  // The evens of a (8) and b (8): [a0 a2 b0 b2 | a4 a6 b4 b6] by shuffle, then the 64-bit pairs in order.
  auto evens = [](__m256 a, __m256 b) {
    const __m256 mixed = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
  };
  const int64_t ahead = 4 * entries_ahead(in_stride == 2 * n);
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
    prefetch_ahead(in, 8 * n, ahead);
    if (n < 8) {
      for (int64_t i = 0; i < n; ++i) out[i] = in[2 * i];
      continue;
    }
    for (int64_t i = 0; i + 8 < n; i += 8)
      _mm256_storeu_ps(out + i, evens(_mm256_loadu_ps(in + 2 * i), _mm256_loadu_ps(in + 2 * i + 8)));
    // the last 8 (a few written twice, the same values)
    const float* last = in + 2 * (n - 8);
    _mm256_storeu_ps(out + n - 8, evens(_mm256_loadu_ps(last), _mm256_maskload_ps(last + 8, all_but_last)));
  }
}

void split_rows_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, float* out_even, float* out_odd,
                     int64_t out_stride) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  auto below = [&](int64_t count) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane); };
  // The entries of a (8) and b (8) in their even and odd columns: [a0 a2 b0 b2 | a4 a6 b4 b6] by shuffle, then the
  // 64-bit pairs in order.
  auto in_order = [](__m256 mixed) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
  };
  const int64_t tail = n % 16;  // the last entries of a row, read and written under masks
  const __m256i a_lanes = below(tail), b_lanes = below(tail - 8);
  const __m256i even_lanes = below((tail + 1) / 2), odd_lanes = below(tail / 2);
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out_even += out_stride, out_odd += out_stride) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256 a = _mm256_loadu_ps(in + i), b = _mm256_loadu_ps(in + i + 8);
      _mm256_storeu_ps(out_even + i / 2, in_order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))));
      _mm256_storeu_ps(out_odd + i / 2, in_order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))));
    }
    if (tail == 0) continue;
    const __m256 a = _mm256_maskload_ps(in + i, a_lanes), b = _mm256_maskload_ps(in + i + 8, b_lanes);
    _mm256_maskstore_ps(out_even + i / 2, even_lanes, in_order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))));
    _mm256_maskstore_ps(out_odd + i / 2, odd_lanes, in_order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))));
  }
}

namespace {

template <int kKind, typename In>
void avx2_rows_to_vectors(const In* in, int64_t in_stride, int64_t n, int64_t rows, float* out, int64_t out_stride,
                          int64_t vector_stride) {
  auto eight = [](const In* at) {  // 8 values as floats
    if constexpr (kKind == 0) {
      return _mm256_loadu_ps(at);
    } else {
      const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
      if constexpr (kKind == 2) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
      return _mm256_cvtph_ps(bits);
    }
  };
  auto one = [](In value) { return kKind == 0 ? float(value) : widen_one<kKind == 2>(uint16_t(value)); };
  // The last 1-7 of a row as part of its last 8 where those lie in one vector of 16 (a few written
  // twice, the same values), else one at a time.
  const bool overlap = n % 8 != 0 && n >= 8 && (n - 8) / 16 == (n - 1) / 16;
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i / 16 * vector_stride + i % 16, eight(in + i));
    if (overlap) {
      _mm256_storeu_ps(out + (n - 8) / 16 * vector_stride + (n - 8) % 16, eight(in + n - 8));
      continue;
    }
    float* to = out + i / 16 * vector_stride + i % 16;
    for (; i < n; ++i, ++to) *to = one(in[i]);  // the last 1-7
  }
}

}  // namespace

void rows_to_vectors_avx2(const void* in, int kind, int64_t in_stride, int64_t n, int64_t rows, float* out,
                          int64_t out_stride, int64_t vector_stride) {
  if (vector_stride == 16) {  // contiguous rows
    return kind == 0
               ? copy_rows_avx2(static_cast<const float*>(in), in_stride, n, rows, out, out_stride)
               : widen_rows_avx2(static_cast<const uint16_t*>(in), kind == 2, in_stride, 1, n, rows, out, out_stride);
  }
  if (kind == 0)
    return avx2_rows_to_vectors<0>(static_cast<const float*>(in), in_stride, n, rows, out, out_stride, vector_stride);
  const auto* halves = static_cast<const uint16_t*>(in);
  kind == 2 ? avx2_rows_to_vectors<2>(halves, in_stride, n, rows, out, out_stride, vector_stride)
            : avx2_rows_to_vectors<1>(halves, in_stride, n, rows, out, out_stride, vector_stride);
}

void floats_to_halves_avx2(const float* in, uint16_t* out, int64_t n) {
  constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  int64_t i = 0;
  const auto eight = [&](int64_t at) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + at), _mm256_cvtps_ph(_mm256_loadu_ps(in + at), kNearestEven));
  };
  for (; i + 8 <= n; i += 8) eight(i);
  if (i < n && n >= 8) {  // the last 1-7 as part of the last 8 (a few written twice, the same values)
    eight(n - 8);
  } else if (i < n) {  // fewer than 8 in all: through a zero-padded block of 8
    alignas(32) float last[8] = {};
    alignas(16) uint16_t narrow[8];
    for (int64_t j = 0; j < n - i; ++j) last[j] = in[i + j];
    _mm_store_si128(reinterpret_cast<__m128i*>(narrow), _mm256_cvtps_ph(_mm256_load_ps(last), kNearestEven));
    for (int64_t j = 0; j < n - i; ++j) out[i + j] = narrow[j];
  }
}

void bf16_to_floats_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_slli_epi32(wide, 16));
  }
  for (; i < n; ++i) {  // the top half of the float's bits
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    float value;
    __builtin_memcpy(&value, &bits, sizeof value);
    out[i] = value;
  }
}

void floats_to_bf16_avx2(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  const auto eight = [&](int64_t at) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + at), narrow_bf16_avx2(_mm256_loadu_ps(in + at)));
  };
  for (; i + 8 <= n; i += 8) eight(i);
  if (i < n && n >= 8) {  // the last 1-7 as part of the last 8 (a few written twice, the same values)
    eight(n - 8);
  } else if (i < n) {  // fewer than 8 in all: through a zero-padded block of 8
    alignas(32) float last[8] = {};
    alignas(32) uint32_t narrow[8];
    for (int64_t j = 0; j < n - i; ++j) last[j] = in[i + j];
    _mm256_store_si256(reinterpret_cast<__m256i*>(narrow),
                       bf16_bits_avx2(_mm256_load_si256(reinterpret_cast<const __m256i*>(last))));
    for (int64_t j = 0; j < n - i; ++j) out[i + j] = static_cast<uint16_t>(narrow[j]);
  }
}

void narrow_rows_avx2(const float* in, int64_t in_stride, int64_t n, int64_t rows, uint16_t* out, int64_t out_stride,
                      bool bf16) {
  for (int64_t r = 0; r < rows; ++r, in += in_stride, out += out_stride)
    bf16 ? floats_to_bf16_avx2(in, out, n) : floats_to_halves_avx2(in, out, n);
}

namespace {

template <bool kBf16>
void avx2_add_16bit_lanes(const uint16_t* in, int64_t rows, int64_t row_stride, int64_t width, double* lanes) {
  __m256d low = _mm256_loadu_pd(lanes), high = _mm256_loadu_pd(lanes + 4);  // lanes 0-3, 4-7
  const int64_t whole = width / 8 * 8;
  // The last 1-7 of a row go into lanes 0..; the other lanes add -0 (x + -0 is x, signed zeros too).
  // A row of 8 or more takes its last 8 entries (nothing past the row is read), moved down in
  // registers; a shorter one goes through a buffer (bits 0x8000: -0 in both types).
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i down = _mm256_add_epi32(lane, _mm256_set1_epi32(static_cast<int>(8 - (width - whole))));
  const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(width - whole)), lane));
  const __m256 minus_zero = _mm256_set1_ps(-0.0f);
  uint16_t tail[8];
  for (int64_t r = 0; r < rows; ++r, in += row_stride) {
    for (int64_t w = 0; w < whole; w += 8) {
      const __m256 values = widen8_avx2<kBf16>(in + w);
      low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(values)));
      high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(values, 1)));
    }
    if (whole < width) {
      __m256 values;
      if (whole > 0) {
        values = _mm256_blendv_ps(minus_zero, _mm256_permutevar8x32_ps(widen8_avx2<kBf16>(in + width - 8), down), keep);
      } else {
        for (int l = 0; l < 8; ++l) tail[l] = l < width ? in[l] : uint16_t{0x8000};
        values = widen8_avx2<kBf16>(tail);
      }
      low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(values)));
      high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(values, 1)));
    }
  }
  _mm256_storeu_pd(lanes, low);
  _mm256_storeu_pd(lanes + 4, high);
}

}  // namespace

void add_halves_to_double_lanes_avx2(const uint16_t* in, bool bf16, int64_t rows, int64_t row_stride, int64_t width,
                                     double* lanes) {
  bf16 ? avx2_add_16bit_lanes<true>(in, rows, row_stride, width, lanes)
       : avx2_add_16bit_lanes<false>(in, rows, row_stride, width, lanes);
}

namespace {

// add_to_double_lanes_avx2 for kChannels channels side by side (channel c's rows from in + c *
// channel_stride, its lanes at lanes + c * 8): each channel's lanes take its values in the same order,
// and the channels' chains of additions interleave (one channel's chain alone waits on each addition's
// latency).
template <int kChannels>
void avx2_channels_to_double_lanes(const float* in, int64_t channel_stride, int64_t rows, int64_t row_stride,
                                   int64_t width, double* lanes) {
  __m256d low[kChannels], high[kChannels];  // lanes 0-3, 4-7 of each channel
  for (int c = 0; c < kChannels; ++c) {
    low[c] = _mm256_loadu_pd(lanes + c * 8);
    high[c] = _mm256_loadu_pd(lanes + c * 8 + 4);
  }
  const int64_t whole = width / 8 * 8;
  // The last 1-7 of a row go into lanes 0..; the other lanes add -0 (x + -0 is x, signed zeros too).
  // Loaded under a mask (nothing past the row is read) and blended in registers.
  const __m128i lane = _mm_setr_epi32(0, 1, 2, 3), rest = _mm_set1_epi32(static_cast<int>(width - whole));
  const __m128i mask_low = _mm_cmpgt_epi32(rest, lane),
                mask_high = _mm_cmpgt_epi32(rest, _mm_add_epi32(lane, _mm_set1_epi32(4)));
  const __m128 minus_zero = _mm_set1_ps(-0.0f);
  for (int64_t r = 0; r < rows; ++r, in += row_stride) {
    for (int64_t w = 0; w < whole; w += 8) {
      for (int c = 0; c < kChannels; ++c) {
        const float* at = in + c * channel_stride + w;
        low[c] = _mm256_add_pd(low[c], _mm256_cvtps_pd(_mm_loadu_ps(at)));
        high[c] = _mm256_add_pd(high[c], _mm256_cvtps_pd(_mm_loadu_ps(at + 4)));
      }
    }
    if (whole < width) {
      for (int c = 0; c < kChannels; ++c) {
        const float* at = in + c * channel_stride + whole;
        const __m128 a = _mm_blendv_ps(minus_zero, _mm_maskload_ps(at, mask_low), _mm_castsi128_ps(mask_low));
        const __m128 b = _mm_blendv_ps(minus_zero, _mm_maskload_ps(at + 4, mask_high), _mm_castsi128_ps(mask_high));
        low[c] = _mm256_add_pd(low[c], _mm256_cvtps_pd(a));
        high[c] = _mm256_add_pd(high[c], _mm256_cvtps_pd(b));
      }
    }
  }
  for (int c = 0; c < kChannels; ++c) {
    _mm256_storeu_pd(lanes + c * 8, low[c]);
    _mm256_storeu_pd(lanes + c * 8 + 4, high[c]);
  }
}

}  // namespace

void add_to_double_lanes_avx2(const float* in, int64_t rows, int64_t row_stride, int64_t width, double* lanes) {
  avx2_channels_to_double_lanes<1>(in, 0, rows, row_stride, width, lanes);
}

void add_channels_to_double_lanes_avx2(const float* in, int64_t channels, int64_t channel_stride, int64_t rows,
                                       int64_t row_stride, int64_t width, double* lanes) {
  int64_t c = 0;
  for (; c + 4 <= channels; c += 4)
    avx2_channels_to_double_lanes<4>(in + c * channel_stride, channel_stride, rows, row_stride, width, lanes + c * 8);
  for (; c < channels; ++c)
    avx2_channels_to_double_lanes<1>(in + c * channel_stride, 0, rows, row_stride, width, lanes + c * 8);
}

}  // namespace aclnn_cpu
