// libFuzzer target: the backward operators' GetWorkspaceSize functions and the forward ones' (with or
// without a bias) on hostile and near-valid arguments, and, for
// small accepted problems, phase 2 on canaried buffers. A finding is a sanitizer report, a crash,
// or one of the checks below (trap): an output or the workspace written outside its bytes,
// outputs written by a refused call, a phase-1 failure without a message, two runs of one
// repeatable executor that disagree, or (valid problems: values drawn from the input, small shapes
// with four-value padding, dilation, strides, groups, 16-bit dtypes, gapped and permuted views,
// any outputMask; forward: also 1-D [left, right] padding, output padding past the stride, NDHWC)
// results of a forced implementation-list entry that differ from the reference's (differential.h).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "common/dtype.h"
#include "differential.h"

// c_caller.c: aclCreateTensor with any int as dtype and format, as C callers pass them.
extern "C" aclTensor* fuzz_create_tensor(const int64_t* dims, uint64_t dims_num, int32_t dtype, const int64_t* strides,
                                         int64_t offset, int32_t format, const int64_t* storage_dims,
                                         uint64_t storage_dims_num, void* data);

namespace {

constexpr size_t kCanary = 64;             // guard bytes before and after every buffer
constexpr uint8_t kCanaryByte = 0xA5;      // their value
constexpr int64_t kMaxElements = 1 << 14;  // larger views get no memory (phase 1 only)
constexpr uint64_t kMaxWorkspace = 64u << 20;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// A memory block with canaries on both sides.
class Guarded {
 public:
  explicit Guarded(size_t bytes) : bytes_(bytes), block_(bytes + 2 * kCanary, kCanaryByte) {}
  uint8_t* data() { return block_.data() + kCanary; }
  size_t bytes() const { return bytes_; }
  bool canaries_intact() const {
    for (size_t i = 0; i < kCanary; ++i) {
      if (block_[i] != kCanaryByte || block_[kCanary + bytes_ + i] != kCanaryByte) return false;
    }
    return true;
  }
  std::vector<uint8_t> contents() const { return {block_.begin() + kCanary, block_.end() - kCanary}; }

 private:
  size_t bytes_;
  std::vector<uint8_t> block_;
};

// Saturating arithmetic for the fuzzer's own bookkeeping of hostile sizes.
int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}
int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}

// Mostly small sizes, sometimes hostile ones.
int64_t some_size(FuzzedDataProvider& in) {
  static const int64_t kHostile[] = {
      -1,    -7,     INT64_MAX, INT64_MIN, INT64_MAX / 2, int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62,
      65536, 1000000};
  const uint8_t pick = in.ConsumeIntegral<uint8_t>();
  if (pick < 230) return pick % 8;
  return kHostile[pick % (sizeof kHostile / sizeof kHostile[0])];
}

// A value for an input element: a multiple of 1/32 in [-4, 4) (exact in every dtype), sometimes
// an infinity or a NaN.
double some_value(FuzzedDataProvider& in) {
  const int8_t pick = in.ConsumeIntegral<int8_t>();
  if (pick == 127) return NAN;
  if (pick == -128) return INFINITY;
  if (pick == -127) return -INFINITY;
  return pick / 32.0;
}

bool valid_dtype(int32_t dtype) { return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16; }

int32_t some_dtype(FuzzedDataProvider& in) {
  static const int32_t kValid[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  const uint8_t pick = in.ConsumeIntegral<uint8_t>();
  if (pick < 240) return kValid[pick % 3];
  return in.ConsumeIntegral<int32_t>();  // any int, also outside the enum
}

// A tensor built from the input: shape, dtype, format, layout, and memory when it is small. Not
// `mutate`d: a layout whose elements are distinct (dense, permuted, gapped, offset) and values
// drawn from the input; `mutate`d: those, strides of 0 or small negative ones, hostile offsets, and
// strides reaching past the address space within a storage that large.
class FuzzTensor {
 public:
  FuzzTensor(FuzzedDataProvider& in, std::vector<int64_t> shape, int32_t dtype, int32_t format, bool mutate)
      : shape_(std::move(shape)), dtype_(dtype) {
    for (int64_t size : shape_) empty_ = empty_ || size == 0;
    strides_.assign(shape_.size(), 1);
    for (size_t i = shape_.size(); i-- > 1;) strides_[i - 1] = sat_mul(strides_[i], shape_[i] > 0 ? shape_[i] : 1);
    int64_t offset = 0;
    static const uint8_t kDistinct[] = {0, 0, 1, 2, 2, 5};
    const uint8_t layout = mutate ? in.ConsumeIntegral<uint8_t>() % 8 : kDistinct[in.ConsumeIntegral<uint8_t>() % 6];
    if (layout == 1 && shape_.size() > 1) std::swap(strides_.front(), strides_.back());  // permuted
    if (layout == 2) {
      for (int64_t& s : strides_) s = sat_add(sat_mul(s, 2), 1);  // gapped
      offset = 3;
    }
    if (layout == 3 && !shape_.empty()) strides_[in.ConsumeIntegralInRange<size_t>(0, shape_.size() - 1)] = 0;
    if (layout == 4 && !shape_.empty()) {
      strides_[in.ConsumeIntegralInRange<size_t>(0, shape_.size() - 1)] = in.ConsumeIntegralInRange<int64_t>(-3, 3);
    }
    if (layout == 5) offset = mutate ? some_size(in) : in.ConsumeIntegralInRange<int64_t>(1, 5);
    // Views past the address space inside a storage that large: a stride whose byte offsets wrap 2^64
    // (onto another tensor, for some data addresses), or that spans 2^63 bytes of 4-byte elements.
    const bool far = layout >= 6 && !shape_.empty() && in.ConsumeIntegral<uint8_t>() < 64;  // (else dense)
    if (far) {
      strides_[in.ConsumeIntegralInRange<size_t>(0, shape_.size() - 1)] =
          layout == 6 ? (int64_t{1} << 62) - in.ConsumeIntegralInRange<int64_t>(0, 64) : int64_t{1} << 61;
    }
    const bool no_data = mutate && in.ConsumeIntegral<uint8_t>() < 16;
    const bool no_storage = mutate && in.ConsumeIntegral<uint8_t>() < 32;
    // The elements the view reaches, when they are few: those get memory.
    int64_t lowest = offset, highest = offset, count = 1;
    bool small = true;
    for (size_t i = 0; i < shape_.size() && small; ++i) {
      if (shape_[i] < 0 || shape_[i] > kMaxElements) {
        small = false;
        break;
      }
      count *= shape_[i];
      if (count > kMaxElements) small = false;
      const int64_t reach = sat_mul(shape_[i] - 1, strides_[i]);
      int64_t& end = reach < 0 ? lowest : highest;
      end = sat_add(end, reach);
    }
    if (small && count == 0) lowest = highest = offset;
    small = small && lowest >= 0 && highest < kMaxElements && offset >= 0 && offset < kMaxElements;
    const int64_t elements = small ? highest + 1 : 0;
    storage_shape_ = {small ? elements : far ? sat_add(highest, 1) : (count > 0 ? count : 1)};
    const size_t element_bytes = dtype == ACL_FLOAT16 || dtype == ACL_BF16 ? 2 : dtype == ACL_FLOAT ? 4 : 8;
    if (small && !no_data) {
      memory_ = std::make_unique<Guarded>(static_cast<size_t>(elements) * element_bytes);
      for (size_t i = 0; i < memory_->bytes(); ++i) memory_->data()[i] = static_cast<uint8_t>(i * 7 + 1);
    }
    offset_ = offset;
    if (!mutate && memory_ && valid_dtype(dtype)) {
      for (int64_t at : element_offsets()) aclnn_cpu::store_element(memory_->data(), dtype, at, some_value(in));
    }
    tensor_ = fuzz_create_tensor(shape_.data(), shape_.size(), dtype, strides_.data(), offset, format,
                                 no_storage ? nullptr : storage_shape_.data(), no_storage ? 0 : 1,
                                 memory_ ? memory_->data() : nullptr);
  }
  // The tensor's memory for the differential check (a valid dtype and memory behind it).
  fuzz::Elements elements() const { return {memory_->data(), dtype_, element_offsets()}; }
  bool has_values() const { return memory_ != nullptr && valid_dtype(dtype_); }
  ~FuzzTensor() { aclDestroyTensor(tensor_); }
  aclTensor* get() const { return tensor_; }
  // A non-empty view with no memory behind it (an empty one never needs any).
  bool lacks_data() const { return memory_ == nullptr && !empty_; }
  bool canaries_intact() const { return memory_ == nullptr || memory_->canaries_intact(); }
  std::vector<uint8_t> contents() const { return memory_ ? memory_->contents() : std::vector<uint8_t>{}; }

 private:
  // The storage element of each logical element, row-major (for a view with memory).
  std::vector<int64_t> element_offsets() const {
    int64_t count = 1;
    for (int64_t size : shape_) count *= size;
    std::vector<int64_t> out;
    for (int64_t logical = 0; logical < count; ++logical) {
      int64_t rest = logical, at = offset_;
      for (size_t i = shape_.size(); i-- > 0;) {
        at += rest % shape_[i] * strides_[i];
        rest /= shape_[i];
      }
      out.push_back(at);
    }
    return out;
  }

  std::vector<int64_t> shape_, strides_, storage_shape_;
  int32_t dtype_;
  int64_t offset_ = 0;
  std::unique_ptr<Guarded> memory_;
  bool empty_ = false;
  aclTensor* tensor_ = nullptr;
};

using Tensors = std::vector<std::unique_ptr<FuzzTensor>>;
using Used = std::vector<const FuzzTensor*>;  // the tensors a run reads or writes

// Phase 2 on a canaried workspace (at an odd address, sometimes), twice when repeatable.
// Returns whether the plan ran (every tensor with memory, status 0).
template <typename Run>
bool run_phase_two(FuzzedDataProvider& in, Run run, aclOpExecutor* executor, uint64_t workspace_size,
                   const Used& inputs, const Used& outputs) {
  bool all_memory = true;
  for (const auto& t : inputs) all_memory = all_memory && !t->lacks_data();
  for (const auto& t : outputs) all_memory = all_memory && !t->lacks_data();
  const bool repeat = in.ConsumeBool();
  if (repeat) check(aclSetAclOpExecutorRepeatable(executor) == 0);
  if (workspace_size > kMaxWorkspace) {
    if (!repeat) check(run(nullptr, 0, executor, nullptr) != 0);  // refused: missing data or workspace
    if (repeat) aclDestroyAclOpExecutor(executor);
    return false;
  }
  const size_t shift = in.ConsumeIntegralInRange<size_t>(0, 3) * 4;  // the workspace need not be aligned
  Guarded workspace(workspace_size + shift);
  std::vector<std::vector<uint8_t>> first;
  bool ran = false;
  for (int round = 0; round < (repeat ? 2 : 1); ++round) {
    const std::vector<std::vector<uint8_t>> before = [&] {
      std::vector<std::vector<uint8_t>> bytes;
      for (const auto& t : outputs) bytes.push_back(t->contents());
      return bytes;
    }();
    const aclnnStatus status = run(workspace.data() + shift, workspace_size, executor, nullptr);
    check(aclrtSynchronizeStream(nullptr) == 0 || status != 0);
    check(workspace.canaries_intact());
    for (const auto& t : outputs) check(t->canaries_intact());
    for (const auto& t : inputs) check(t->canaries_intact());
    if (status != 0 || !all_memory) {
      check(status != 0);  // a tensor without data is refused ...
      for (size_t i = 0; i < outputs.size(); ++i) check(outputs[i]->contents() == before[i]);  // ... untouched
      break;
    }
    std::vector<std::vector<uint8_t>> after;
    for (const auto& t : outputs) after.push_back(t->contents());
    if (round == 0) first = after;
    if (round == 1) check(after == first);  // deterministic, overlapping outputs included
    ran = true;
  }
  if (repeat) check(aclDestroyAclOpExecutor(executor) == 0);
  return ran;
}

// The differential check (differential.h) of a valid problem that ran, with the entry the input
// picks forced.
void differential(FuzzedDataProvider& in, const fuzz::PlanCall& plan, fuzz::RunCall run, const Used& inputs,
                  const Used& outputs, int64_t reduction) {
  std::vector<fuzz::Elements> in_elements, out_elements;
  for (const auto& t : inputs) {
    if (!t->has_values()) return;
    in_elements.push_back(t->elements());
  }
  for (const auto& t : outputs) {
    if (!t->has_values()) return;
    out_elements.push_back(t->elements());
  }
  const std::vector<std::string>& names = fuzz::forcible_entries();
  const std::string& forced = names[in.ConsumeIntegral<uint8_t>() % names.size()];
  fuzz::compare_with_reference(forced, plan, run, in_elements, out_elements, reduction);
}

int64_t product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p = sat_mul(p, v);
  return p;
}

aclIntArray* int_array(const std::vector<int64_t>& values) { return aclCreateIntArray(values.data(), values.size()); }

// A valid convolution drawn from the input: every size derived from the parameters.
struct Problem {
  int p = 1;
  int64_t groups = 1, batch = 0, cin = 0, cout = 1;
  bool transposed = false;
  std::vector<int64_t> stride, padding, dilation, output_padding, kernel, size, out;
  std::vector<int64_t> x_shape, gy_shape, w_shape;  // input, gradOutput (the forward output), weight
  int32_t format = ACL_FORMAT_NCL;
};

// `forward`: aclnnConvolution's problems, which may also have 1-D [left, right] padding, an output
// padding up to the larger of stride and dilation less one, and (3-D) NDHWC tensors.
Problem some_problem(FuzzedDataProvider& in, bool forward = false) {
  Problem c;
  c.p = in.ConsumeIntegralInRange<int>(1, 3);
  const int p = c.p;
  c.groups = in.ConsumeIntegralInRange<int64_t>(1, 3);
  c.batch = in.ConsumeIntegralInRange<int64_t>(0, 2);
  c.cin = c.groups * in.ConsumeIntegralInRange<int64_t>(0, 3);
  c.cout = c.groups * in.ConsumeIntegralInRange<int64_t>(1, 3);
  c.transposed = in.ConsumeBool();
  // 2-D: four padding values [top, bottom, left, right] half of the time (forward 1-D: [left, right]),
  // a side up to 3 (past the reach of a small kernel).
  const bool four_pads = (p == 2 || (forward && p == 1)) && in.ConsumeBool();
  c.stride.resize(p), c.dilation.resize(p), c.output_padding.assign(p, 0), c.kernel.resize(p), c.size.resize(p);
  c.out.resize(p);
  for (int i = 0; i < p; ++i) {
    c.stride[i] = in.ConsumeIntegralInRange<int64_t>(1, 3);
    const int64_t lo = in.ConsumeIntegralInRange<int64_t>(0, four_pads ? 3 : 2);
    const int64_t hi = four_pads ? in.ConsumeIntegralInRange<int64_t>(0, 3) : lo;
    c.padding.push_back(lo);
    if (four_pads) c.padding.push_back(hi);
    c.dilation[i] = in.ConsumeIntegralInRange<int64_t>(1, 2);
    c.kernel[i] = in.ConsumeIntegralInRange<int64_t>(1, 3);
    c.size[i] = in.ConsumeIntegralInRange<int64_t>(1, 7);
    const int64_t most_output_padding = forward ? std::max(c.stride[i], c.dilation[i]) - 1 : c.stride[i] - 1;
    if (c.transposed) c.output_padding[i] = in.ConsumeIntegralInRange<int64_t>(0, most_output_padding);
    const int64_t span = c.dilation[i] * (c.kernel[i] - 1) + 1;
    c.out[i] = c.transposed ? (c.size[i] - 1) * c.stride[i] - lo - hi + span + c.output_padding[i]
                            : (c.size[i] + lo + hi - span) / c.stride[i] + 1;
    if (c.out[i] < 0) c.out[i] = 0;
  }
  auto shape = [&](int64_t n, int64_t channels, const std::vector<int64_t>& spatial) {
    std::vector<int64_t> s = {n, channels};
    s.insert(s.end(), spatial.begin(), spatial.end());
    return s;
  };
  // Forward roles: input (N, Cin, size) -> gradOutput (N, Cout, out); transposed swaps channels.
  const int64_t in_channels = c.transposed ? c.cout : c.cin, out_channels = c.transposed ? c.cin : c.cout;
  c.x_shape = shape(c.batch, in_channels, c.size), c.gy_shape = shape(c.batch, out_channels, c.out);
  c.w_shape = shape(c.cout, c.cin / c.groups, c.kernel);  // (C(conv output), C(conv input)/g, k)
  c.format = p == 1 ? ACL_FORMAT_NCL : p == 2 ? ACL_FORMAT_NCHW : ACL_FORMAT_NCDHW;
  if (forward && p == 3 && in.ConsumeBool()) {  // NDHWC: (N, C, D, H, W) dims in the order (N, D, H, W, C)
    for (std::vector<int64_t>* dims : {&c.x_shape, &c.gy_shape, &c.w_shape}) {
      std::rotate(dims->begin() + 1, dims->begin() + 2, dims->end());
    }
    c.format = ACL_FORMAT_NDHWC;
  }
  return c;
}

void fuzz_convolution(FuzzedDataProvider& in) {
  const bool mutate = in.ConsumeIntegral<uint8_t>() < 96;
  // A near-valid problem: every size derived from the parameters, then (mutate) bent.
  Problem c = some_problem(in);
  std::vector<int64_t>&stride = c.stride, &padding = c.padding, &dilation = c.dilation,
  &output_padding = c.output_padding;
  std::vector<int64_t>&x_shape = c.x_shape, &gy_shape = c.gy_shape, &w_shape = c.w_shape;
  const std::vector<int64_t>&kernel = c.kernel, &size = c.size, &out = c.out;
  const int64_t groups = c.groups, batch = c.batch, cin = c.cin, cout = c.cout;
  const bool transposed = c.transposed;
  int32_t format = c.format;
  int64_t groups_arg = groups;
  int8_t cube_math_type = static_cast<int8_t>(in.ConsumeIntegralInRange<int>(0, 3));
  bool mask[4] = {in.ConsumeBool(), in.ConsumeBool(), in.ConsumeBool(), false};
  size_t mask_size = 3;
  bool null_bias_sizes = false;
  if (mutate) {  // bend one thing
    std::vector<int64_t>* arrays[] = {&stride, &padding, &dilation, &output_padding, &x_shape, &gy_shape, &w_shape};
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
      case 0: {
        std::vector<int64_t>& a = *arrays[in.ConsumeIntegralInRange<size_t>(0, 6)];
        if (!a.empty()) a[in.ConsumeIntegralInRange<size_t>(0, a.size() - 1)] = some_size(in);
        break;
      }
      case 1: arrays[in.ConsumeIntegralInRange<size_t>(0, 6)]->push_back(some_size(in)); break;
      case 2: arrays[in.ConsumeIntegralInRange<size_t>(0, 6)]->pop_back(); break;
      case 3: groups_arg = some_size(in); break;
      case 4: cube_math_type = in.ConsumeIntegral<int8_t>(); break;
      case 5: format = in.ConsumeIntegral<int32_t>(); break;
      case 6: mask_size = in.ConsumeIntegralInRange<size_t>(0, 4); break;
      case 7: null_bias_sizes = true; break;
      default: break;  // layouts and dtypes only (FuzzTensor)
    }
  }
  Tensors inputs, outputs;
  auto tensor = [&](const std::vector<int64_t>& s, int32_t f) {
    return std::make_unique<FuzzTensor>(in, s, some_dtype(in), f, mutate);
  };
  inputs.push_back(tensor(gy_shape, format));
  inputs.push_back(tensor(x_shape, format));
  inputs.push_back(tensor(w_shape, format));
  outputs.push_back(tensor(x_shape, format));
  outputs.push_back(tensor(w_shape, format));
  outputs.push_back(tensor({gy_shape.size() > 1 ? gy_shape[1] : 1}, ACL_FORMAT_ND));
  const std::vector<int64_t> bias_sizes_values = {gy_shape.size() > 1 ? gy_shape[1] : 1};
  aclIntArray* bias_sizes = null_bias_sizes ? nullptr : int_array(bias_sizes_values);
  aclIntArray *s = int_array(stride), *pad = int_array(padding), *d = int_array(dilation);
  aclIntArray* op = int_array(output_padding);
  aclBoolArray* output_mask = aclCreateBoolArray(mask, mask_size);
  std::vector<std::vector<uint8_t>> before;
  for (const auto& t : outputs) before.push_back(t->contents());
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = aclnnConvolutionBackwardGetWorkspaceSize(
      inputs[0]->get(), inputs[1]->get(), inputs[2]->get(), bias_sizes, s, pad, d, transposed, op,
      static_cast<int>(groups_arg), output_mask, cube_math_type, mask[0] ? outputs[0]->get() : nullptr,
      mask[1] ? outputs[1]->get() : nullptr, mask[2] ? outputs[2]->get() : nullptr, &workspace_size, &executor);
  if (status != 0) {
    check(status == ACLNN_ERR_PARAM_NULLPTR || status == ACLNN_ERR_PARAM_INVALID);
    check(aclGetRecentErrMsg() != nullptr);  // every failure says why
    check(executor == nullptr);
    for (size_t i = 0; i < outputs.size(); ++i) check(outputs[i]->contents() == before[i]);
  } else {
    // What the run reads and writes: gradOutput for any gradient, input for gradWeight, weight
    // for gradInput, and the requested outputs. The others may lack memory.
    Used used_inputs, used_outputs;
    if (mask[0] || mask[1] || mask[2]) used_inputs.push_back(inputs[0].get());
    if (mask[1]) used_inputs.push_back(inputs[1].get());
    if (mask[0]) used_inputs.push_back(inputs[2].get());
    for (size_t i = 0; i < 3; ++i) {
      if (mask[i]) used_outputs.push_back(outputs[i].get());
    }
    const bool ran = run_phase_two(in, aclnnConvolutionBackward, executor, workspace_size, used_inputs, used_outputs);
    if (ran && !mutate) {
      const fuzz::PlanCall plan = [&](uint64_t* size, aclOpExecutor** planned) {
        return aclnnConvolutionBackwardGetWorkspaceSize(
            inputs[0]->get(), inputs[1]->get(), inputs[2]->get(), bias_sizes, s, pad, d, transposed, op,
            static_cast<int>(groups_arg), output_mask, cube_math_type, mask[0] ? outputs[0]->get() : nullptr,
            mask[1] ? outputs[1]->get() : nullptr, mask[2] ? outputs[2]->get() : nullptr, size, planned);
      };
      const int64_t reduction = sat_add(sat_mul(std::max(cin, cout) / groups, product(kernel)),
                                        sat_mul(batch, std::max(product(size), product(out))));
      differential(in, plan, aclnnConvolutionBackward, used_inputs, used_outputs, reduction);
    }
  }
  aclDestroyIntArray(bias_sizes);
  aclDestroyIntArray(s);
  aclDestroyIntArray(pad);
  aclDestroyIntArray(d);
  aclDestroyIntArray(op);
  aclDestroyBoolArray(output_mask);
}

// aclnnConvolution (forward) of a valid problem, with or without a bias, sometimes bent.
void fuzz_forward(FuzzedDataProvider& in) {
  const bool mutate = in.ConsumeIntegral<uint8_t>() < 96;
  Problem c = some_problem(in, true);
  const bool with_bias = in.ConsumeBool();
  int64_t groups_arg = c.groups;
  int8_t cube_math_type = static_cast<int8_t>(in.ConsumeIntegralInRange<int>(0, 4));
  int32_t format = c.format, weight_format = c.format;
  std::vector<int64_t> b_shape = {c.format == ACL_FORMAT_NDHWC ? c.gy_shape.back() : c.gy_shape[1]};
  if (mutate) {  // bend one thing
    std::vector<int64_t>* arrays[] = {&c.stride,  &c.padding,  &c.dilation, &c.output_padding,
                                      &c.x_shape, &c.gy_shape, &c.w_shape,  &b_shape};
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: {
        std::vector<int64_t>& a = *arrays[in.ConsumeIntegralInRange<size_t>(0, 7)];
        if (!a.empty()) a[in.ConsumeIntegralInRange<size_t>(0, a.size() - 1)] = some_size(in);
        break;
      }
      case 1: arrays[in.ConsumeIntegralInRange<size_t>(0, 7)]->push_back(some_size(in)); break;
      case 2: arrays[in.ConsumeIntegralInRange<size_t>(0, 7)]->pop_back(); break;
      case 3: groups_arg = some_size(in); break;
      case 4: cube_math_type = in.ConsumeIntegral<int8_t>(); break;
      case 5: format = weight_format = in.ConsumeIntegral<int32_t>(); break;
      case 6: weight_format = in.ConsumeIntegral<int32_t>(); break;  // the weight's alone (its channels' place)
      default: break;                                                // layouts and dtypes only (FuzzTensor)
    }
  }
  Tensors inputs, outputs;
  auto tensor = [&](const std::vector<int64_t>& s, int32_t f) {
    return std::make_unique<FuzzTensor>(in, s, some_dtype(in), f, mutate);
  };
  inputs.push_back(tensor(c.x_shape, format));
  inputs.push_back(tensor(c.w_shape, weight_format));
  if (with_bias) inputs.push_back(tensor(b_shape, ACL_FORMAT_ND));
  outputs.push_back(tensor(c.gy_shape, format));
  aclIntArray *s = int_array(c.stride), *pad = int_array(c.padding), *d = int_array(c.dilation);
  aclIntArray* op = int_array(c.output_padding);
  const std::vector<uint8_t> before = outputs[0]->contents();
  const fuzz::PlanCall plan = [&](uint64_t* size, aclOpExecutor** planned) {
    return aclnnConvolutionGetWorkspaceSize(inputs[0]->get(), inputs[1]->get(), with_bias ? inputs[2]->get() : nullptr,
                                            s, pad, d, c.transposed, op, groups_arg, outputs[0]->get(), cube_math_type,
                                            size, planned);
  };
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = plan(&workspace_size, &executor);
  if (status != 0) {
    check(status == ACLNN_ERR_PARAM_NULLPTR || status == ACLNN_ERR_PARAM_INVALID);
    check(aclGetRecentErrMsg() != nullptr);  // every failure says why
    check(executor == nullptr);
    check(outputs[0]->contents() == before);
  } else {
    Used used_inputs, used_outputs = {outputs[0].get()};
    for (const auto& t : inputs) used_inputs.push_back(t.get());
    const bool ran = run_phase_two(in, aclnnConvolution, executor, workspace_size, used_inputs, used_outputs);
    if (ran && !mutate) {
      // (one bias term more than the products)
      const int64_t reduction = sat_add(sat_mul(std::max(c.cin, c.cout) / c.groups, product(c.kernel)), 1);
      differential(in, plan, aclnnConvolution, used_inputs, used_outputs, reduction);
    }
  }
  aclDestroyIntArray(s);
  aclDestroyIntArray(pad);
  aclDestroyIntArray(d);
  aclDestroyIntArray(op);
}

// aclnnConvTbc and aclnnConvDepthwise2d (forward) of valid problems, sometimes bent.
void fuzz_tbc_or_depthwise_forward(FuzzedDataProvider& in) {
  const bool mutate = in.ConsumeIntegral<uint8_t>() < 96;
  const bool tbc = in.ConsumeBool();
  const int64_t batch = in.ConsumeIntegralInRange<int64_t>(0, 3), cin = in.ConsumeIntegralInRange<int64_t>(0, 4);
  const int64_t multiplier = in.ConsumeIntegralInRange<int64_t>(1, 3),
                cout = tbc ? in.ConsumeIntegralInRange<int64_t>(0, 4) : cin * multiplier;
  std::vector<int64_t> kernel = {in.ConsumeIntegralInRange<int64_t>(1, 4), in.ConsumeIntegralInRange<int64_t>(1, 3)};
  std::vector<int64_t> size = {in.ConsumeIntegralInRange<int64_t>(0, 7), in.ConsumeIntegralInRange<int64_t>(1, 7)};
  std::vector<int64_t> stride = {1, 1}, padding = {0, 0}, dilation = {1, 1}, out(2);
  for (size_t i = 0; i < 2; ++i) {
    if (!tbc)
      stride[i] = in.ConsumeIntegralInRange<int64_t>(1, 3), dilation[i] = in.ConsumeIntegralInRange<int64_t>(1, 2);
    padding[i] = in.ConsumeIntegralInRange<int64_t>(0, 3);
    out[i] = std::max<int64_t>(0, (size[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) / stride[i] + 1);
  }
  int64_t pad = padding[0];
  std::vector<int64_t> x_shape =
      tbc ? std::vector<int64_t>{size[0], batch, cin} : std::vector<int64_t>{batch, cin, size[0], size[1]};
  std::vector<int64_t> w_shape =
      tbc ? std::vector<int64_t>{kernel[0], cin, cout} : std::vector<int64_t>{cout, 1, kernel[0], kernel[1]};
  std::vector<int64_t> y_shape =
      tbc ? std::vector<int64_t>{std::max<int64_t>(0, size[0] + 2 * pad + 1 - kernel[0]), batch, cout}
          : std::vector<int64_t>{batch, cout, out[0], out[1]};
  std::vector<int64_t> b_shape = {cout}, kernel_size = kernel;
  const bool with_bias = tbc || in.ConsumeBool();
  int8_t cube_math_type = static_cast<int8_t>(in.ConsumeIntegralInRange<int>(0, 4));
  if (mutate) {  // bend one thing
    std::vector<int64_t>* arrays[] = {&x_shape, &w_shape, &y_shape,  &b_shape,
                                      &stride,  &padding, &dilation, &kernel_size};
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: {
        std::vector<int64_t>& a = *arrays[in.ConsumeIntegralInRange<size_t>(0, 7)];
        if (!a.empty()) a[in.ConsumeIntegralInRange<size_t>(0, a.size() - 1)] = some_size(in);
        break;
      }
      case 1: arrays[in.ConsumeIntegralInRange<size_t>(0, 7)]->push_back(some_size(in)); break;
      case 2: pad = some_size(in); break;
      case 3: cube_math_type = in.ConsumeIntegral<int8_t>(); break;
      default: break;  // layouts and dtypes only (FuzzTensor)
    }
  }
  const int32_t format = tbc ? ACL_FORMAT_NCL : ACL_FORMAT_NCHW;
  Tensors inputs, outputs;
  auto tensor = [&](const std::vector<int64_t>& s, int32_t f) {
    return std::make_unique<FuzzTensor>(in, s, some_dtype(in), f, mutate);
  };
  inputs.push_back(tensor(x_shape, format));
  inputs.push_back(tensor(w_shape, format));
  if (with_bias) inputs.push_back(tensor(b_shape, ACL_FORMAT_ND));
  outputs.push_back(tensor(y_shape, format));
  aclIntArray *s = int_array(stride), *p = int_array(padding), *d = int_array(dilation), *k = int_array(kernel_size);
  const std::vector<uint8_t> before = outputs[0]->contents();
  const fuzz::PlanCall plan = [&](uint64_t* workspace, aclOpExecutor** planned) {
    aclTensor* bias = with_bias ? inputs[2]->get() : nullptr;
    return tbc ? aclnnConvTbcGetWorkspaceSize(inputs[0]->get(), inputs[1]->get(), bias, pad, outputs[0]->get(),
                                              cube_math_type, workspace, planned)
               : aclnnConvDepthwise2dGetWorkspaceSize(inputs[0]->get(), inputs[1]->get(), k, bias, s, p, d,
                                                      outputs[0]->get(), cube_math_type, workspace, planned);
  };
  const fuzz::RunCall run = tbc ? aclnnConvTbc : aclnnConvDepthwise2d;
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = plan(&workspace_size, &executor);
  if (status != 0) {
    check(status == ACLNN_ERR_PARAM_NULLPTR || status == ACLNN_ERR_PARAM_INVALID);
    check(aclGetRecentErrMsg() != nullptr);
    check(executor == nullptr);
    check(outputs[0]->contents() == before);
  } else {
    Used used_inputs, used_outputs = {outputs[0].get()};
    for (const auto& t : inputs) used_inputs.push_back(t.get());
    const bool ran = run_phase_two(in, run, executor, workspace_size, used_inputs, used_outputs);
    if (ran && !mutate) {
      const int64_t reduction = sat_add(sat_mul(tbc ? cin : 1, product(kernel)), 1);  // (and the bias)
      differential(in, plan, run, used_inputs, used_outputs, reduction);
    }
  }
  aclDestroyIntArray(s);
  aclDestroyIntArray(p);
  aclDestroyIntArray(d);
  aclDestroyIntArray(k);
}

void fuzz_tbc(FuzzedDataProvider& in) {
  const bool mutate = in.ConsumeIntegral<uint8_t>() < 96;
  const int64_t time = in.ConsumeIntegralInRange<int64_t>(0, 7), batch = in.ConsumeIntegralInRange<int64_t>(0, 3);
  const int64_t cin = in.ConsumeIntegralInRange<int64_t>(0, 4), cout = in.ConsumeIntegralInRange<int64_t>(0, 4);
  const int64_t k = in.ConsumeIntegralInRange<int64_t>(0, 4);
  int64_t pad = in.ConsumeIntegralInRange<int64_t>(0, 3);
  std::vector<int64_t> x_shape = {time, batch, cin}, w_shape = {k, cin, cout}, b_shape = {cout};
  std::vector<int64_t> gy_shape = {std::max<int64_t>(0, time + 2 * pad + 1 - k), batch, cout};
  int8_t cube_math_type = static_cast<int8_t>(in.ConsumeIntegralInRange<int>(0, 3));
  if (mutate) {
    std::vector<int64_t>* arrays[] = {&x_shape, &w_shape, &b_shape, &gy_shape};
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: {
        std::vector<int64_t>& a = *arrays[in.ConsumeIntegralInRange<size_t>(0, 3)];
        a[in.ConsumeIntegralInRange<size_t>(0, a.size() - 1)] = some_size(in);
        break;
      }
      case 1: pad = some_size(in); break;
      case 2: cube_math_type = in.ConsumeIntegral<int8_t>(); break;
      default: break;
    }
  }
  Tensors inputs, outputs;
  auto tensor = [&](const std::vector<int64_t>& s) {
    return std::make_unique<FuzzTensor>(in, s, some_dtype(in), ACL_FORMAT_ND, mutate);
  };
  inputs.push_back(tensor(gy_shape));
  inputs.push_back(tensor(x_shape));
  inputs.push_back(tensor(w_shape));
  inputs.push_back(tensor(b_shape));
  outputs.push_back(tensor(x_shape));
  outputs.push_back(tensor(w_shape));
  outputs.push_back(tensor(b_shape));
  std::vector<std::vector<uint8_t>> before;
  for (const auto& t : outputs) before.push_back(t->contents());
  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  const aclnnStatus status = aclnnConvTbcBackwardGetWorkspaceSize(
      inputs[0]->get(), inputs[1]->get(), inputs[2]->get(), inputs[3]->get(), pad, cube_math_type, outputs[0]->get(),
      outputs[1]->get(), outputs[2]->get(), &workspace_size, &executor);
  if (status != 0) {
    check(status == ACLNN_ERR_PARAM_NULLPTR || status == ACLNN_ERR_PARAM_INVALID);
    check(aclGetRecentErrMsg() != nullptr);
    check(executor == nullptr);
    for (size_t i = 0; i < outputs.size(); ++i) check(outputs[i]->contents() == before[i]);
  } else {
    // bias is never read: it may lack memory
    const Used used_inputs = {inputs[0].get(), inputs[1].get(), inputs[2].get()};
    const Used used_outputs = {outputs[0].get(), outputs[1].get(), outputs[2].get()};
    const bool ran = run_phase_two(in, aclnnConvTbcBackward, executor, workspace_size, used_inputs, used_outputs);
    if (ran && !mutate) {
      const fuzz::PlanCall plan = [&](uint64_t* size, aclOpExecutor** planned) {
        return aclnnConvTbcBackwardGetWorkspaceSize(inputs[0]->get(), inputs[1]->get(), inputs[2]->get(),
                                                    inputs[3]->get(), pad, cube_math_type, outputs[0]->get(),
                                                    outputs[1]->get(), outputs[2]->get(), size, planned);
      };
      const int64_t reduction = sat_add(sat_mul(std::max(cin, cout), k), sat_mul(batch, std::max(time, gy_shape[0])));
      differential(in, plan, aclnnConvTbcBackward, used_inputs, used_outputs, reduction);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);  // failures are expected: keep the log quiet
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegral<uint8_t>() % 4) {
    case 0: fuzz_tbc(in); break;
    case 1: fuzz_convolution(in); break;
    case 2: fuzz_forward(in); break;
    default: fuzz_tbc_or_depthwise_forward(in); break;
  }
  return 0;
}
