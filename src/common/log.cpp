#include "common/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace aclnn_cpu {
namespace {

thread_local std::string t_recent_error;

LogLevel configured_level() {
  const char* env = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
  if (env == nullptr || env[0] < '0' || env[0] > '4' || env[1] != '\0') return LogLevel::kError;
  return static_cast<LogLevel>(env[0] - '0');
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    default: return "ERROR";
  }
}

}  // namespace

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), text.size() + 1, fmt, args);
  va_end(args);
  return text;
}

void log_message(LogLevel level, const std::string& message) {
  if (level == LogLevel::kOff || static_cast<int>(level) < static_cast<int>(configured_level())) return;
  std::fprintf(stderr, "[%s] ACLNN_CPU %s\n", level_name(level), message.c_str());
}

void report_error(const std::string& message) {
  t_recent_error = message;
  log_message(LogLevel::kError, message);
}

void set_recent_error(const std::string& message) { t_recent_error = message; }

std::string take_recent_error() {
  std::string message;
  message.swap(t_recent_error);
  return message;
}

}  // namespace aclnn_cpu
