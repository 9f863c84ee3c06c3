#include "meta/executor.h"

#include <cstring>
#include <map>
#include <mutex>

#include "aclnn/opdev/op_errno.h"
#include "common/fork.h"
#include "common/guard.h"
#include "common/log.h"
#include "runtime/runtime.h"

namespace aclnn_cpu {
namespace {

struct ExecutorEntry {
  std::shared_ptr<aclOpExecutor> executor;  // shared with runs still queued on a stream
  bool repeatable = false;
};

struct ExecutorTable {
  ForkSafeMutex mutex{ForkStage::kExecutors};
  std::map<aclOpExecutor*, ExecutorEntry> live;
};

ExecutorTable& executors() {
  static ExecutorTable table;
  return table;
}

}  // namespace

aclOpExecutor* register_executor(std::unique_ptr<aclOpExecutor> executor) {
  aclOpExecutor* handle = executor.get();
  ExecutorTable& table = executors();
  std::lock_guard<ForkSafeMutex> lock(table.mutex);
  table.live[handle] = ExecutorEntry{std::shared_ptr<aclOpExecutor>(std::move(executor)), false};
  return handle;
}

aclnnStatus run_executor(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream,
                         const char* api) {
  if (executor == nullptr) {
    report_error(format("%s: executor is nullptr", api));
    return ACLNN_ERR_PARAM_NULLPTR;
  }
  ExecutorTable& table = executors();
  std::shared_ptr<aclOpExecutor> planned;
  bool one_shot = true;
  {
    std::lock_guard<ForkSafeMutex> lock(table.mutex);
    auto found = table.live.find(executor);
    if (found == table.live.end()) {
      report_error(
          format("%s: executor %p is unknown or was already released (a one-shot executor is freed by "
                 "its first run)",
                 api, static_cast<void*>(executor)));
      return ACLNN_ERR_INNER;
    }
    if (std::strcmp(found->second.executor->run_api(), api) != 0) {
      report_error(format("%s: executor %p was planned by %sGetWorkspaceSize and runs only through %s, not %s", api,
                          static_cast<void*>(executor), found->second.executor->run_api(),
                          found->second.executor->run_api(), api));
      return ACLNN_ERR_PARAM_INVALID;
    }
    planned = found->second.executor;
    one_shot = !found->second.repeatable;
    if (one_shot) table.live.erase(found);
  }
  const char* released = one_shot ? "; the one-shot executor has been released" : "";
  if (workspaceSize > 0 && workspace == nullptr) {
    report_error(format("%s: workspace is nullptr while workspaceSize is %llu%s", api,
                        static_cast<unsigned long long>(workspaceSize), released));
    return ACLNN_ERR_PARAM_NULLPTR;
  }
  const Refusal refusal = planned->refusal();
  if (refusal.status != 0) {
    report_error(format("%s: %s: the plan cannot run%s", api, refusal.message.c_str(), released));
    return refusal.status;
  }
  const uint64_t required = planned->workspace_bytes();
  if (workspaceSize < required) {
    report_error(format("%s: workspaceSize %llu is smaller than the %llu bytes reported by GetWorkspaceSize%s", api,
                        static_cast<unsigned long long>(workspaceSize), static_cast<unsigned long long>(required),
                        released));
    return ACLNN_ERR_PARAM_INVALID;
  }
  const int queued = enqueue_on_stream(
      stream, [planned, workspace] { return static_cast<int>(planned->run(workspace)); }, api);
  return queued == 0 ? ACLNN_SUCCESS : ACLNN_ERR_RUNTIME_ERROR;
}

}  // namespace aclnn_cpu

extern "C" {

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  return aclnn_cpu::guard<aclnnStatus>(
      "aclSetAclOpExecutorRepeatable", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
        if (executor == nullptr) {
          aclnn_cpu::report_error("aclSetAclOpExecutorRepeatable: executor is nullptr");
          return ACLNN_ERR_INNER_NULLPTR;
        }
        auto& table = aclnn_cpu::executors();
        std::lock_guard<aclnn_cpu::ForkSafeMutex> lock(table.mutex);
        auto found = table.live.find(executor);
        if (found == table.live.end()) {
          aclnn_cpu::report_error("aclSetAclOpExecutorRepeatable: executor is unknown or was already released");
          return ACLNN_ERR_INNER;
        }
        found->second.repeatable = true;
        return ACLNN_SUCCESS;
      });
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  return aclnn_cpu::guard<aclnnStatus>(
      "aclDestroyAclOpExecutor", ACLNN_ERR_INNER_NULLPTR, ACLNN_ERR_INNER, [&]() -> aclnnStatus {
        if (executor == nullptr) {
          aclnn_cpu::report_error("aclDestroyAclOpExecutor: executor is nullptr");
          return ACLNN_ERR_INNER_NULLPTR;
        }
        auto& table = aclnn_cpu::executors();
        std::lock_guard<aclnn_cpu::ForkSafeMutex> lock(table.mutex);
        if (table.live.erase(executor) == 0) {
          aclnn_cpu::report_error("aclDestroyAclOpExecutor: executor is unknown or was already released");
          return ACLNN_ERR_INNER;
        }
        return ACLNN_SUCCESS;
      });
}

}  // extern "C"
