// ACLNN_TESTS_SLOW_HOST, set by the asan and aarch64 test presets (sanitizers, emulation: tests run many
// times slower there): suites that repeat value checks the release stage makes on every variant run a
// smaller share of them, each saying which.
#pragma once

#include <cstdlib>

namespace testing_support {

inline bool slow_host() {
  const char* value = std::getenv("ACLNN_TESTS_SLOW_HOST");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

}  // namespace testing_support
