#include "common/log.h"

#include <errno.h>  // program_invocation_short_name (glibc)
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "common/fork.h"
#include "common/guard.h"

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

namespace {

bool env_is(const char* name, const char* value) {
  const char* set = std::getenv(name);
  return set != nullptr && std::strcmp(set, value) == 0;
}

// "2026-11-22-16:05:00.123.456" (local time, milliseconds, microseconds), as CANN's logs write it.
std::string timestamp(const char* date_format) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char date[32];
  std::strftime(date, sizeof date, date_format, &local);
  return format("%s.%03d.%03d", date, static_cast<int>(micros / 1000), static_cast<int>(micros % 1000));
}

// The log file under ASCEND_PROCESS_LOG_PATH, opened on the first line: <dir>/plog/plog-<pid>_<time>.log.
std::FILE* process_log_file(const char* directory) {
  static std::FILE* file = nullptr;
  static std::string opened_for;
  if (file != nullptr && opened_for == directory) return file;
  if (file != nullptr) std::fclose(file);
  const std::string plog = std::string(directory) + "/plog";
  ::mkdir(directory, 0750);
  ::mkdir(plog.c_str(), 0750);
  std::string stamp = timestamp("%Y%m%d%H%M%S");
  stamp.erase(stamp.find('.'), 1);  // 20261122160500123.456 -> milliseconds, no microseconds
  stamp.erase(stamp.find('.'));
  const std::string path = format("%s/plog-%d_%s.log", plog.c_str(), static_cast<int>(::getpid()), stamp.c_str());
  file = std::fopen(path.c_str(), "a");
  opened_for = file != nullptr ? directory : "";
  return file;
}

}  // namespace

void log_message(LogLevel level, const std::string& message) {
  if (level == LogLevel::kOff || static_cast<int>(level) < static_cast<int>(configured_level())) return;
  // [ERROR] ACLNN(<pid>,<process>):<yyyy-mm-dd-hh:mm:ss.mmm.uuu> <message>
  const std::string line =
      format("[%s] ACLNN(%d,%s):%s %s\n", level_name(level), static_cast<int>(::getpid()),
             program_invocation_short_name, timestamp("%Y-%m-%d-%H:%M:%S").c_str(), message.c_str());
  static ForkSafeMutex mutex(ForkStage::kLog);  // also guards the log file
  std::lock_guard<ForkSafeMutex> lock(mutex);
  std::FILE* out = stderr;
  const char* directory = std::getenv("ASCEND_PROCESS_LOG_PATH");
  if (env_is("ASCEND_SLOG_PRINT_TO_STDOUT", "1")) {
    out = stdout;
  } else if (directory != nullptr && directory[0] != '\0') {
    if (std::FILE* file = process_log_file(directory)) out = file;
  }
  std::fputs(line.c_str(), out);
  std::fflush(out);
}

void report_error(const std::string& message) {
  t_recent_error = message;
  log_message(LogLevel::kError, message);
}

void report_escaped(const char* api, const char* problem, const char* detail) noexcept {
  try {
    report_error(format("%s: %s%s", api, problem, detail));
  } catch (...) {  // no memory even for the message: the caller still returns its status
  }
}

void set_recent_error(const std::string& message) { t_recent_error = message; }

std::string take_recent_error() {
  std::string message;
  message.swap(t_recent_error);
  return message;
}

}  // namespace aclnn_cpu
