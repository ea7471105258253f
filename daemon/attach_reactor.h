// AttachReactor: one attached client's event stream. It is a Subscriber of its session and
// writes the queued events one at a time (only one write may be in flight).
//
// Queue policy: bounded by kMaxQueuedEvents and kMaxQueuedBytes. Past a few queued events,
// consecutive text deltas are merged into one, so a lagging client gets the same text in
// fewer messages. Past the bound the backlog is dropped and, once the in-flight write is done,
// the client is sent a fresh snapshot, after which live events continue. The session never
// waits for a client, and a client that never reads costs at most the bound.
//
// Lifetime: created by the Attach handler, deletes itself in OnDone after detaching.
// Thread-safety: `mu_` guards the queue; Deliver runs under the session's mutex, OnWriteDone
// on a gRPC thread. StartWrite is never called with `mu_` held.
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/v1/agent.pb.h"
#include "daemon/event_log.h"
#include "daemon/session.h"
#include "grpcpp/grpcpp.h"

namespace agent::daemon {

class AttachReactor : public grpc::ServerWriteReactor<agent::v1::Event>, public Subscriber {
 public:
  AttachReactor(std::shared_ptr<Session> session, const agent::v1::AttachRequest& request);

  void Deliver(const EventPtr& event) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Takes the next event to write, or null; sets writing_.
  EventPtr NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishOnce(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  std::shared_ptr<Session> session_;
  absl::Mutex mu_;
  std::deque<EventPtr> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool lagged_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  EventPtr current_;  // the event being written; untouched until OnWriteDone
};

}  // namespace agent::daemon
