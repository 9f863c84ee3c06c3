#include "common/fork.h"

#include <pthread.h>

#include <atomic>

namespace aclnn_cpu {
namespace {

constexpr int kStages = static_cast<int>(ForkStage::kCount);

std::atomic<ForkParticipant*> g_participants[kStages];

// The participants the fork in progress locked; a stage set meanwhile is not released either.
// The C library runs one fork's handlers at a time, all on the forking thread.
ForkParticipant* g_locked[kStages];

void before_fork() {
  for (int stage = 0; stage < kStages; ++stage) {
    g_locked[stage] = g_participants[stage].load(std::memory_order_acquire);
    if (g_locked[stage] != nullptr) g_locked[stage]->before_fork();
  }
}

void after_fork_in_parent() {
  for (int stage = kStages - 1; stage >= 0; --stage) {
    if (g_locked[stage] != nullptr) g_locked[stage]->after_fork_in_parent();
  }
}

void after_fork_in_child() {
  for (int stage = kStages - 1; stage >= 0; --stage) {
    if (g_locked[stage] != nullptr) g_locked[stage]->after_fork_in_child();
  }
}

// Installed when the library is loaded: pthread_atfork waits for a fork in progress, so calling
// it later, from a participant's first use, could wait on a fork whose handlers wait on that use.
[[maybe_unused]] const int g_installed = pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);

}  // namespace

void set_fork_participant(ForkStage stage, ForkParticipant* participant) noexcept {
  g_participants[static_cast<int>(stage)].store(participant, std::memory_order_release);
}

}  // namespace aclnn_cpu
