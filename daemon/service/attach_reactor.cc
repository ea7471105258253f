#include "daemon/service/attach_reactor.h"

#include "common/grpc_status.h"
#include "common/protocol.h"

namespace agent::daemon {

AttachReactor::AttachReactor(std::shared_ptr<Session> session,
                             const agent::v1::AttachRequest& request, WorkerPool* detach_on)
    : detach_on_(detach_on),
      session_(std::move(session)),
      queue_(kMaxQueuedEvents, kMaxQueuedBytes) {
  session_->Attach(this, request.client_name(), request.read_only(), request.epoch(),
                   request.after_seq(), request.serves_file_text());
}

AttachReactor::AttachReactor(const agent::v1::AttachRequest& request, WorkerPool* detach_on)
    : detach_on_(detach_on),
      request_(request),
      queue_(kMaxQueuedEvents, kMaxQueuedBytes),
      attaching_(true) {}

void AttachReactor::Start(std::shared_ptr<Session> session) {
  bool cancelled = false;
  {
    agent::MutexLock l(&mu_);
    cancelled = finished_;  // the client went away while the session was read
    if (!cancelled) session_ = session;
  }
  if (!cancelled) {
    session->Attach(this, request_.client_name(), request_.read_only(), request_.epoch(),
                    request_.after_seq(), request_.serves_file_text());
  }
  Attached();
}

void AttachReactor::Refuse(const grpc::Status& status) {
  FinishOnce(status);
  Attached();
}

void AttachReactor::Attached() {
  bool finish = false;
  {
    agent::MutexLock l(&mu_);
    attaching_ = false;
    if (finish_when_attached_ && !finish_sent_ && !queue_.writing() && !finish_deferred_) {
      finish = true;
      finish_sent_ = true;
    }
  }
  if (finish) Finish(finish_status_);
}

void AttachReactor::Deliver(const EventPtr& event) {
  agent::MutexLock l(&mu_);
  if (finished_ || ending_) return;
  EventPtr now = queue_.Push(event);
  if (!now) return;
  current_ = std::move(now);
  // queue_.writing() is set, so a Finish meanwhile waits for this write's completion.
  DeferWrite(this);
}

void AttachReactor::End(const absl::Status& status) {
  agent::MutexLock l(&mu_);
  if (finished_ || ending_) return;
  ending_ = true;
  end_status_ = ToGrpcStatus(status);
  if (queue_.writing()) return;  // OnWriteDone finishes once the queue is written
  // Finish waits for the session's mutex to be released, as a write would.
  finish_deferred_ = true;
  DeferWrite(this);
}

void AttachReactor::StartDeferredWrite() {
  EventPtr now;
  bool finish = false;
  {
    agent::MutexLock l(&mu_);
    if (finish_deferred_) {
      finish_deferred_ = false;
      if (!finished_) finish_status_ = end_status_;  // else a cancel came first
      finished_ = true;
      if (attaching_) {
        finish_when_attached_ = true;
      } else {
        finish = !finish_sent_;
        finish_sent_ = true;
      }
    } else {
      now = current_;
    }
  }
  if (finish) {
    Finish(finish_status_);
    return;
  }
  if (now) StartWrite(now.get());
}

void AttachReactor::OnWriteDone(bool ok) {
  SubscriberQueue::AfterWrite next;
  bool finish = false;
  {
    agent::MutexLock l(&mu_);
    current_.reset();
    next = queue_.WriteDone();
    if (!ok && !finished_) {
      finished_ = true;
      finish_status_ = grpc::Status::CANCELLED;
    }
    if (!finished_ && ending_ && !next.write) {
      finished_ = true;
      finish_status_ = end_status_;
    }
    if (finished_ && attaching_) {
      finish_when_attached_ = true;
      next = {};
    } else if (finished_) {
      finish = !finish_sent_;
      finish_sent_ = true;
      next = {};
    } else if (next.write) {
      current_ = next.write;
    }
  }
  if (finish) {
    Finish(finish_status_);
    return;
  }
  if (next.resync) {
    session_->Resync(this);  // delivers a snapshot through Deliver, which writes it
    return;
  }
  if (next.write) StartWrite(next.write.get());
}

void AttachReactor::FinishOnce(const grpc::Status& status) {
  {
    agent::MutexLock l(&mu_);
    if (finished_) return;
    finished_ = true;
    finish_status_ = status;
    // Finish must not overtake a write in flight (OnWriteDone sends it then) or a deferred
    // finish (StartDeferredWrite sends it).
    if (queue_.writing() || finish_deferred_) return;
    if (attaching_) {
      finish_when_attached_ = true;  // Attached sends it
      return;
    }
    finish_sent_ = true;
  }
  Finish(status);
}

void AttachReactor::OnCancel() { FinishOnce(grpc::Status::CANCELLED); }

void AttachReactor::OnDone() {
  // Finished: the session's Deliver does nothing with this reactor until it is detached.
  if (session_ && detach_on_ != nullptr && detach_on_->Submit([this] {
        session_->Detach(this);
        delete this;
      })) {
    return;
  }
  if (session_) session_->Detach(this);  // null: refused or cancelled before it attached
  delete this;
}

}  // namespace agent::daemon
