// Writes to attached clients that are decided under a session's mutex and started after it is
// released: a gRPC write may take gRPC's own locks, and must never run with the session locked.
//
// A subscriber that has a write to start calls DeferWrite from Deliver (which runs under the
// session's mutex); SessionMutexLock starts this thread's deferred writes once it has released
// the mutex. Per thread, so no lock is needed. A deferring subscriber must stay alive until its
// write has started (AttachReactor does: it does not finish while a write is pending).
#pragma once

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace agent::daemon {

class DeferredWriter {
 public:
  virtual void StartDeferredWrite() = 0;

 protected:
  ~DeferredWriter() = default;
};

// Records `w` to be started by this thread's next RunDeferredWrites.
void DeferWrite(DeferredWriter* w);
// Starts what this thread deferred, in order. Call with no session mutex held.
void RunDeferredWrites();

// The lock every Session method takes: a MutexLock that runs the deferred writes after
// releasing the mutex.
class ABSL_SCOPED_LOCKABLE SessionMutexLock {
 public:
  explicit SessionMutexLock(agent::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~SessionMutexLock() ABSL_UNLOCK_FUNCTION() {
    mu_->Unlock();
    RunDeferredWrites();
  }
  SessionMutexLock(const SessionMutexLock&) = delete;
  SessionMutexLock& operator=(const SessionMutexLock&) = delete;

 private:
  agent::Mutex* const mu_;
};

}  // namespace agent::daemon
