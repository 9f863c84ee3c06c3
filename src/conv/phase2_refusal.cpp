#include "conv/phase2_refusal.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "aclnn/opdev/op_errno.h"
#include "common/dtype.h"
#include "common/log.h"
#include "conv/check.h"
#include "meta/meta_objects.h"

namespace aclnn_cpu {
namespace {

constexpr size_t kMaxRuns = size_t{1} << 20;

// Byte addresses in 128 bits: a data address plus an offset of up to 2^63 elements of 8 bytes.
using Address = Wide;

struct Span {
  Address begin, end;  // [begin, end)
};

Address base_address(const aclTensor& t) {
  return static_cast<Address>(reinterpret_cast<uintptr_t>(t.data)) +
         static_cast<Address>(t.offset) * static_cast<Address>(dtype_size(t.dtype));
}

// From the first to past the last byte of the view's elements.
Span span_of(const aclTensor& t) {
  const auto element = static_cast<Address>(dtype_size(t.dtype));
  Address lowest = 0, highest = 0;  // in elements, from the offset
  for (size_t i = 0; i < t.view_shape.size(); ++i) {
    const Address reach = static_cast<Address>(t.view_shape[i] - 1) * t.strides[i];
    (reach < 0 ? lowest : highest) += reach;
  }
  return {base_address(t) + lowest * element, base_address(t) + (highest + 1) * element};
}

// The view's elements as contiguous byte runs, sorted and merged; false when there would be more
// than kMaxRuns.
bool runs_of(const aclTensor& t, std::vector<Span>& runs) {
  const auto element = static_cast<Address>(dtype_size(t.dtype));
  // Dims that move (size > 1, stride != 0), strides made positive (the same set of elements).
  Address start = base_address(t);
  std::vector<std::pair<Address, int64_t>> dims;  // (stride in elements, size)
  for (size_t i = 0; i < t.view_shape.size(); ++i) {
    if (t.view_shape[i] <= 1 || t.strides[i] == 0) continue;
    Address stride = t.strides[i];
    if (stride < 0) {
      start += static_cast<Address>(t.view_shape[i] - 1) * stride * element;
      stride = -stride;
    }
    dims.push_back({stride, t.view_shape[i]});
  }
  std::sort(dims.begin(), dims.end());
  // The innermost dims that lie back to back form one run.
  Address run = 1;
  size_t outer = 0;
  while (outer < dims.size() && dims[outer].first == run) run *= dims[outer++].second;
  Address count = 1;
  for (size_t i = outer; i < dims.size(); ++i) {
    count *= dims[i].second;
    if (count > static_cast<Address>(kMaxRuns)) return false;
  }
  runs.clear();
  runs.reserve(static_cast<size_t>(count));
  std::vector<int64_t> index(dims.size(), 0);
  for (Address r = 0; r < count; ++r) {
    Address at = start;
    for (size_t i = outer; i < dims.size(); ++i) at += static_cast<Address>(index[i]) * dims[i].first * element;
    runs.push_back({at, at + run * element});
    for (size_t i = outer; i < dims.size() && ++index[i] == dims[i].second; ++i) index[i] = 0;
  }
  std::sort(runs.begin(), runs.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
  return true;
}

// (Addresses past the 64-bit space, of views that would wrap, print with their high digits.)
std::string hex(Address address) {
  const auto high = static_cast<unsigned long long>(address >> 64), low = static_cast<unsigned long long>(address);
  return high == 0 ? format("0x%llx", low) : format("0x%llx%016llx", high, low);
}

}  // namespace

bool tensors_share_memory(const aclTensor& a, const aclTensor& b) {
  const Span sa = span_of(a), sb = span_of(b);
  if (sa.end <= sb.begin || sb.end <= sa.begin) return false;
  std::vector<Span> ra, rb;
  if (!runs_of(a, ra) || !runs_of(b, rb)) return true;
  // Two sorted lists of runs: a run of one list meets the other's where it begins before the end of
  // one that began before or with it.
  size_t i = 0, j = 0;
  Address end_a = 0, end_b = 0;  // the furthest end among the runs passed so far
  bool any_a = false, any_b = false;
  while (i < ra.size() || j < rb.size()) {
    if (j == rb.size() || (i < ra.size() && ra[i].begin <= rb[j].begin)) {
      if (any_b && ra[i].begin < end_b) return true;
      end_a = any_a ? std::max(end_a, ra[i].end) : ra[i].end;
      any_a = true;
      ++i;
    } else {
      if (any_a && rb[j].begin < end_a) return true;
      end_b = any_b ? std::max(end_b, rb[j].end) : rb[j].end;
      any_b = true;
      ++j;
    }
  }
  return false;
}

Refusal phase2_refusal(const std::vector<UsedTensor>& used) {
  for (const UsedTensor& t : used) {
    if (!is_empty(*t.tensor) && t.tensor->data == nullptr) {
      return {ACLNN_ERR_PARAM_NULLPTR, format("%s has no data address (created with nullptr)", t.name)};
    }
  }
  for (const UsedTensor& t : used) {
    const size_t element = dtype_size(t.tensor->dtype);
    if (!is_empty(*t.tensor) && reinterpret_cast<uintptr_t>(t.tensor->data) % element != 0) {
      return {ACLNN_ERR_PARAM_INVALID,
              format("%s data address %p is not a multiple of its element size %zu (%s): tensor data must be "
                     "aligned to its element size",
                     t.name, t.tensor->data, element, dtype_name(t.tensor->dtype))};
    }
  }
  for (const UsedTensor& t : used) {  // (phase 1 bounds the bytes past the data address by PTRDIFF_MAX)
    if (is_empty(*t.tensor)) continue;
    const Span span = span_of(*t.tensor);
    if (span.end >= static_cast<Address>(UINTPTR_MAX) + 1) {  // (past its end too: a pointer there would wrap)
      return {ACLNN_ERR_PARAM_INVALID,
              format("%s (bytes [%s, %s)) reaches the end of the address space from data address %p: a view's bytes, "
                     "and the address past them, may not wrap around it",
                     t.name, hex(span.begin).c_str(), hex(span.end).c_str(), t.tensor->data)};
    }
  }
  for (size_t i = 0; i < used.size(); ++i) {
    const UsedTensor& out = used[i];
    if (!out.output || is_empty(*out.tensor)) continue;
    for (size_t j = 0; j < used.size(); ++j) {
      const UsedTensor& other = used[j];
      if (j == i || (other.output && j < i) || is_empty(*other.tensor)) continue;  // each pair of outputs once
      if (!tensors_share_memory(*out.tensor, *other.tensor)) continue;
      const Span a = span_of(*out.tensor), b = span_of(*other.tensor);
      return {ACLNN_ERR_PARAM_INVALID,
              format("%s (bytes [%s, %s)) shares memory with %s (bytes [%s, %s), %s): an output may not overlap an "
                     "input or another output",
                     out.name, hex(a.begin).c_str(), hex(a.end).c_str(), other.name, hex(b.begin).c_str(),
                     hex(b.end).c_str(), other.output ? "another output" : "an input")};
    }
  }
  return {};
}

}  // namespace aclnn_cpu
