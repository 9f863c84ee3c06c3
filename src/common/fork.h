// fork() in a multithreaded process copies only the calling thread into the child: a lock another
// thread held stays locked there forever, and the other threads (stream workers, the compute
// thread and its OpenMP team) do not exist. Each part of the library that owns locks or threads
// is a ForkParticipant; around every fork() of the process (pthread_atfork):
//   - before it, each takes its locks, in ForkStage order, so no state is mid-update;
//   - in the parent, each releases them (reverse order);
//   - in the child, each releases them, re-creates its condition variables (their copies may count
//     waiters that exist only in the parent) and forgets its threads, which its next use starts
//     again (reverse order).
// ForkStage is the lock order: code holding a stage's lock may take a later stage's lock, never an
// earlier one. The handlers never call into OpenMP.
#pragma once

#include <mutex>
#include <new>

namespace aclnn_cpu {

enum class ForkStage { kRuntime, kExecutors, kAllocations, kStreams, kComputeThread, kLog, kCount };

class ForkParticipant {
 public:
  virtual void before_fork() noexcept = 0;
  virtual void after_fork_in_parent() noexcept = 0;
  virtual void after_fork_in_child() noexcept = 0;

 protected:
  ~ForkParticipant() = default;
};

// One participant per stage: set once it is constructed, reset to nullptr before it is destroyed.
void set_fork_participant(ForkStage stage, ForkParticipant* participant) noexcept;

// A mutex that stays usable in a fork() child: the forking thread holds it across fork(), and
// releases it in both processes.
class ForkSafeMutex final : public ForkParticipant {
 public:
  explicit ForkSafeMutex(ForkStage stage) : stage_(stage) { set_fork_participant(stage, this); }
  ~ForkSafeMutex() { set_fork_participant(stage_, nullptr); }
  ForkSafeMutex(const ForkSafeMutex&) = delete;
  ForkSafeMutex& operator=(const ForkSafeMutex&) = delete;

  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }

  void before_fork() noexcept override { mutex_.lock(); }
  void after_fork_in_parent() noexcept override { mutex_.unlock(); }
  void after_fork_in_child() noexcept override { mutex_.unlock(); }

 private:
  std::mutex mutex_;
  ForkStage stage_;
};

// Re-creates `object` in place without running its destructor. In a fork() child, for a copy
// that describes threads of the parent (a condition variable's waiters, a thread handle): such a
// copy is abandoned, not destroyed (destroying it would wait for, or terminate on, those threads).
template <typename T>
void recreate_in_fork_child(T& object) noexcept {
  ::new (static_cast<void*>(&object)) T();
}

}  // namespace aclnn_cpu
