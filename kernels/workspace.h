// The workspace ledger: phase 1 books named, aligned regions and learns the total; phase 2 hands
// the same regions out of the caller's buffer. One ledger per plan, so sizing and use cannot
// disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aclnn_cpu {

// Every region starts on this boundary. The caller's workspace may start anywhere: the total
// includes the slack to align it (CANN's callers pass offsets into larger buffers).
constexpr uint64_t kWorkspaceAlign = 64;

class WorkspaceLedger {
 public:
  // A booked region: `copies` consecutive slices of `slice_bytes` each (one per thread, or one).
  struct Region {
    const char* name;
    uint64_t offset;       // from the aligned base
    uint64_t slice_bytes;  // rounded up to kWorkspaceAlign
    uint64_t copies;
  };
  using Handle = int;  // index of a region; -1 = nothing booked

  // Books `copies` slices of `count` elements of `element_bytes`. Sizes that overflow 64 bits
  // mark the ledger overflowed (checked once by the planner) instead of wrapping.
  Handle book(const char* name, uint64_t count, uint64_t element_bytes, uint64_t copies = 1);

  bool overflowed() const { return overflowed_; }
  // Bytes the caller must provide: the regions plus the alignment slack (0 when nothing is booked).
  uint64_t total_bytes() const { return regions_.empty() ? 0 : used_ + kWorkspaceAlign - 1; }
  const std::vector<Region>& regions() const { return regions_; }

 private:
  std::vector<Region> regions_;
  uint64_t used_ = 0;
  bool overflowed_ = false;
};

// Phase 2's view of the caller's buffer through a ledger.
class Workspace {
 public:
  Workspace(const WorkspaceLedger& ledger, void* buffer);
  // Slice `copy` of the region, as T (nullptr for the handle -1).
  template <typename T>
  T* at(WorkspaceLedger::Handle region, int64_t copy = 0) const {
    if (region < 0) return nullptr;
    const WorkspaceLedger::Region& r = ledger_.regions()[static_cast<size_t>(region)];
    return reinterpret_cast<T*>(base_ + r.offset + static_cast<uint64_t>(copy) * r.slice_bytes);
  }

 private:
  const WorkspaceLedger& ledger_;
  unsigned char* base_;  // the caller's buffer rounded up to kWorkspaceAlign
};

}  // namespace aclnn_cpu
