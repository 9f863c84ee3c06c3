// No exception crosses the C ABI: every public entry point runs its body through guard(), which
// turns an escaping exception into the entry point's failure value and a recorded message.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>

namespace aclnn_cpu {

// Records "<api>: <problem><detail>" for aclGetRecentErrMsg and the log; never throws (under
// memory exhaustion the message may be lost, the status is not).
void report_escaped(const char* api, const char* problem, const char* detail = "") noexcept;

// The integer a caller passed for an enum parameter. Callers pass values outside the enum (a C
// enum holds any int); reading such a value as the enum type is undefined behaviour in C++, so
// the bytes are read as an int instead, and validated as one.
template <typename Enum>
int32_t raw_enum(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "C enums are int-sized");
  int32_t raw;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

// Runs `body`; `out_of_memory` when it throws std::bad_alloc, `internal` for anything else.
template <typename Result, typename Body>
Result guard(const char* api, Result out_of_memory, Result internal, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    report_escaped(api, "out of host memory");
    return out_of_memory;
  } catch (const std::exception& e) {
    report_escaped(api, "internal error: ", e.what());
    return internal;
  } catch (...) {
    report_escaped(api, "internal error: unknown exception");
    return internal;
  }
}

}  // namespace aclnn_cpu
