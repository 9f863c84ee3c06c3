// AscendCL runtime entry points on the host: init, devices, streams, system options.
#include "runtime/runtime.h"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "acl/acl.h"
#include "common/fork.h"
#include "common/guard.h"
#include "common/log.h"
#include "runtime/device_backend.h"

namespace aclnn_cpu {
namespace {

constexpr int32_t kNoDevice = -1;

struct RuntimeState {
  ForkSafeMutex mutex{ForkStage::kRuntime};
  bool initialized = false;
  // Shared so that a synchronize in progress keeps its stream alive past a concurrent destroy.
  std::map<Stream*, std::shared_ptr<Stream>> streams;  // user-created, live
  std::shared_ptr<Stream> default_stream;              // created on first use
  std::map<int, int64_t> sys_params;                   // aclSysParamOpt -> value
};

RuntimeState& state() {
  static RuntimeState s;
  return s;
}

thread_local int32_t t_current_device = kNoDevice;

// The default stream, created on first use (nullptr if its worker cannot start).
std::shared_ptr<Stream> default_stream_locked(RuntimeState& s) {
  if (!s.default_stream) s.default_stream = device_backend().create_stream();
  return s.default_stream;
}

aclError fail(aclError code, const std::string& message) {
  report_error(message);
  return code;
}

bool valid_device(int32_t id) { return id >= 0 && static_cast<uint32_t>(id) < device_backend().device_count(); }

bool valid_sys_param(const aclSysParamOpt& opt) {
  const int value = raw_enum(opt);
  return value >= ACL_OPT_DETERMINISTIC && value <= ACL_OPT_ENABLE_KERNEL_EARLY_START;
}

// Waits for every stream live at the call; returns the first failure found. The runtime lock is
// held only to list the streams, so other threads keep enqueueing meanwhile.
aclError synchronize_all() {
  RuntimeState& s = state();
  std::vector<std::shared_ptr<Stream>> live;
  {
    std::lock_guard<ForkSafeMutex> lock(s.mutex);
    if (s.default_stream) live.push_back(s.default_stream);
    for (auto& entry : s.streams) live.push_back(entry.second);
  }
  aclError status = ACL_SUCCESS;
  for (const std::shared_ptr<Stream>& stream : live) {
    const aclError one = stream->synchronize();
    if (status == ACL_SUCCESS) status = one;
  }
  return status;
}

aclError no_stream_worker(const char* api) {
  return fail(ACL_ERROR_BAD_ALLOC, format("%s: the stream's worker thread could not be started", api));
}

}  // namespace

int enqueue_on_stream(aclrtStream stream, StreamTask task, const char* api) {
  RuntimeState& s = state();
  std::lock_guard<ForkSafeMutex> lock(s.mutex);
  if (stream == nullptr) {
    std::shared_ptr<Stream> fallback = default_stream_locked(s);
    if (fallback == nullptr || !fallback->enqueue(std::move(task))) return no_stream_worker(api);
    return ACL_SUCCESS;
  }
  auto found = s.streams.find(static_cast<Stream*>(stream));
  if (found == s.streams.end()) {
    report_error(format("%s: stream %p is not a live stream created by aclrtCreateStream", api, stream));
    return ACL_ERROR_INVALID_PARAM;
  }
  if (!found->second->enqueue(std::move(task))) return no_stream_worker(api);
  return ACL_SUCCESS;
}

}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

aclError aclInit(const char* configPath) {
  return guard<aclError>("aclInit", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    RuntimeState& s = state();
    std::lock_guard<ForkSafeMutex> lock(s.mutex);
    if (s.initialized) return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialised; call aclFinalize first");
    if (configPath != nullptr && configPath[0] != '\0') {
      std::FILE* file = std::fopen(configPath, "r");
      if (file == nullptr) {
        return fail(
            ACL_ERROR_INVALID_FILE,
            format("aclInit: configPath \"%s\" cannot be opened (pass nullptr or a readable file)", configPath));
      }
      std::fclose(file);
    }
    s.initialized = true;
    return ACL_SUCCESS;
  });
}

aclError aclFinalize(void) {
  return guard<aclError>("aclFinalize", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    {
      std::lock_guard<ForkSafeMutex> lock(state().mutex);
      if (!state().initialized) return fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: aclInit has not been called");
    }
    synchronize_all();
    std::lock_guard<ForkSafeMutex> lock(state().mutex);
    state().initialized = false;
    return ACL_SUCCESS;
  });
}

const char* aclGetRecentErrMsg(void) {
  return guard<const char*>("aclGetRecentErrMsg", nullptr, nullptr, [&]() -> const char* {
    static thread_local std::string returned;
    returned = take_recent_error();
    return returned.empty() ? nullptr : returned.c_str();
  });
}

aclError aclrtSetDevice(int32_t deviceId) {
  return guard<aclError>("aclrtSetDevice", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (!valid_device(deviceId)) {
      return fail(ACL_ERROR_RT_INVALID_DEVICEID, format("aclrtSetDevice: deviceId %d is out of range [0, %u)", deviceId,
                                                        device_backend().device_count()));
    }
    t_current_device = deviceId;
    return ACL_SUCCESS;
  });
}

aclError aclrtResetDevice(int32_t deviceId) {
  return guard<aclError>("aclrtResetDevice", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (!valid_device(deviceId)) {
      return fail(ACL_ERROR_RT_INVALID_DEVICEID, format("aclrtResetDevice: deviceId %d is out of range [0, %u)",
                                                        deviceId, device_backend().device_count()));
    }
    synchronize_all();
    if (t_current_device == deviceId) t_current_device = kNoDevice;
    return ACL_SUCCESS;
  });
}

aclError aclrtGetDevice(int32_t* deviceId) {
  return guard<aclError>("aclrtGetDevice", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (deviceId == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is nullptr");
    if (t_current_device == kNoDevice) {
      return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice: no device is set on this thread (call aclrtSetDevice)");
    }
    *deviceId = t_current_device;
    return ACL_SUCCESS;
  });
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  return guard<aclError>("aclrtGetDeviceCount", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (count == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is nullptr");
    *count = device_backend().device_count();
    return ACL_SUCCESS;
  });
}

aclError aclrtSynchronizeDevice(void) {
  return guard<aclError>("aclrtSynchronizeDevice", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR,
                         [&]() -> aclError { return synchronize_all(); });
}

aclError aclrtCreateStream(aclrtStream* stream) {
  return guard<aclError>("aclrtCreateStream", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is nullptr");
    std::shared_ptr<Stream> created = device_backend().create_stream();
    if (created == nullptr) return no_stream_worker("aclrtCreateStream");
    Stream* handle = created.get();
    {
      std::lock_guard<ForkSafeMutex> lock(state().mutex);
      state().streams.emplace(handle, std::move(created));
    }
    *stream = handle;
    return ACL_SUCCESS;
  });
}

aclError aclrtDestroyStream(aclrtStream stream) {
  return guard<aclError>("aclrtDestroyStream", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is nullptr");
    std::shared_ptr<Stream> doomed;
    {
      std::lock_guard<ForkSafeMutex> lock(state().mutex);
      auto found = state().streams.find(static_cast<Stream*>(stream));
      if (found == state().streams.end()) {
        return fail(ACL_ERROR_INVALID_PARAM, format("aclrtDestroyStream: stream %p is not a live stream", stream));
      }
      doomed = std::move(found->second);
      state().streams.erase(found);
    }
    doomed.reset();  // drains the queue before the worker stops (or when the last synchronize ends)
    return ACL_SUCCESS;
  });
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  return guard<aclError>("aclrtSynchronizeStream", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    RuntimeState& s = state();
    std::unique_lock<ForkSafeMutex> lock(s.mutex);
    std::shared_ptr<Stream> target;
    if (stream == nullptr) {
      target = default_stream_locked(s);
      if (target == nullptr) return no_stream_worker("aclrtSynchronizeStream");
    } else {
      auto found = s.streams.find(static_cast<Stream*>(stream));
      if (found == s.streams.end()) {
        return fail(ACL_ERROR_INVALID_PARAM, format("aclrtSynchronizeStream: stream %p is not a live stream", stream));
      }
      target = found->second;
    }
    lock.unlock();  // other threads may enqueue, or destroy this stream, while we wait
    return target->synchronize();
  });
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  return guard<aclError>("aclrtSetSysParamOpt", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (!valid_sys_param(opt)) {
      return fail(ACL_ERROR_INVALID_PARAM,
                  format("aclrtSetSysParamOpt: opt %d is not an aclSysParamOpt value (0..3)", raw_enum(opt)));
    }
    std::lock_guard<ForkSafeMutex> lock(state().mutex);
    state().sys_params[raw_enum(opt)] = value;
    return ACL_SUCCESS;
  });
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  return guard<aclError>("aclrtCtxSetSysParamOpt", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (!valid_sys_param(opt)) {
      return fail(ACL_ERROR_INVALID_PARAM,
                  format("aclrtCtxSetSysParamOpt: opt %d is not an aclSysParamOpt value (0..3)", raw_enum(opt)));
    }
    return aclrtSetSysParamOpt(opt, value);
  });
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t* value) {
  return guard<aclError>("aclrtGetSysParamOpt", ACL_ERROR_BAD_ALLOC, ACL_ERROR_INTERNAL_ERROR, [&]() -> aclError {
    if (value == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetSysParamOpt: value is nullptr");
    if (!valid_sys_param(opt)) {
      return fail(ACL_ERROR_INVALID_PARAM,
                  format("aclrtGetSysParamOpt: opt %d is not an aclSysParamOpt value (0..3)", raw_enum(opt)));
    }
    std::lock_guard<ForkSafeMutex> lock(state().mutex);
    auto found = state().sys_params.find(raw_enum(opt));
    if (found == state().sys_params.end()) {
      return fail(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
                  format("aclrtGetSysParamOpt: opt %d has not been set", raw_enum(opt)));
    }
    *value = found->second;
    return ACL_SUCCESS;
  });
}

}  // extern "C"
