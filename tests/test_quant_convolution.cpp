// aclnnQuantConvolution through the public C API against independent oracles: NumPy's integer sums and
// float32 steps (tests/data/quant_golden.txt, bit for bit, on every instruction set and tile, both entries
// and strided layouts), int32 wrap-around past 2^31, the doc sample's geometry by counting, and the fast
// entry against the reference on random layers. Workspaces are poisoned before phase 2.
#include <gtest/gtest.h>

#include <Eigen/Core>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_quant_convolution.h"
#include "support/device_tensor.h"
#include "support/env.h"
#include "support/golden.h"
#include "support/hash_lines.h"

namespace testing_support {
namespace {

// One call's arguments (CANN's layouts; values row-major).
struct QuantCall {
  std::vector<int64_t> x_shape, weight_shape, out_shape;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  int32_t offsetx = 0;
  aclDataType scale_dtype = ACL_FLOAT, bias_dtype = ACL_FLOAT, out_dtype = ACL_BF16;
  std::vector<double> x, weight, scale, bias;
};

struct QuantResult {
  aclnnStatus status = 0;
  std::string error;
  std::vector<uint16_t> bits;
};

uint16_t bits16(double value, aclDataType dtype) {
  uint16_t bits;
  if (dtype == ACL_BF16) {
    const Eigen::bfloat16 v(static_cast<float>(value));
    std::memcpy(&bits, &v, 2);
  } else {
    const Eigen::half v(static_cast<float>(value));
    std::memcpy(&bits, &v, 2);
  }
  return bits;
}

// One instruction set with one of its integer tiles: the pair tile (ACLNN_CONVBWD_INT8_DOT=0) and, where the
// CPU has VNNI for the set (cpuid here: AVX512_VNNI for avx512, AVX-VNNI for avx2), the byte tile.
struct QuantPath {
  std::string isa;
  bool bytes;
  std::string name() const { return (isa.empty() ? "default" : isa) + (bytes ? "/bytes" : "/pairs"); }
};

bool cpu_has_vnni_for(const std::string& isa) {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (isa == "avx512") return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (c & (1u << 11)) != 0;
  if (isa == "avx2") return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 4)) != 0;
#endif
  (void)isa;
  return false;
}

std::vector<QuantPath> quant_paths() {
  std::vector<QuantPath> paths;
  for (const std::string& isa : runnable_isas()) {
    paths.push_back({isa, false});
    if (cpu_has_vnni_for(isa)) paths.push_back({isa, true});
  }
  return paths;
}

// The settings that plan `path`.
struct PathEnv {
  explicit PathEnv(const QuantPath& path)
      : isa("ACLNN_CONVBWD_ISA", path.isa), dot("ACLNN_CONVBWD_INT8_DOT", path.bytes ? "" : "0") {}
  ScopedEnv isa, dot;
};

QuantResult run_quant(const QuantCall& c, Layout layout) {
  const aclFormat spatial = c.x_shape.size() == 5 ? ACL_FORMAT_NCDHW : ACL_FORMAT_NCHW;
  DeviceTensor x(c.x_shape, ACL_INT8, spatial, layout), weight(c.weight_shape, ACL_INT8, spatial, layout);
  DeviceTensor scale({c.weight_shape[0]}, c.scale_dtype, ACL_FORMAT_ND, layout);
  DeviceTensor bias({c.weight_shape[0]}, c.bias_dtype, ACL_FORMAT_ND, layout);
  DeviceTensor out(c.out_shape, c.out_dtype, spatial, layout);
  x.fill(c.x), weight.fill(c.weight), scale.fill(c.scale), bias.fill(c.bias);
  out.poison();
  aclIntArray* stride = aclCreateIntArray(c.stride.data(), c.stride.size());
  aclIntArray* padding = aclCreateIntArray(c.padding.data(), c.padding.size());
  aclIntArray* dilation = aclCreateIntArray(c.dilation.data(), c.dilation.size());
  QuantResult result;
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  result.status = aclnnQuantConvolutionGetWorkspaceSize(x.get(), weight.get(), bias.get(), scale.get(), nullptr, stride,
                                                        padding, dilation, false, nullptr, c.groups, c.offsetx, nullptr,
                                                        out.get(), &size, &executor);
  if (result.status == 0) {
    void* workspace = nullptr;
    if (size > 0) {
      EXPECT_EQ(aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
      EXPECT_EQ(aclrtMemset(workspace, size, 0xFF, size), ACL_SUCCESS);
    }
    result.status = aclnnQuantConvolution(workspace, size, executor, nullptr);
    if (result.status == 0) result.status = aclrtSynchronizeStream(nullptr);
    if (workspace != nullptr) aclrtFree(workspace);
  }
  if (result.status != 0) {
    const char* message = aclGetRecentErrMsg();
    result.error = message == nullptr ? "" : message;
  } else {
    for (double v : out.read()) result.bits.push_back(bits16(v, c.out_dtype));
  }
  for (aclIntArray* a : {stride, padding, dilation}) aclDestroyIntArray(a);
  return result;
}

QuantCall call_of(const GoldenCase& g) {
  QuantCall c;
  const std::vector<int64_t> spatial = g.ints("in_size"), kernel = g.ints("kernel"), out = g.ints("out_size");
  const int64_t n = g.integer("batch"), cin = g.integer("in_channels"), cout = g.integer("out_channels");
  c.groups = g.integer("groups");
  c.x_shape = {n, cin}, c.weight_shape = {cout, cin / c.groups}, c.out_shape = {n, cout};
  for (size_t i = 0; i < spatial.size(); ++i) {
    c.x_shape.push_back(spatial[i]), c.weight_shape.push_back(kernel[i]), c.out_shape.push_back(out[i]);
  }
  c.stride = g.ints("stride"), c.padding = g.ints("padding"), c.dilation = g.ints("dilation");
  c.offsetx = static_cast<int32_t>(g.integer("offsetx"));
  const std::vector<int64_t> dtypes = g.ints("dtypes");
  c.scale_dtype = static_cast<aclDataType>(dtypes[0]);
  c.bias_dtype = static_cast<aclDataType>(dtypes[1]);
  c.out_dtype = static_cast<aclDataType>(dtypes[2]);
  c.x = g.fields.at("x"), c.weight = g.fields.at("weight"), c.scale = g.fields.at("scale"),
  c.bias = g.fields.at("bias");
  return c;
}

std::vector<uint16_t> golden_bits(const GoldenCase& g, const char* key) {
  std::vector<uint16_t> bits;
  for (double v : g.fields.at(key)) bits.push_back(static_cast<uint16_t>(v));
  return bits;
}

// Every instruction set and tile, both entries, three layouts: NumPy's bits.
TEST(QuantConvolution, GoldenCasesMatchBitForBitOnEveryPath) {
  const std::vector<GoldenCase> cases = read_golden("quant_golden.txt");
  ASSERT_EQ(cases.size(), 9u);
  for (const QuantPath& path : quant_paths()) {
    const PathEnv path_env(path);
    for (const char* entry : {"direct_s8", "ref"}) {
      const ScopedEnv entry_env("ACLNN_CONVBWD_KERNELS", entry);
      for (Layout layout : {Layout::kContiguous, Layout::kStrided, Layout::kReversed}) {
        for (const GoldenCase& g : cases) {
          const QuantResult r = run_quant(call_of(g), layout);
          ASSERT_EQ(r.status, 0) << g.name << ": " << r.error;
          EXPECT_EQ(r.bits, golden_bits(g, "out_bits"))
              << g.name << " path " << path.name() << " entry " << entry << " layout " << static_cast<int>(layout);
        }
      }
    }
  }
}

// The goldens' float32 order agrees with the correctly rounded value on the random cases (the generator's
// count; docs/quant_convolution.md gives the rate), and differs from it in every output of the case built so
// (where fusing the multiply and the add would give other bits too).
TEST(QuantConvolution, GoldensShowWhereTheFloatOrderMatters) {
  for (const GoldenCase& g : read_golden("quant_golden.txt")) {
    const std::vector<uint16_t> out = golden_bits(g, "out_bits"), exact = golden_bits(g, "exact_bits");
    if (g.name != "float_order_matters") {
      EXPECT_EQ(out, exact) << g.name;
      continue;
    }
    ASSERT_EQ(out.size(), exact.size());
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NE(out[i], exact[i]) << i;
  }
}

// A NaN or infinite scale or bias gives the same bits on every path: a NaN output is the quiet NaN of its
// sign, an infinite one infinity.
TEST(QuantConvolution, NonFiniteScalesAndBiasesGiveTheSameBitsOnEveryPath) {
  QuantCall c;
  c.x_shape = {1, 3, 4, 4}, c.weight_shape = {4, 3, 3, 3}, c.out_shape = {1, 4, 4, 4};
  c.stride = {1, 1}, c.padding = {1, 1}, c.dilation = {1, 1};
  for (int i = 0; i < 48; ++i) c.x.push_back((i * 37) % 255 - 127);
  for (int i = 0; i < 108; ++i) c.weight.push_back((i * 53) % 255 - 127);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  c.scale = {nan, inf, -inf, 0.5}, c.bias = {1, 2, 3, nan};
  for (aclDataType out : {ACL_FLOAT16, ACL_BF16}) {
    c.out_dtype = out;
    QuantResult truth;
    {
      const ScopedEnv entry("ACLNN_CONVBWD_KERNELS", "ref");
      truth = run_quant(c, Layout::kContiguous);
    }
    ASSERT_EQ(truth.status, 0) << truth.error;
    const uint16_t quiet = out == ACL_BF16 ? 0x7FC0 : 0x7E00, infinity = out == ACL_BF16 ? 0x7F80 : 0x7C00;
    for (int p = 0; p < 16; ++p) {
      EXPECT_EQ(truth.bits[p] & 0x7FFF, quiet) << p;       // NaN scale
      EXPECT_EQ(truth.bits[48 + p] & 0x7FFF, quiet) << p;  // NaN bias
      EXPECT_TRUE((truth.bits[16 + p] & 0x7FFF) == infinity || (truth.bits[16 + p] & 0x7FFF) == quiet) << p;
    }
    for (const QuantPath& path : quant_paths()) {
      const PathEnv path_env(path);
      const ScopedEnv entry("ACLNN_CONVBWD_KERNELS", "direct_s8");
      const QuantResult r = run_quant(c, Layout::kContiguous);
      ASSERT_EQ(r.status, 0) << r.error;
      EXPECT_EQ(r.bits, truth.bits) << path.name();
    }
  }
}

// The doc sample's call (all ones, 3x3x3 kernel, padding 1, scale 1, bias 1): each output is 1 + 2 * the
// window's in-image count (2 or 3 per axis), exact in BF16.
TEST(QuantConvolution, DocSampleGeometryCountsTheWindow) {
  QuantCall c;
  c.x_shape = {2, 2, 8, 8, 8}, c.weight_shape = {2, 2, 3, 3, 3}, c.out_shape = {2, 2, 8, 8, 8};
  c.stride = {1, 1, 1}, c.padding = {1, 1, 1}, c.dilation = {1, 1, 1};
  c.x.assign(2 * 2 * 512, 1.0), c.weight.assign(2 * 2 * 27, 1.0), c.scale = {1, 1}, c.bias = {1, 1};
  const QuantResult r = run_quant(c, Layout::kContiguous);
  ASSERT_EQ(r.status, 0) << r.error;
  ASSERT_EQ(r.bits.size(), 2048u);
  for (size_t i = 0; i < r.bits.size(); ++i) {
    const auto inside = [](int64_t at) { return at == 0 || at == 7 ? 2 : 3; };
    const int64_t w = static_cast<int64_t>(i) % 8, h = static_cast<int64_t>(i) / 8 % 8,
                  d = static_cast<int64_t>(i) / 64 % 8;
    EXPECT_EQ(r.bits[i], bits16(1.0 + 2.0 * inside(d) * inside(h) * inside(w), ACL_BF16)) << i;
  }
}

// Past 2^31 the int32 sum wraps (as the hardware's accumulator does) on every path: 147456 products of
// -128 * -128 sum to 2^31 + 2^28, which wraps to -(2^31 - 2^28); an INT32 bias wraps it back.
TEST(QuantConvolution, SumsWrapModulo2To32OnEveryPath) {
  QuantCall c;
  c.x_shape = {1, 16384, 3, 3}, c.weight_shape = {2, 16384, 3, 3}, c.out_shape = {1, 2, 1, 1};
  c.stride = {1, 1}, c.padding = {0, 0}, c.dilation = {1, 1};
  c.x.assign(147456, -128.0), c.weight.assign(2 * 147456, -128.0);
  c.scale_dtype = ACL_INT64, c.bias_dtype = ACL_INT32, c.out_dtype = ACL_FLOAT16;
  c.scale = {static_cast<double>(0x3A800000u), static_cast<double>(0x3A800000u)};  // 2^-10
  c.bias = {0, -1};
  const int64_t wrapped = int64_t{147456} * 16384 - (int64_t{1} << 32);  // -1879048192
  for (const QuantPath& path : quant_paths()) {
    const PathEnv path_env(path);
    for (const char* entry : {"direct_s8", "ref"}) {
      const ScopedEnv entry_env("ACLNN_CONVBWD_KERNELS", entry);
      const QuantResult r = run_quant(c, Layout::kContiguous);
      ASSERT_EQ(r.status, 0) << r.error;
      // float(-1879048192) is exact; times 2^-10 = -1835008, which FLOAT16 cannot hold: -inf
      EXPECT_EQ(r.bits[0], bits16(static_cast<double>(wrapped) / 1024, ACL_FLOAT16)) << path.name() << " " << entry;
      EXPECT_EQ(r.bits[0], 0xFC00) << path.name() << " " << entry;
      // bias -1: -1879048193 as float is -1879048192 again (RNE at 2^7 spacing)
      EXPECT_EQ(r.bits[1], 0xFC00) << path.name() << " " << entry;
    }
  }
}

// The fast entry gives the reference's bits on random layers (odd sizes, groups, strides, dilations,
// asymmetric padding, 2-D and 3-D, every bias kind) on every instruction set.
TEST(QuantConvolution, FastEntryGivesTheReferenceBitsOnRandomLayers) {
  std::mt19937 rng(65);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 24; ++round) {
    QuantCall c;
    const int dims = pick(2, 3), groups = pick(1, 3);
    // (every fourth layer more than one block of 16 output channels per group)
    // (every third layer rows of 16 and more, and more channels: the copy's 16-column interleave)
    const bool wide = round % 3 == 1;
    const int64_t n = pick(1, 2), cg = wide ? pick(4, 20) : pick(1, 9), og = round % 4 == 3 ? pick(17, 40) : pick(1, 7);
    c.groups = groups;
    c.x_shape = {n, cg * groups}, c.weight_shape = {og * groups, cg}, c.out_shape = {n, og * groups};
    for (int a = 0; a < dims; ++a) {
      const int64_t size = wide && a == dims - 1 ? pick(16, 40) : pick(1, 13),
                    k = pick(1, std::min<int>(4, static_cast<int>(size))), s = pick(1, 3),
                    d = k > 1 && size >= 2 * k ? pick(1, 2) : 1, lo = pick(0, 2), hi = pick(0, 2);
      c.x_shape.push_back(size), c.weight_shape.push_back(k);
      c.stride.push_back(s), c.dilation.push_back(d), c.padding.push_back(lo), c.padding.push_back(hi);
      c.out_shape.push_back((size + lo + hi - d * (k - 1) - 1) / s + 1);
    }
    c.offsetx = pick(-128, 127);
    const int kind = pick(0, 3);
    c.scale_dtype = kind == 0 ? ACL_INT64 : ACL_FLOAT;
    c.bias_dtype = kind == 0 ? ACL_INT32 : kind == 1 ? ACL_FLOAT16 : ACL_FLOAT;
    c.out_dtype = kind <= 1 ? ACL_FLOAT16 : (kind == 2 ? ACL_BF16 : ACL_FLOAT16);
    int64_t count_x = 1, count_w = 1;
    for (int64_t v : c.x_shape) count_x *= v;
    for (int64_t v : c.weight_shape) count_w *= v;
    for (int64_t i = 0; i < count_x; ++i) c.x.push_back(pick(-128, 127));
    for (int64_t i = 0; i < count_w; ++i) c.weight.push_back(pick(-128, 127));
    for (int64_t o = 0; o < og * groups; ++o) {
      c.scale.push_back(kind == 0 ? static_cast<double>(0x38000000u + pick(0, 0xFFFFF) * 8) : pick(1, 999) / 65536.0);
      c.bias.push_back(kind == 0 ? pick(-5000, 5000) : pick(-64, 64) / 16.0);
    }
    const QuantResult truth = [&] {
      const ScopedEnv entry_env("ACLNN_CONVBWD_KERNELS", "ref");
      return run_quant(c, Layout::kContiguous);
    }();
    ASSERT_EQ(truth.status, 0) << truth.error;
    for (const QuantPath& path : quant_paths()) {
      const PathEnv path_env(path);
      const ScopedEnv entry_env("ACLNN_CONVBWD_KERNELS", "direct_s8");
      QuantResult r;
      // (the fast entry computed it with the path's tile, not the reference it would fall back to)
      const std::string lines =
          verbose_lines([&] { r = run_quant(c, round % 2 == 0 ? Layout::kContiguous : Layout::kStrided); });
      EXPECT_NE(lines.find("output=direct_s8:"), std::string::npos) << lines;
      EXPECT_NE(lines.find(path.bytes ? ":tile=bytes" : ":tile=pairs"), std::string::npos) << lines;
      ASSERT_EQ(r.status, 0) << r.error;
      EXPECT_EQ(r.bits, truth.bits) << "round " << round << " path " << path.name();
    }
  }
}

}  // namespace
}  // namespace testing_support
