#include "kernels/workspace.h"

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
  uint64_t bytes = 0, all = 0;
  bool fits = multiply(count, element_bytes, &bytes) && bytes <= kMax - kWorkspaceAlign;
  const uint64_t slice = fits ? (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign : 0;
  fits = fits && multiply(slice, copies, &all) && all <= kMax - kWorkspaceAlign - used_;
  if (!fits) {
    overflowed_ = true;
    all = 0;
  }
  regions_.push_back({name, used_, slice, copies});
  used_ += all;
  return static_cast<Handle>(regions_.size() - 1);
}

Workspace::Workspace(const WorkspaceLedger& ledger, void* buffer) : ledger_(ledger) {
  const auto address = reinterpret_cast<uintptr_t>(buffer);
  base_ = static_cast<unsigned char*>(buffer) + ((kWorkspaceAlign - address % kWorkspaceAlign) % kWorkspaceAlign);
}

}  // namespace aclnn_cpu
