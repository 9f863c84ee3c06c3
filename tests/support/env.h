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

// Sets an environment variable ("" unsets it) for a scope, then puts it back as it was.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value.empty()) {
      unsetenv(name);
    } else {
      setenv(name, value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

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

// The settings that force a choice (ACLNN_CONVBWD_ISA, _AMX, _BF16_DOT), put back as the process
// started with after every test: tests that set them for their own checks then leave the next test
// the setting that ctest forces (tests/CMakeLists.txt, the `_choices_` runs). Register once per test
// program, from a namespace-scope initializer: `const bool kRestored = restore_choice_settings();`.
class RestoreChoiceSettings : public ::testing::EmptyTestEventListener {
 public:
  RestoreChoiceSettings() {
    for (int i = 0; i < kCount; ++i) {
      const char* value = std::getenv(kNames[i]);
      set_[i] = value != nullptr;
      values_[i] = set_[i] ? value : "";
    }
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    for (int i = 0; i < kCount; ++i) {
      if (set_[i]) {
        setenv(kNames[i], values_[i].c_str(), 1);
      } else {
        unsetenv(kNames[i]);
      }
    }
  }

 private:
  static constexpr int kCount = 3;
  static constexpr const char* kNames[kCount] = {"ACLNN_CONVBWD_ISA", "ACLNN_CONVBWD_AMX", "ACLNN_CONVBWD_BF16_DOT"};
  bool set_[kCount] = {};
  std::string values_[kCount];
};
inline bool restore_choice_settings() {
  ::testing::UnitTest::GetInstance()->listeners().Append(new RestoreChoiceSettings);
  return true;
}

}  // namespace testing_support
