// The transforms of winograd_transforms.h as plain loops over the tiles of a row, for each instruction
// set's kit (kit_*.cpp) to compile into its own vectors. Each value is one addition, subtraction or product by 1/2 per
// statement: there is nothing to contract into a multiply-add, so every set computes the same bits. Include inside an
// anonymous namespace, instantiated with the set's ops type as `Set` (named after the set: the portability test finds
// vector code by function name); nothing here calls a library template, whose instantiations other files could share.
#pragma once  // (after winograd_transforms.h, which includes <cstdint>)

template <typename Set>
void row_columns(const float* __restrict row, int64_t tw, float* __restrict cols, int64_t pitch) {
  for (int64_t t = 0; t < tw; ++t) {
    const float d0 = row[2 * t], d1 = row[2 * t + 1], d2 = row[2 * t + 2], d3 = row[2 * t + 3];
    cols[t] = d0 - d2;
    cols[pitch + t] = d1 + d2;
    cols[2 * pitch + t] = d2 - d1;
    cols[3 * pitch + t] = d1 - d3;
  }
}

template <typename Set>
void tile_entries(const float* __restrict cols, int64_t count, int64_t tw, int64_t pitch, float* __restrict v,
                  int64_t stride) {
  for (int64_t j = 0; j < 4; ++j) {
    const float* even = cols + j * pitch;       // patch rows 0 and 2 (of tile u, at u and u + tw)
    const float* odd = cols + (4 + j) * pitch;  // patch rows 1 and 3
    float* e = v + j * stride;
    for (int64_t u = 0; u < count; ++u) {
      const float r0 = even[u], r1 = odd[u], r2 = even[u + tw], r3 = odd[u + tw];
      e[u] = r0 - r2;
      e[4 * stride + u] = r1 + r2;
      e[8 * stride + u] = r2 - r1;
      e[12 * stride + u] = r1 - r3;
    }
  }
}

template <typename Set>
void tile_outputs(const float* __restrict m, int64_t stride, int64_t count, const float* bias, float* __restrict a,
                  float* __restrict y) {
  for (int64_t j = 0; j < 4; ++j) {  // A^T M: row i's column j at a[(4 i + j) * count + u]
    const float* m0 = m + j * stride;
    const float* m1 = m0 + 4 * stride;
    const float* m2 = m1 + 4 * stride;
    const float* m3 = m2 + 4 * stride;
    float* a0 = a + j * count;
    float* a1 = a + (4 + j) * count;
    for (int64_t u = 0; u < count; ++u) {
      const float s = m0[u] + m1[u], d = m1[u] - m2[u];
      a0[u] = s + m2[u];
      a1[u] = d - m3[u];
    }
  }
  for (int64_t i = 0; i < 2; ++i) {  // (A^T M) A: output (i, k) at y[(2 i + k) * count + u]
    const float* r = a + 4 * i * count;
    float* left = y + 2 * i * count;
    float* right = left + count;
    for (int64_t u = 0; u < count; ++u) {
      const float s = r[u] + r[count + u], d = r[count + u] - r[2 * count + u];
      left[u] = s + r[2 * count + u];
      right[u] = d - r[3 * count + u];
    }
    if (bias != nullptr) {
      const float add = *bias;
      for (int64_t u = 0; u < 2 * count; ++u) left[u] = left[u] + add;
    }
  }
}

template <typename Set>
void store_pairs(const float* __restrict left, const float* __restrict right, int64_t pairs, float* __restrict out) {
  for (int64_t u = 0; u < pairs; ++u) {
    out[2 * u] = left[u];
    out[2 * u + 1] = right[u];
  }
}

template <typename Set>
constexpr aclnn_cpu::WinogradTransforms transforms_of() {
  return {row_columns<Set>, tile_entries<Set>, tile_outputs<Set>, store_pairs<Set>};
}
