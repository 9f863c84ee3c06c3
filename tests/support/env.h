// The tests' environment variables.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

namespace testing_support {

// ACLNN_TESTS_SLOW_HOST, set by the asan and aarch64 test presets (sanitizers, emulation: tests run many
// times slower there): suites that repeat value checks the release stage makes on every variant run a
// smaller share of them, each saying which.
inline bool slow_host() {
  const char* value = std::getenv("ACLNN_TESTS_SLOW_HOST");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

// Whether ACLNN_CONVBWD_KERNELS forces entries (the suites' `_on_reference_kernels` runs).
inline bool entries_forced() { return std::getenv("ACLNN_CONVBWD_KERNELS") != nullptr; }

// The standard output of `body` run under ACLNN_CONVBWD_VERBOSE=1 (a line per execution, naming the entry
// that computed each result); the variable is put back as it was.
inline std::string verbose_lines(const std::function<void()>& body) {
  const char* before = std::getenv("ACLNN_CONVBWD_VERBOSE");
  const std::string was = before != nullptr ? before : "";
  setenv("ACLNN_CONVBWD_VERBOSE", "1", 1);
  ::testing::internal::CaptureStdout();
  body();
  std::string lines = ::testing::internal::GetCapturedStdout();
  if (before != nullptr) {
    setenv("ACLNN_CONVBWD_VERBOSE", was.c_str(), 1);
  } else {
    unsetenv("ACLNN_CONVBWD_VERBOSE");
  }
  return lines;
}

}  // namespace testing_support
