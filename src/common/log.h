// Failure messages: every failing public call records one sentence for aclGetRecentErrMsg() and
// logs it as one line, "[ERROR] ACLNN(<pid>,<process>):<yyyy-mm-dd-hh:mm:ss.mmm.uuu> <message>",
// filtered by ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info, 2 warning, 3 error = default, 4 off).
// Lines go to stderr; to stdout with ASCEND_SLOG_PRINT_TO_STDOUT=1; else, with
// ASCEND_PROCESS_LOG_PATH=<dir>, to <dir>/plog/plog-<pid>_<yyyymmddhhmmssmmm>.log.
#pragma once

#include <string>

namespace aclnn_cpu {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

// printf-style formatting into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Prints `message` at `level` if ASCEND_GLOBAL_LOG_LEVEL allows it.
void log_message(LogLevel level, const std::string& message);

// Records `message` as the calling thread's recent error and logs it at error level.
void report_error(const std::string& message);

// Records `message` as the calling thread's recent error without logging it again
// (used to hand an asynchronous failure, already logged, to the synchronising thread).
void set_recent_error(const std::string& message);

// The calling thread's recent error message, then cleared ("" if none).
std::string take_recent_error();

}  // namespace aclnn_cpu
