// How phase 1 picks an entry from one of an operator's ordered lists: the first entry whose
// supports() accepts the problem on this CPU, the entries that ACLNN_CONVBWD_KERNELS names asked
// first. Any operator's entries serve, whatever their problem type, as long as each has a `name`, a
// `family` and `supports(const Problem&, const CpuFeatures&)`: a list is typed by its problem, so an
// operator's problem never reaches an entry written for another's.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

// An entry's answer to a problem: yes, or a short reason why not (a literal, holding no comma), which
// the verbose mode prints (ACLNN_CONVBWD_VERBOSE=2) as oneDNN prints its dispatch reasons.
struct Support {
  const char* why_not = nullptr;
  explicit operator bool() const { return why_not == nullptr; }
};
constexpr Support kSupported{};
constexpr Support refuse(const char* why_not) { return Support{why_not}; }

// Whether `name` is one of the comma-separated names in `list`.
inline bool named_in(const std::string& list, const char* name) {
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    if (list.compare(start, end - start, name) == 0) return true;
    start = end + 1;
  }
  return false;
}

// The entry a list gave a problem, and the entries asked before it with their reasons
// ("<entry>: <reason>" joined by "; ").
template <class Entry>
struct ListChoice {
  const Entry* entry = nullptr;
  std::string refusals;
};

// The first supporting entry that `only` (comma-separated entry or family names) names, else the first
// supporting entry; the list's last entry (its reference, which supports everything) where none does.
// Each list position is asked once (an entry that stands twice in a list is asked at both).
template <class Entry, class Problem>
ListChoice<Entry> choose_from(const std::vector<const Entry*>& list, const Problem& problem, const CpuFeatures& cpu,
                              const std::string& only) {
  ListChoice<Entry> choice;
  for (bool named_pass : {true, false}) {
    if (named_pass && only.empty()) continue;
    for (const Entry* entry : list) {
      const bool named = named_in(only, entry->name) || named_in(only, entry->family);
      if (!only.empty() && named_pass != named) continue;
      const Support support = entry->supports(problem, cpu);
      if (support) {
        choice.entry = entry;
        return choice;
      }
      choice.refusals += std::string(choice.refusals.empty() ? "" : "; ") + entry->name + ": " + support.why_not;
    }
  }
  choice.entry = list.back();
  return choice;
}

}  // namespace aclnn_cpu
