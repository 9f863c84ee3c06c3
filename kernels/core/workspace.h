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

// Two areas: the shared one holds what lives through the whole execution (the packed inputs
// every step reads); the step area holds one step's scratch at a time, so it is as large as the
// largest step needs, not the sum: steps run one after another.
class WorkspaceLedger {
 public:
  // A booked region: `copies` consecutive slices of `slice_bytes` each (one per thread, or one).
  struct Region {
    const char* name;
    bool in_step_area;
    uint64_t offset;       // from the start of its area
    uint64_t slice_bytes;  // rounded up to kWorkspaceAlign
    uint64_t copies;
  };
  using Handle = int;  // index of a region; -1 = nothing booked

  // Books `copies` slices of `count` elements of `element_bytes`. Sizes that overflow 64 bits
  // mark the ledger overflowed (checked once by the planner) instead of wrapping.
  // Books in the shared area.
  Handle book(const char* name, uint64_t count, uint64_t element_bytes, uint64_t copies = 1);
  // Books in the step area, for the step being planned (after begin_step()).
  Handle book_step(const char* name, uint64_t count, uint64_t element_bytes, uint64_t copies = 1);
  // The next step's step-area regions start again at the beginning of that area.
  void begin_step() { step_used_ = 0; }

  bool overflowed() const { return overflowed_; }
  uint64_t shared_bytes() const { return shared_used_; }
  // The step area the step being booked uses so far.
  uint64_t step_bytes() const { return step_used_; }
  // The largest any step used.
  uint64_t step_area_bytes() const { return step_max_; }
  // Bytes the caller must provide: both areas plus the alignment slack (0 when nothing is booked).
  uint64_t total_bytes() const;
  const std::vector<Region>& regions() const { return regions_; }

 private:
  Handle book_in(bool step_area, const char* name, uint64_t count, uint64_t element_bytes, uint64_t copies);
  std::vector<Region> regions_;
  uint64_t shared_used_ = 0, step_used_ = 0, step_max_ = 0;
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
    const uint64_t area = r.in_step_area ? ledger_.shared_bytes() : 0;
    return reinterpret_cast<T*>(base_ + area + r.offset + static_cast<uint64_t>(copy) * r.slice_bytes);
  }

 private:
  const WorkspaceLedger& ledger_;
  unsigned char* base_;  // the caller's buffer rounded up to kWorkspaceAlign
};

}  // namespace aclnn_cpu
