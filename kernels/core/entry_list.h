// How phase 1 picks an entry from one of an operator's ordered lists: the first entry whose
// supports() accepts the problem on this CPU, the entries that ACLNN_CONVBWD_KERNELS names asked
// first. Any operator's entries serve, whatever their problem type, as long as each has a `name`, a
// `family` and `supports(const Problem&, const CpuFeatures&)`: a list is typed by its problem, so an
// operator's problem never reaches an entry written for another's.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/core/cpu_isa.h"

namespace aclnn_cpu {

// What an entry decided for a problem it supports (its tiling, its variant, ...), as oneDNN's primitive
// descriptors keep their configuration: supports() decides it once, and plan() builds from it (the
// plan hands it over: PlanBuilder::decided), so nothing is decided twice. describe() names its choices
// and why, for the verbose mode ("" where there is nothing to say).
struct EntryDecision {
  virtual ~EntryDecision() = default;
  virtual std::string describe() const { return ""; }
};

// An entry's answer to a problem: yes (with its decision, where it keeps one), or a short reason why
// not (a literal, holding no comma), which the verbose mode prints (ACLNN_CONVBWD_VERBOSE=2) as oneDNN
// prints its dispatch reasons.
struct Support {
  const char* why_not = nullptr;
  std::shared_ptr<const EntryDecision> decision;
  explicit operator bool() const { return why_not == nullptr; }
};
inline const Support kSupported{};
inline Support refuse(const char* why_not) { return Support{why_not, nullptr}; }
// Yes, with the entry's decision (its own type, derived from EntryDecision).
template <class Decision>
Support supported_as(Decision decision) {
  return Support{nullptr, std::make_shared<const Decision>(std::move(decision))};
}

// The value of ACLNN_CONVBWD_KERNELS ("" when unset): the entry or family names every operator's lists ask
// first (choose_from's `only`), read at phase 1.
inline std::string implementation_filter() {
  const char* value = std::getenv("ACLNN_CONVBWD_KERNELS");
  return value == nullptr ? std::string() : std::string(value);
}

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

// Whether a decision takes a choice it can take (`can`) and its heuristics would take (`pays`), as the
// user's forced choices ask (comma-separated names, ACLNN_CONVBWD_VARIANTS): a choice named there
// wherever it can be taken, one named "no_<choice>" never, the rest where they pay.
// (Most choices are taken wherever they can be, so that only their no_<choice> acts; those with
// heuristics, pays, are where naming them acts too.)
inline bool take_choice(const std::string& forced, const char* choice, bool can, bool pays) {
  if (!can) return false;
  if (named_in(forced, choice)) return true;
  if (named_in(forced, ("no_" + std::string(choice)).c_str())) return false;
  return pays;
}

// The choices a decision took, each with its reason: "<choice>: <why>" joined by "; " (no commas), as
// its describe() prints them; a choice the user forced reads "forced".
struct ChoiceReasons {
  std::string text;
  void note(const std::string& forced, bool taken, const char* choice, const char* why) {
    if (!taken) return;
    text += std::string(text.empty() ? "" : "; ") + choice + ": " + (named_in(forced, choice) ? "forced" : why);
  }
};

// The entry a list gave a problem, and the entries asked before it with their reasons
// ("<entry>: <reason>" joined by "; ").
template <class Entry>
struct ListChoice {
  const Entry* entry = nullptr;
  std::shared_ptr<const EntryDecision> decision;  // what the entry decided, where it keeps that
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
      Support support = entry->supports(problem, cpu);
      if (support) {
        choice.entry = entry;
        choice.decision = std::move(support.decision);
        return choice;
      }
      choice.refusals += std::string(choice.refusals.empty() ? "" : "; ") + entry->name + ": " + support.why_not;
    }
  }
  choice.entry = list.back();
  return choice;
}

}  // namespace aclnn_cpu
