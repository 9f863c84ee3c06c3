#include "differential.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/dtype.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/core/plan.h"

namespace fuzz {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// A mismatch: what it was, then the trap.
void mismatch(const std::string& forced, size_t output, size_t element, double got, double want, double magnitude) {
  std::fprintf(stderr,
               "differential: entry '%s', output %zu, element %zu: %.9g, the reference %.9g (sum of |products| %.9g)\n",
               forced.c_str(), output, element, got, want, magnitude);
  __builtin_trap();
}

std::vector<double> values_of(const Elements& t) {
  std::vector<double> out;
  out.reserve(t.offsets.size());
  for (int64_t at : t.offsets) out.push_back(aclnn_cpu::load_element(t.data, t.dtype, at));
  return out;
}

std::vector<uint8_t> bytes_of(const Elements& t) {
  std::vector<uint8_t> out;
  const size_t size = aclnn_cpu::dtype_size(t.dtype);
  for (int64_t at : t.offsets) out.insert(out.end(), t.data + at * size, t.data + (at + 1) * size);
  return out;
}

void restore(const Elements& t, const std::vector<uint8_t>& bytes) {
  const size_t size = aclnn_cpu::dtype_size(t.dtype);
  for (size_t i = 0; i < t.offsets.size(); ++i) std::memcpy(t.data + t.offsets[i] * size, &bytes[i * size], size);
}

// Plans with ACLNN_CONVBWD_KERNELS = `kernels` and runs on a workspace of NaNs; returns each
// output's values.
std::vector<std::vector<double>> run_with(const char* kernels, const PlanCall& plan, RunCall run,
                                          const std::vector<Elements>& outputs) {
  setenv("ACLNN_CONVBWD_KERNELS", kernels, 1);
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  check(plan(&size, &executor) == 0);
  std::vector<uint8_t> workspace(static_cast<size_t>(size) + 1, 0xFF);  // NaN in every float type
  check(run(workspace.data(), size, executor, nullptr) == 0);
  check(aclrtSynchronizeStream(nullptr) == 0);
  std::vector<std::vector<double>> out;
  for (const Elements& t : outputs) out.push_back(values_of(t));
  return out;
}

// Bits of precision of a dtype's significand.
int precision(int32_t dtype) { return dtype == ACL_FLOAT16 ? 11 : dtype == ACL_BF16 ? 8 : 24; }

}  // namespace

const std::vector<std::string>& forcible_entries() {
  static const std::vector<std::string> names = [] {
    std::set<std::string> unique;
    for (aclnn_cpu::ConvPass pass : aclnn_cpu::kConvPasses) {
      for (const aclnn_cpu::ConvImpl* impl : aclnn_cpu::convolution_implementations(pass)) {
        if (std::strcmp(impl->name, "ref") != 0) unique.insert(impl->name);
      }
    }
    std::vector<std::string> list = {""};
    list.insert(list.end(), unique.begin(), unique.end());
    return list;
  }();
  return names;
}

void compare_with_reference(const std::string& forced, const PlanCall& plan, RunCall run,
                            const std::vector<Elements>& inputs, const std::vector<Elements>& outputs,
                            int64_t reduction) {
  std::vector<std::vector<uint8_t>> initial;
  for (const Elements& t : outputs) initial.push_back(bytes_of(t));
  // The reference on the inputs' magnitudes: each element's sum of |products|.
  std::vector<std::vector<uint8_t>> saved;
  for (const Elements& t : inputs) {
    saved.push_back(bytes_of(t));
    for (int64_t at : t.offsets) {
      aclnn_cpu::store_element(t.data, t.dtype, at, std::fabs(aclnn_cpu::load_element(t.data, t.dtype, at)));
    }
  }
  const std::vector<std::vector<double>> magnitude = run_with("ref", plan, run, outputs);
  for (size_t i = 0; i < inputs.size(); ++i) restore(inputs[i], saved[i]);
  for (size_t i = 0; i < outputs.size(); ++i) restore(outputs[i], initial[i]);
  const std::vector<std::vector<double>> want = run_with("ref", plan, run, outputs);
  for (size_t i = 0; i < outputs.size(); ++i) restore(outputs[i], initial[i]);
  const std::vector<std::vector<double>> got = run_with(forced.c_str(), plan, run, outputs);
  unsetenv("ACLNN_CONVBWD_KERNELS");
  const double accumulation = (2.0 * static_cast<double>(reduction) + 4.0) * std::ldexp(1.0, -24);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int bits = precision(outputs[i].dtype);
    const double smallest = outputs[i].dtype == ACL_FLOAT16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -126);
    for (size_t e = 0; e < want[i].size(); ++e) {
      const double a = got[i][e], r = want[i][e], m = magnitude[i][e];
      bool same = true;
      if (std::isnan(r) || std::isnan(a)) {
        same = std::isnan(r) && std::isnan(a);
      } else if (std::isinf(r) || std::isinf(a)) {
        same = a == r;
      } else if (std::isfinite(m)) {  // (a sum of magnitudes may overflow a 16-bit output)
        same = std::fabs(a - r) <= accumulation * m + std::ldexp(std::fabs(r), 1 - bits) + smallest;
      }
      if (!same) mismatch(forced, i, e, a, r, m);
    }
  }
}

}  // namespace fuzz
