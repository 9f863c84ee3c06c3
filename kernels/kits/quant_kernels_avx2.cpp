// The quantized convolution's tile on AVX2 (kernels/kits/quant_kernels.h): the 16 channels' weight pairs
// are two registers per channel pair; each position's source pair is broadcast and multiplied into them
// with PMADDWD (two exact products summed in int32), then added into 6 x 2 accumulators. The float steps
// eight channels a register, FLOAT16 rounding by F16C's VCVTPS2PH. The AVX2 and AVX-512 kits take it, each
// with its own set's byte tile.
#include <immintrin.h>

#include <cstring>

#include "kernels/kits/quant_kernels.h"

namespace aclnn_cpu {
namespace {}  // namespace

void quant_tile_avx2(const int16_t* weights, int64_t points, int64_t pairs, const int16_t* const* sources,
                     const int64_t* offsets, bool accumulate, int32_t* acc) {
  __m256i sums[kQuantTilePositions][2];
  for (int j = 0; j < kQuantTilePositions; ++j) {
    for (int half = 0; half < 2; ++half) {
      sums[j][half] =
          accumulate ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + j * kQuantTileChannels + 8 * half))
                     : _mm256_setzero_si256();
    }
  }
  const int16_t* w = weights;
  for (int64_t t = 0; t < points; ++t) {
    const int16_t* s[kQuantTilePositions];
    for (int j = 0; j < kQuantTilePositions; ++j) s[j] = sources[j] + offsets[t];
    for (int64_t q = 0; q < pairs; ++q, w += 2 * kQuantTileChannels) {
      const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16));
      for (int j = 0; j < kQuantTilePositions; ++j) {
        int32_t pair;
        std::memcpy(&pair, s[j] + 2 * q, sizeof pair);
        const __m256i x = _mm256_set1_epi32(pair);
        sums[j][0] = _mm256_add_epi32(sums[j][0], _mm256_madd_epi16(low, x));
        sums[j][1] = _mm256_add_epi32(sums[j][1], _mm256_madd_epi16(high, x));
      }
    }
  }
  for (int j = 0; j < kQuantTilePositions; ++j) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + j * kQuantTileChannels), sums[j][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + j * kQuantTileChannels + 8), sums[j][1]);
  }
}

namespace {

// Eight floats rounded to BF16 or FLOAT16 bits as round16_bits does (NaN: the quiet NaN of its sign).
__m128i round16(__m256 value, bool bf16) {
  const __m256i bits = _mm256_castps_si256(value);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x8000));
  __m256i rounded;
  if (bf16) {
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), odd), 16);
  } else {
    rounded = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT));
  }
  const __m256i quiet = _mm256_or_si256(sign, _mm256_set1_epi32(bf16 ? 0x7FC0 : 0x7E00));
  rounded = _mm256_blendv_epi8(rounded, quiet, nan);
  // (each lane below 2^16: pack the 8 lanes' low halves)
  const __m256i packed = _mm256_packus_epi32(rounded, rounded);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

// The first `positions` of a channel's 8 results.
void store_positions(__m128i results, int positions, uint16_t* out) {
  if (positions == kQuantFinishPositions) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), results);
    return;
  }
  uint16_t bits[kQuantFinishPositions];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(bits), results);
  for (int j = 0; j < positions; ++j) out[j] = bits[j];
}

}  // namespace

void quant_finish_avx2(const int32_t* acc, int positions, const QuantChannelBlock& channels, bool bf16, int rows,
                       uint16_t* out, int64_t channel_stride) {
  for (int half = 0; half < 2; ++half) {
    // position_rows[j]: channels 8 * half .. + 7 of position j (zero past `positions`)
    __m128i position_rows[kQuantFinishPositions];
    const __m256 scale = _mm256_loadu_ps(channels.scale + 8 * half);
    for (int j = 0; j < kQuantFinishPositions; ++j) {
      if (j >= positions) {
        position_rows[j] = _mm_setzero_si128();
        continue;
      }
      const __m256i sum = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + j * kQuantTileChannels + 8 * half));
      __m256 value;
      if (channels.integer_bias) {
        const __m256i biased =
            _mm256_add_epi32(sum, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(channels.int_bias + 8 * half)));
        value = _mm256_mul_ps(_mm256_cvtepi32_ps(biased), scale);
      } else {
        value = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(sum), scale), _mm256_loadu_ps(channels.bias + 8 * half));
      }
      position_rows[j] = round16(value, bf16);
    }
    // The 8 x 8 block of 16-bit values transposed: channel r's 8 positions side by side.
    const __m128i t0 = _mm_unpacklo_epi16(position_rows[0], position_rows[1]),
                  t1 = _mm_unpackhi_epi16(position_rows[0], position_rows[1]);
    const __m128i t2 = _mm_unpacklo_epi16(position_rows[2], position_rows[3]),
                  t3 = _mm_unpackhi_epi16(position_rows[2], position_rows[3]);
    const __m128i t4 = _mm_unpacklo_epi16(position_rows[4], position_rows[5]),
                  t5 = _mm_unpackhi_epi16(position_rows[4], position_rows[5]);
    const __m128i t6 = _mm_unpacklo_epi16(position_rows[6], position_rows[7]),
                  t7 = _mm_unpackhi_epi16(position_rows[6], position_rows[7]);
    const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    const __m128i channel_rows[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4), _mm_unpacklo_epi64(u1, u5),
                                     _mm_unpackhi_epi64(u1, u5), _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                                     _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
    for (int r = 0; r < 8 && 8 * half + r < rows; ++r) {
      store_positions(channel_rows[r], positions, out + (8 * half + r) * channel_stride);
    }
  }
}

extern const QuantKernels kQuantKernelsAvx2 = {quant_tile_avx2, quant_finish_avx2, quant_byte_tile_avx_vnni};
extern const QuantKernels kQuantKernelsAvx512 = {quant_tile_avx2, quant_finish_avx512, quant_byte_tile_avx512_vnni};

}  // namespace aclnn_cpu
