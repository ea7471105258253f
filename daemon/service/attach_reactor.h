// AttachReactor: one attached client's event stream. It is a Subscriber of its session and
// writes events one at a time through a SubscriberQueue (whose header states the policy for
// slow clients). The session never waits for a client.
//
// Lifetime: created by the Attach handler, deletes itself in OnDone after detaching. For a
// session that is not loaded, the handler creates it pending and a disk worker calls Start
// (or Refuse) once the session is read: until that returns, nothing finishes the stream (a
// cancel meanwhile is sent after it), so the worker never touches a deleted reactor.
// Thread-safety: `mu_` guards the queue; Deliver runs under the session's mutex, OnWriteDone
// on a gRPC thread. StartWrite is called with neither `mu_` nor the session's mutex held:
// a write Deliver decides on is deferred (deferred_writes.h) and started once the session's
// mutex is released. The reactor cannot finish while that write is pending, so it outlives
// the deferral.
#pragma once

#include <memory>

#include "absl/base/thread_annotations.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/service/subscriber_queue.h"
#include "daemon/service/worker_pool.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/event_log.h"
#include "daemon/session/session.h"
#include "grpcpp/grpcpp.h"

namespace agent::daemon {

class AttachReactor : public grpc::ServerWriteReactor<agent::v1::Event>,
                      public Subscriber,
                      private DeferredWriter {
 public:
  // `detach_on`: where OnDone detaches from the session (a detach may end a session nobody
  // answered, which removes its files: not on a gRPC thread); null: at once.
  AttachReactor(std::shared_ptr<Session> session, const agent::v1::AttachRequest& request,
                WorkerPool* detach_on);
  // Pending: Start or Refuse follows, once.
  AttachReactor(const agent::v1::AttachRequest& request, WorkerPool* detach_on);
  void Start(std::shared_ptr<Session> session) ABSL_LOCKS_EXCLUDED(mu_);
  void Refuse(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  void Deliver(const EventPtr& event) override;
  void End(const absl::Status& status) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void StartDeferredWrite() override ABSL_LOCKS_EXCLUDED(mu_);
  void FinishOnce(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Start or Refuse is done: a finish held back meanwhile is sent.
  void Attached() ABSL_LOCKS_EXCLUDED(mu_);

  WorkerPool* const detach_on_;
  agent::v1::AttachRequest request_;  // pending: what Start attaches with
  std::shared_ptr<Session> session_;  // set before any write starts; null while pending
  agent::Mutex mu_;
  SubscriberQueue queue_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;     // no more writes start
  bool finish_sent_ ABSL_GUARDED_BY(mu_) = false;  // Finish was called
  grpc::Status finish_status_;                     // written before finished_ is set
  EventPtr current_ ABSL_GUARDED_BY(mu_);          // kept alive until its write completes
  // End was called: the stream finishes with end_status_ once the queue is written.
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_deferred_ ABSL_GUARDED_BY(mu_) = false;  // StartDeferredWrite finishes instead
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
  bool attaching_ ABSL_GUARDED_BY(mu_) = false;             // pending, or Start still running
  bool finish_when_attached_ ABSL_GUARDED_BY(mu_) = false;  // a finish waits for Attached
};

}  // namespace agent::daemon
