#include "kernels/core/workspace.h"

#include <cstdint>
#include <limits>

namespace aclnn_cpu {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// a * b, or false when it does not fit.
bool multiply(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > kMax / a) return false;
  *out = a * b;
  return true;
}

}  // namespace

WorkspaceLedger::Handle WorkspaceLedger::book(const char* name, uint64_t count, uint64_t element_bytes,
                                              uint64_t copies) {
  return book_in(false, name, count, element_bytes, copies);
}

WorkspaceLedger::Handle WorkspaceLedger::book_step(const char* name, uint64_t count, uint64_t element_bytes,
                                                   uint64_t copies) {
  return book_in(true, name, count, element_bytes, copies);
}

WorkspaceLedger::Handle WorkspaceLedger::book_in(bool step_area, const char* name, uint64_t count,
                                                 uint64_t element_bytes, uint64_t copies) {
  uint64_t& used = step_area ? step_used_ : shared_used_;
  uint64_t bytes = 0, all = 0;
  bool fits = multiply(count, element_bytes, &bytes) && bytes <= kMax - kWorkspaceAlign;
  const uint64_t slice = fits ? (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign : 0;
  // Both areas together stay below 2^63, so every sum of offsets below fits.
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  fits = fits && multiply(slice, copies, &all) && all <= kLimit - used;
  if (!fits) {
    overflowed_ = true;
    all = 0;
  }
  regions_.push_back({name, step_area, used, slice, copies});
  used += all;
  if (step_area && step_used_ > step_max_) step_max_ = step_used_;
  return static_cast<Handle>(regions_.size() - 1);
}

uint64_t WorkspaceLedger::total_bytes() const {
  return regions_.empty() ? 0 : shared_used_ + step_max_ + kWorkspaceAlign - 1;
}

Workspace::Workspace(const WorkspaceLedger& ledger, void* buffer) : ledger_(ledger) {
  const auto address = reinterpret_cast<uintptr_t>(buffer);
  base_ = static_cast<unsigned char*>(buffer) + ((kWorkspaceAlign - address % kWorkspaceAlign) % kWorkspaceAlign);
}

}  // namespace aclnn_cpu
