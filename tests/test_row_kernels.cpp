// The row kernels (kernels/kits/kit.h: WeightRows, ForwardRows, InputRows), on every
// instruction set the CPU runs: each lane or output is the chain the header promises, emulated here
// with std::fma (bit for bit on the sets that fuse; the generic x86-64 set rounds each product, so
// within float error there), over channel counts, tap counts and rows around every set's blocks,
// widths around the 16 lanes and their 8-lane units, infinities past the width that the weight rows
// must not read, and a sentinel after the forward rows' planes that they must not write.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/core/cpu_isa.h"
#include "kernels/kits/kit.h"

namespace aclnn_cpu {
namespace {

struct Case {
  int64_t out_channels, taps, width, rows;
};

// One slice: a source of rows `row_stride` apart whose taps are (kernel row b, column c) of a grid
// `columns` wide, dY staged as WeightRows says, and lanes holding earlier sums.
struct Slice {
  Case c;
  int64_t columns, row_stride, dy_channels, dy_row_stride, vectors;
  std::vector<float> src, dy, lanes;
  std::vector<int64_t> row_base, tap;

  Slice(const Case& k, int64_t block, unsigned seed) : c(k) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    columns = std::min<int64_t>(k.taps, 3);
    const int64_t kernel_rows = (k.taps + columns - 1) / columns;
    vectors = (k.width + kRowLanes - 1) / kRowLanes;
    row_stride = vectors * kRowLanes + columns - 1;
    src.resize((k.rows + kernel_rows) * row_stride);
    for (int64_t i = 0; i < static_cast<int64_t>(src.size()); ++i) {
      // Entries no tap of a position inside the width reads are infinite: read, they would make NaNs.
      src[i] = i % row_stride >= k.width + columns - 1 ? INFINITY : normal(rng);
    }
    for (int64_t r = 0; r < k.rows; ++r) row_base.push_back(r * row_stride);
    for (int64_t t = 0; t < k.taps; ++t) tap.push_back(t / columns * row_stride + t % columns);
    dy_channels = (k.out_channels + block - 1) / block * block;
    dy_row_stride = vectors * dy_channels * kRowLanes;
    dy.assign(k.rows * dy_row_stride, 0.0f);
    for (int64_t r = 0; r < k.rows; ++r) {
      for (int64_t co = 0; co < k.out_channels; ++co) {
        for (int64_t w = 0; w < k.width; ++w) dy[at_dy(r, co, w)] = normal(rng);
      }
    }
    lanes.resize(k.out_channels * lanes_stride());
    for (float& x : lanes) x = normal(rng);
  }
  int64_t lanes_stride() const { return c.taps * kRowLanes + 5; }
  int64_t at_dy(int64_t r, int64_t co, int64_t w) const {
    return r * dy_row_stride + (w / kRowLanes * dy_channels + co) * kRowLanes + w % kRowLanes;
  }
  WeightRows job(float* out) const {
    WeightRows j{src.data(), row_base.data(), c.rows,      c.width,        tap.data(), c.taps,
                 dy.data(),  dy_row_stride,   dy_channels, c.out_channels, out,        lanes_stride()};
    j.prefetch_from[0] = reinterpret_cast<const char*>(src.data());  // (a run to prefetch: changes no value)
    j.prefetch_lines[0] = static_cast<int64_t>(src.size() * sizeof(float) / 64);
    return j;
  }
  // The lanes as row_kernels.h defines them: lane l of (co, t) adds the slice's sum, formed from +0 over
  // the column vectors and within each over the rows, in order, of dY(co, r, w) * src(r, t, w) for the
  // positions w = 16 * vector + l inside the width.
  std::vector<float> expected(bool fused) const {
    std::vector<float> out = lanes;
    for (int64_t co = 0; co < c.out_channels; ++co) {
      for (int64_t t = 0; t < c.taps; ++t) {
        for (int l = 0; l < kRowLanes; ++l) {
          float sum = 0.0f;
          for (int64_t v = 0; v < vectors; ++v) {
            const int64_t w = v * kRowLanes + l;
            if (w >= c.width) continue;
            for (int64_t r = 0; r < c.rows; ++r) {
              const float d = dy[at_dy(r, co, w)], x = src[row_base[r] + tap[t] + w];
              sum = fused ? std::fma(d, x, sum) : sum + d * x;
            }
          }
          float& lane = out[co * lanes_stride() + t * kRowLanes + l];
          lane += sum;
        }
      }
    }
    return out;
  }
};

std::vector<Isa> runnable_sets() {
  std::vector<Isa> sets{Isa::kGeneric};
#ifdef ACLNN_HAVE_X86_KERNELS
  if (detected_isa() >= Isa::kAvx2) sets.push_back(Isa::kAvx2);
  if (detected_isa() >= Isa::kAvx512) sets.push_back(Isa::kAvx512);
#endif
  return sets;
}

TEST(RowKernels, WeightLanesFollowTheirChains) {
  std::vector<Case> cases;
  for (int64_t out_channels : {1, 2, 3, 4, 5, 8, 9, 16}) {
    for (int64_t taps : {1, 3, 4, 9, 10, 25}) {
      for (int64_t width : {1, 7, 8, 9, 16, 17, 24, 28, 33}) cases.push_back({out_channels, taps, width, 3});
    }
  }
  cases.push_back({8, 9, 56, 1});
  cases.push_back({1, 9, 40, 7});
  for (Isa isa : runnable_sets()) {
    const RowKernels& kernels = isa_kit(isa).rows;
    const bool fused = isa != Isa::kGeneric;
    for (const Case& k : cases) {
      const Slice slice(k, kernels.weight_block(k.out_channels), static_cast<unsigned>(k.taps * 97 + k.width));
      std::vector<float> lanes = slice.lanes;
      kernels.weight_rows(slice.job(lanes.data()));
      const std::vector<float> want = slice.expected(fused);
      for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(testing::Message() << isa_name(isa) << " out_channels " << k.out_channels << " taps " << k.taps
                                        << " width " << k.width << " entry " << i);
        ASSERT_FALSE(std::isnan(lanes[i]));
        if (fused) {
          ASSERT_EQ(std::memcmp(&lanes[i], &want[i], sizeof(float)), 0) << lanes[i] << " vs " << want[i];
        } else {
          ASSERT_NEAR(lanes[i], want[i], 1e-4f * (1.0f + std::fabs(want[i])));
        }
      }
    }
  }
}

// A forward_rows job: `channels` staged source channels of rows `row_stride` apart (taps as above),
// weights in blocks of kForwardBlock output channels, every output row `width` wide.
struct ForwardCase {
  int64_t out_channels, channels, taps, width, rows;
};

TEST(RowKernels, ForwardRowsFollowTheirChains) {
  std::vector<ForwardCase> cases;
  for (int64_t out_channels : {1, 2, 3, 4, 5, 8}) {
    for (int64_t width : {1, 4, 7, 8, 9, 16, 17, 24, 28, 31, 33, 56}) {
      for (int64_t rows : {1, 2, 3, 4, 7}) cases.push_back({out_channels, 2, 9, width, rows});
    }
  }
  // One channel of 3 x 3 taps: its rows a grid (ForwardRows::grid_rows), in planes of 3 rows where
  // there are 7 or 9 (bands and rows left over in each).
  for (int64_t width : {1, 7, 16, 17, 31, 33, 56}) {
    for (int64_t rows : {1, 2, 3, 4, 5, 7, 9}) cases.push_back({1, 1, 9, width, rows});
  }
  cases.push_back({8, 8, 9, 28, 28});
  cases.push_back({1, 1, 25, 57, 5});
  cases.push_back({1, 3, 15, 20, 3});
  for (Isa isa : runnable_sets()) {
    const RowKernels& kernels = isa_kit(isa).rows;
    const bool fused = isa != Isa::kGeneric;
    for (const ForwardCase& k : cases) {
      std::mt19937 rng(static_cast<unsigned>(k.width * 31 + k.rows * 7 + k.out_channels));
      std::normal_distribution<float> normal;
      const int64_t columns = std::min<int64_t>(k.taps, 3), kernel_rows = (k.taps + columns - 1) / columns;
      const int64_t row_stride = (k.width + kRowLanes - 1) / kRowLanes * kRowLanes + columns - 1;
      const int64_t channel_stride = (k.rows + kernel_rows) * row_stride;
      std::vector<float> src(k.channels * channel_stride), weights(k.channels * k.taps * kForwardBlock, 0.0f);
      for (float& x : src) x = normal(rng);
      for (int64_t i = 0; i < k.channels * k.taps; ++i) {
        for (int64_t co = 0; co < k.out_channels; ++co) weights[i * kForwardBlock + co] = normal(rng);
      }
      std::vector<int64_t> row_base, tap;
      for (int64_t r = 0; r < k.rows; ++r) row_base.push_back(r * row_stride);
      for (int64_t t = 0; t < k.taps; ++t) tap.push_back(t / columns * row_stride + t % columns);
      // Every output channel's plane, with a sentinel after the last: nothing past the rows is written.
      const int64_t plane = k.rows * k.width;
      std::vector<float> out(k.out_channels * plane + 8, -7.0f);
      // One output channel: a chain per kernel row (`columns` taps); more: one chain.
      const int64_t chain_taps = k.out_channels == 1 ? columns : 0;
      // Half of the cases with a bias (a forward operator's): added to each sum as it is stored.
      std::vector<float> bias(k.out_channels);
      for (float& b : bias) b = normal(rng);
      const bool with_bias = (k.width + k.rows) % 2 == 1;
      ForwardRows job{src.data(),     row_base.data(),
                      k.rows,         channel_stride,
                      k.channels,     tap.data(),
                      k.taps,         weights.data(),
                      k.out_channels, out.data(),
                      plane,          k.width,
                      chain_taps,     with_bias ? bias.data() : nullptr};
      if (k.channels == 1 && k.taps == 9) {
        job.plane_rows = k.rows == 7 || k.rows == 9 ? 3 : k.rows;
        job.row_step = row_stride;
        job.grid_rows = 3;
      }
      kernels.forward_rows(job);
      for (int64_t co = 0; co < k.out_channels; ++co) {
        for (int64_t r = 0; r < k.rows; ++r) {
          for (int64_t w = 0; w < k.width; ++w) {
            float sum = 0.0f, chain = 0.0f;
            for (int64_t c = 0; c < k.channels; ++c) {
              for (int64_t t = 0; t < k.taps; ++t) {
                const float a = weights[(c * k.taps + t) * kForwardBlock + co];
                const float x = src[c * channel_stride + row_base[r] + tap[t] + w];
                chain = fused ? std::fma(a, x, chain) : chain + a * x;
                if (chain_taps > 0 && ((t + 1) % chain_taps == 0 || t + 1 == k.taps)) sum += chain, chain = 0.0f;
              }
            }
            sum += chain;
            if (with_bias) sum += bias[co];
            const float got = out[co * plane + r * k.width + w];
            SCOPED_TRACE(testing::Message() << isa_name(isa) << " out_channels " << k.out_channels << " width "
                                            << k.width << " rows " << k.rows << " at " << co << "," << r << "," << w);
            if (fused) {
              ASSERT_EQ(std::memcmp(&got, &sum, sizeof(float)), 0) << got << " vs " << sum;
            } else {
              ASSERT_NEAR(got, sum, 1e-4f * (1.0f + std::fabs(sum)));
            }
          }
        }
      }
      for (int64_t i = k.out_channels * plane; i < static_cast<int64_t>(out.size()); ++i) ASSERT_EQ(out[i], -7.0f);
    }
  }
}

// The direct gradInput rows: every output the blocked sum of its (tap, output channel) products
// (kernels/common/blocked_sum.h), emulated here, over channel counts around the blocks and groups, taps
// whose first or last positions read padding, widths around every set's chunks, and 1-3 blocks of 16
// channels.
TEST(RowKernels, InputRowsFollowTheBlockedSum) {
  for (Isa isa : runnable_sets()) {
    const RowKernels& kernels = isa_kit(isa).rows;
    const bool fused = isa != Isa::kGeneric;
    for (int64_t channels : {16, 37, 64, 100, 300}) {
      for (int64_t taps : {1, 3, 5}) {
        for (int64_t width : {5, 14, 33}) {
          const int64_t blocks = 1 + (channels + taps + width) % 3;
          std::mt19937 rng(static_cast<unsigned>(channels * 131 + taps * 17 + width));
          std::normal_distribution<float> normal;
          // Tap t reads dY's positions [first, end), zeros (the staged padding) around them.
          const int64_t dy_channel_stride = width + 3, dy_tap_stride = channels * dy_channel_stride;
          std::vector<int64_t> dy_tap, weight_tap, first, end;
          for (int64_t t = 0; t < taps; ++t) {
            dy_tap.push_back(t * dy_tap_stride + 1);
            weight_tap.push_back(t * channels * kRowLanes);
            first.push_back(t % 3 == 1 ? std::min<int64_t>(t, width) : 0);
            end.push_back(t % 3 == 2 ? width - std::min<int64_t>(t / 2, width) : width);
          }
          std::vector<float> dy(taps * dy_tap_stride + 8, 0.0f), weights(blocks * taps * channels * kRowLanes);
          for (int64_t t = 0; t < taps; ++t) {
            for (int64_t co = 0; co < channels; ++co) {
              for (int64_t j = first[t]; j < end[t]; ++j) dy[dy_tap[t] + co * dy_channel_stride + j] = normal(rng);
            }
          }
          for (float& x : weights) x = normal(rng);
          std::vector<float> out(blocks * width * kRowLanes, NAN);
          const InputRows job{
              dy.data(),         dy_tap.data(),  weight_tap.data(),           first.data(), end.data(), taps, channels,
              dy_channel_stride, weights.data(), taps * channels * kRowLanes, blocks,       out.data(), width};
          kernels.input_rows(job);
          for (int64_t b = 0; b < blocks; ++b) {
            for (int64_t j = 0; j < width; ++j) {
              for (int64_t l = 0; l < kRowLanes; ++l) {
                // The products in (tap, channel) order: chains of kSumBlock from zero, added in groups of
                // kSumGroup, the groups added in order.
                float sum = 0.0f, group = 0.0f, chain = 0.0f;
                for (int64_t r = 0; r < taps * channels; ++r) {
                  const int64_t t = r / channels, co = r % channels;
                  if (j >= first[t] && j < end[t]) {
                    const float w = weights[b * taps * channels * kRowLanes + weight_tap[t] + co * kRowLanes + l];
                    const float d = dy[dy_tap[t] + co * dy_channel_stride + j];
                    chain = fused ? std::fma(w, d, chain) : chain + w * d;
                  }
                  if ((r + 1) % kSumBlock == 0 || r + 1 == taps * channels) group += chain, chain = 0.0f;
                  if ((r + 1) % kSumGroup == 0 || r + 1 == taps * channels) sum += group, group = 0.0f;
                }
                const float got = out[(b * width + j) * kRowLanes + l];
                SCOPED_TRACE(testing::Message() << isa_name(isa) << " channels " << channels << " taps " << taps
                                                << " width " << width << " at " << b << "," << j << "," << l);
                if (fused) {
                  ASSERT_EQ(std::memcmp(&got, &sum, sizeof(float)), 0) << got << " vs " << sum;
                } else {
                  ASSERT_NEAR(got, sum, 1e-4f * (1.0f + std::fabs(sum)));
                }
              }
            }
          }
        }
      }
    }
  }
}

// Two rows at once (InputRows::rows 2, where a set takes rows of its paired_row_width in pairs): each
// row's results the bits of that row computed alone (whose sums the test above checks), over channel
// counts around the blocks and groups, taps whose first or last positions read padding, and 1-3 blocks.
TEST(RowKernels, InputRowsTakeTwoRowsAsEachAlone) {
  int checked = 0;
  for (Isa isa : runnable_sets()) {
    const RowKernels& kernels = isa_kit(isa).rows;
    const int64_t width = kernels.paired_row_width;
    if (width == 0) continue;
    for (int64_t channels : {16, 40, 100}) {
      for (int64_t taps : {3, 9}) {
        const int64_t blocks = 1 + (channels + taps) % 3;
        std::mt19937 rng(static_cast<unsigned>(channels * 7 + taps));
        std::normal_distribution<float> normal;
        // Row r's tap t at dy_tap[t] + r * row_step, positions [first, end) inside its dY row.
        const int64_t dy_channel_stride = width + 4, row_step = channels * dy_channel_stride,
                      dy_tap_stride = 2 * row_step;
        std::vector<int64_t> dy_tap, weight_tap, first, end;
        for (int64_t t = 0; t < taps; ++t) {
          dy_tap.push_back(t * dy_tap_stride + 2);
          weight_tap.push_back(t * channels * kRowLanes);
          first.push_back(t % 3 == 1 ? t % 2 + 1 : 0);
          end.push_back(t % 3 == 2 ? width - (t % 2 + 1) : width);
        }
        std::vector<float> dy(taps * dy_tap_stride + 8, 0.0f), weights(blocks * taps * channels * kRowLanes);
        for (int64_t t = 0; t < taps; ++t) {
          for (int64_t r = 0; r < 2; ++r) {
            for (int64_t co = 0; co < channels; ++co) {
              for (int64_t j = first[t]; j < end[t]; ++j)
                dy[dy_tap[t] + r * row_step + co * dy_channel_stride + j] = normal(rng);
            }
          }
        }
        for (float& x : weights) x = normal(rng);
        std::vector<float> both(blocks * 2 * width * kRowLanes, NAN);
        InputRows job{
            dy.data(),         dy_tap.data(),  weight_tap.data(),           first.data(), end.data(),  taps,  channels,
            dy_channel_stride, weights.data(), taps * channels * kRowLanes, blocks,       both.data(), width, 2,
            row_step};
        kernels.input_rows(job);
        for (int64_t r = 0; r < 2; ++r) {
          std::vector<float> alone(blocks * width * kRowLanes, NAN);
          job.dy = dy.data() + r * row_step, job.out = alone.data(), job.rows = 1, job.row_step = 0;
          kernels.input_rows(job);
          for (int64_t b = 0; b < blocks; ++b) {
            for (int64_t j = 0; j < width * kRowLanes; ++j) {
              const float got = both[(b * 2 + r) * width * kRowLanes + j], want = alone[b * width * kRowLanes + j];
              ASSERT_EQ(std::memcmp(&got, &want, sizeof(float)), 0)
                  << isa_name(isa) << " channels " << channels << " taps " << taps << " row " << r << " block " << b
                  << " entry " << j << ": " << got << " vs " << want;
            }
          }
          ++checked;
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no instruction set here takes rows in pairs";
}

// A source read in place (ForwardRows::source_row, where a set's reads_in_place takes the job: one
// channel of 3 x 3 taps on a grid): the bits of the same job on the source staged into zero-padded rows,
// over widths and heights around the bands and vectors, paddings of 0-2 (rows and columns read wholly
// or partly outside the plane) and a dilation of 1 or 2 along W; the plane at the start and at the end
// of its memory, an unreadable page on either side, so that a load of any lane outside the plane faults.
TEST(RowKernels, ForwardRowsReadTheSourceInPlaceAsStaged) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  int checked = 0;
  for (Isa isa : runnable_sets()) {
    const RowKernels& kernels = isa_kit(isa).rows;
    for (int64_t width : {1, 2, 7, 15, 16, 17, 28, 33, 56, 64}) {
      for (int64_t height : {1, 2, 3, 4, 5, 6, 9}) {
        for (int64_t pad : {0, 1, 2}) {
          for (int64_t dilation : {1, 2}) {
            const int64_t out_h = height + 2 * pad - 2, out_w = width + 2 * pad - 2 * dilation;
            if (out_h <= 0 || out_w <= 0) continue;
            std::mt19937 rng(static_cast<unsigned>(width * 131 + height * 17 + pad * 5 + dilation));
            std::normal_distribution<float> normal;
            std::vector<float> weights(9 * kForwardBlock, 0.0f), bias{normal(rng)};
            for (int64_t t = 0; t < 9; ++t) weights[t * kForwardBlock] = normal(rng);
            std::vector<int64_t> rows_at, tap, source_row, tap_column;
            for (int64_t r = 0; r < out_h; ++r) source_row.push_back(r - pad), rows_at.push_back((r - pad) * width);
            for (int64_t kh = 0; kh < 3; ++kh) {
              for (int64_t kw = 0; kw < 3; ++kw) {
                tap_column.push_back(kw * dilation - pad);
                tap.push_back(kh * width + kw * dilation - pad);
              }
            }
            ForwardRows job{nullptr, rows_at.data(), out_h,         height * width, 1, tap.data(), 9, weights.data(),
                            1,       nullptr,        out_h * out_w, out_w,          3, bias.data()};
            job.plane_rows = out_h, job.row_step = width, job.grid_rows = 3;
            if (!kernels.reads_in_place(job)) continue;
            job.source_row = source_row.data(), job.tap_column = tap_column.data();
            job.source_height = height, job.source_width = width;
            // The staged job: the plane in zero-padded rows.
            const int64_t row_stride = (out_w + kRowLanes - 1) / kRowLanes * kRowLanes + 2 * dilation;
            const int64_t staged_rows = out_h + 2;
            std::vector<float> plane(height * width), staged(staged_rows * row_stride, 0.0f);
            for (float& x : plane) x = normal(rng);
            for (int64_t y = 0; y < staged_rows; ++y) {
              for (int64_t x = 0; x < row_stride; ++x) {
                const int64_t sy = y - pad, sx = x - pad;
                if (sy >= 0 && sy < height && sx >= 0 && sx < width)
                  staged[y * row_stride + x] = plane[sy * width + sx];
              }
            }
            std::vector<int64_t> staged_base, staged_tap;
            for (int64_t r = 0; r < out_h; ++r) staged_base.push_back(r * row_stride);
            for (int64_t t = 0; t < 9; ++t) staged_tap.push_back(t / 3 * row_stride + t % 3 * dilation);
            std::vector<float> expected(out_h * out_w), got(out_h * out_w);
            ForwardRows from_staged{staged.data(),
                                    staged_base.data(),
                                    out_h,
                                    staged_rows * row_stride,
                                    1,
                                    staged_tap.data(),
                                    9,
                                    weights.data(),
                                    1,
                                    expected.data(),
                                    out_h * out_w,
                                    out_w,
                                    3,
                                    bias.data()};
            from_staged.plane_rows = out_h, from_staged.row_step = row_stride, from_staged.grid_rows = 3;
            kernels.forward_rows(from_staged);
            // The plane first, then last, in pages of its own between two unreadable ones.
            const size_t bytes = plane.size() * sizeof(float), data_pages = (bytes + page - 1) / page;
            void* map =
                mmap(nullptr, (data_pages + 2) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ASSERT_NE(map, MAP_FAILED);
            char* data = static_cast<char*>(map) + page;
            ASSERT_EQ(mprotect(map, page, PROT_NONE), 0);
            ASSERT_EQ(mprotect(data + data_pages * page, page, PROT_NONE), 0);
            for (size_t at : {size_t{0}, data_pages * page - bytes}) {
              std::memcpy(data + at, plane.data(), bytes);
              job.src = reinterpret_cast<const float*>(data + at), job.out = got.data();
              std::fill(got.begin(), got.end(), -7.0f);
              kernels.forward_rows(job);
              SCOPED_TRACE(testing::Message() << isa_name(isa) << " width " << width << " height " << height << " pad "
                                              << pad << " dilation " << dilation << " at " << at);
              ASSERT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0);
              ++checked;
            }
            munmap(map, (data_pages + 2) * page);
          }
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no instruction set here reads a source in place";
}

}  // namespace
}  // namespace aclnn_cpu
