// What phase 2 must refuse before it touches anything, decided from the tensors' data addresses:
// a tensor without data, a data address that is not a multiple of its element size, and an output
// that shares memory with an input or with another output. Phase 1 never fails on addresses (CANN
// plans tensors created without memory); it records the refusal, and phase 2 reports it.
#pragma once

#include <string>
#include <vector>

#include "aclnn/acl_meta.h"
#include "meta/executor.h"

namespace aclnn_cpu {

// A tensor the run must read or write, by the name the caller knows it by.
struct UsedTensor {
  const char* name;
  const aclTensor* tensor;
  bool output;
};

// For the used tensors (well formed, inside their storage and within PTRDIFF_MAX bytes of their data
// address: checked by phase 1), in this order:
// - a non-empty tensor without data: 161001;
// - a non-empty tensor whose data address is not a multiple of its element size (the kernels load
//   and store whole elements): 161002;
// - a non-empty tensor whose bytes from its data address reach the end of the address space (the
//   address past them would wrap): 161002;
// - a non-empty output sharing a byte with a non-empty input or another output: 161002 (an output
//   that overlaps only itself is accepted and written in view order, docs/runtime.md).
Refusal phase2_refusal(const std::vector<UsedTensor>& used);

// Whether the elements of two tensors (same rules as above) share a byte. Exact where the views'
// contiguous runs number at most 2^20 each; beyond that, views whose spans overlap count as sharing.
bool tensors_share_memory(const aclTensor& a, const aclTensor& b);

}  // namespace aclnn_cpu
