// What the operators' validation tests share: tensors without memory (phase 1 never reads data, as
// CANN's own unit tests assume), a planned call's outcome, and tables of cases, each changing a valid
// call in one place and naming the status and the words its message must hold.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

namespace testing_support {

// A contiguous tensor without memory (nullptr where `null`).
struct Shape {
  std::vector<int64_t> dims;
  aclDataType dtype = ACL_FLOAT;
  aclFormat format = ACL_FORMAT_NCHW;
  bool null = false;
  aclTensor* make() const {
    if (null) return nullptr;
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
    return aclCreateTensor(dims.data(), dims.size(), dtype, strides.data(), 0, format, dims.data(), dims.size(),
                           nullptr);
  }
};

struct Outcome {
  aclnnStatus status;
  std::string message;
};

inline std::string recent_error() {
  const char* m = aclGetRecentErrMsg();
  return m == nullptr ? "" : m;
}

// A valid Call changed in one place, and what phase 1 must answer: `status`, and for a refusal a message
// holding `words`.
template <class Call>
struct PlanCase {
  const char* name;
  std::function<void(Call&)> change;
  aclnnStatus status;
  const char* words;
};

// The unchanged Call passes; each case's call gets its status, and a refusal's message names `api` and
// holds the case's words.
template <class Call>
void expect_cases(const std::vector<PlanCase<Call>>& cases, Outcome (*plan)(const Call&), const char* api) {
  const Call valid;
  const Outcome unchanged = plan(valid);
  ASSERT_EQ(unchanged.status, 0) << "the unchanged call must pass: " << unchanged.message;
  for (const PlanCase<Call>& c : cases) {
    Call call;
    c.change(call);
    const Outcome outcome = plan(call);
    EXPECT_EQ(outcome.status, c.status) << c.name << ": " << outcome.message;
    if (c.status == 0) continue;
    EXPECT_NE(outcome.message.find(api), std::string::npos) << c.name << ": " << outcome.message;
    EXPECT_NE(outcome.message.find(c.words), std::string::npos) << c.name << ": " << outcome.message;
  }
}

}  // namespace testing_support
