// choose_from (kernels/core/entry_list.h), the list walk every operator's plan uses, on an operator of
// its own: a problem type and entries that are not the convolution's. A list is typed by its problem:
// only entries written for that problem type can stand in it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/core/cpu_isa.h"
#include "kernels/core/entry_list.h"

namespace aclnn_cpu {
namespace {

// A toy operator: sums a row, in one of three ways.
struct RowProblem {
  int length = 0;
};
struct RowEntry {
  const char* name;
  const char* family;
  Support (*supports)(const RowProblem& problem, const CpuFeatures& cpu);
};

Support short_rows(const RowProblem& p, const CpuFeatures&) {
  return p.length <= 8 ? kSupported : refuse("longer than 8");
}
Support even_rows(const RowProblem& p, const CpuFeatures&) { return p.length % 2 == 0 ? kSupported : refuse("odd"); }
Support any_row(const RowProblem&, const CpuFeatures&) { return kSupported; }

const RowEntry kShort{"short", "fast", short_rows};
const RowEntry kEven{"even", "fast", even_rows};
const RowEntry kAny{"ref", "ref", any_row};
const std::vector<const RowEntry*> kList = {&kShort, &kEven, &kAny};

std::string chosen(int length, const std::string& only, std::string* refusals = nullptr) {
  const ListChoice<RowEntry> choice = choose_from(kList, RowProblem{length}, CpuFeatures{}, only);
  if (refusals != nullptr) *refusals = choice.refusals;
  return choice.entry->name;
}

TEST(EntryList, TheFirstEntryThatSupportsTheProblemWins) {
  std::string refusals;
  EXPECT_EQ(chosen(4, "", &refusals), "short");
  EXPECT_EQ(refusals, "");
  EXPECT_EQ(chosen(10, "", &refusals), "even");
  EXPECT_EQ(refusals, "short: longer than 8");
  EXPECT_EQ(chosen(11, "", &refusals), "ref");
  EXPECT_EQ(refusals, "short: longer than 8; even: odd");
}

TEST(EntryList, NamedEntriesAreAskedFirstAndEachPositionOnce) {
  std::string refusals;
  EXPECT_EQ(chosen(4, "even", &refusals), "even");  // ahead of `short`, which would take it
  EXPECT_EQ(refusals, "");
  EXPECT_EQ(chosen(5, "even", &refusals), "short");  // refused: the list's own order after it
  EXPECT_EQ(refusals, "even: odd");
  EXPECT_EQ(chosen(11, "fast", &refusals), "ref");  // a family names its entries, in the list's order
  EXPECT_EQ(refusals, "short: longer than 8; even: odd");
  EXPECT_EQ(chosen(4, "ref,even", &refusals), "even");  // several names: the list's order among them
  EXPECT_EQ(chosen(4, "nothing", &refusals), "short");  // a name no entry has changes nothing
}

}  // namespace
}  // namespace aclnn_cpu
