#include "daemon/attach_reactor.h"

#include "common/protocol.h"

namespace agent::daemon {
namespace {

// Below this many queued events the client keeps up; deltas are not merged.
constexpr size_t kCoalesceAfter = 8;

}  // namespace

AttachReactor::AttachReactor(std::shared_ptr<Session> session,
                             const agent::v1::AttachRequest& request)
    : session_(std::move(session)) {
  session_->Attach(this, request.client_name(), request.read_only(), request.epoch(),
                   request.after_seq());
}

EventPtr AttachReactor::NextLocked() {
  if (writing_ || queue_.empty() || finished_) return nullptr;
  EventPtr e = std::move(queue_.front());
  queue_.pop_front();
  queued_bytes_ -= e->ByteSizeLong();
  writing_ = true;
  return e;
}

void AttachReactor::Deliver(const EventPtr& event) {
  EventPtr to_write;
  {
    absl::MutexLock l(&mu_);
    if (finished_ || lagged_) return;  // lagged: the coming snapshot covers this event
    if (queue_.size() >= kMaxQueuedEvents || queued_bytes_ >= kMaxQueuedBytes) {
      queue_.clear();
      queued_bytes_ = 0;
      lagged_ = true;
      return;
    }
    if (queue_.size() >= kCoalesceAfter && event->has_text_delta() &&
        queue_.back()->has_text_delta()) {
      auto merged = std::make_shared<agent::v1::Event>(*queue_.back());
      merged->mutable_text_delta()->mutable_text()->append(event->text_delta().text());
      merged->set_seq(event->seq());
      queued_bytes_ += event->text_delta().text().size();
      queue_.back() = std::move(merged);
      return;
    }
    queued_bytes_ += event->ByteSizeLong();
    queue_.push_back(event);
    to_write = NextLocked();
    if (to_write) current_ = to_write;
  }
  if (to_write) StartWrite(to_write.get());
}

void AttachReactor::OnWriteDone(bool ok) {
  if (!ok) {
    FinishOnce(grpc::Status::CANCELLED);
    return;
  }
  EventPtr to_write;
  bool resync = false;
  {
    absl::MutexLock l(&mu_);
    writing_ = false;
    current_.reset();
    if (lagged_ && queue_.empty()) {
      lagged_ = false;
      resync = true;
    } else {
      to_write = NextLocked();
      if (to_write) current_ = to_write;
    }
  }
  if (resync) {
    session_->Resync(this);  // delivers a snapshot, which starts the next write
    return;
  }
  if (to_write) StartWrite(to_write.get());
}

void AttachReactor::FinishOnce(const grpc::Status& status) {
  {
    absl::MutexLock l(&mu_);
    if (finished_) return;
    finished_ = true;
    queue_.clear();
  }
  Finish(status);
}

void AttachReactor::OnCancel() { FinishOnce(grpc::Status::CANCELLED); }

void AttachReactor::OnDone() {
  session_->Detach(this);
  delete this;
}

}  // namespace agent::daemon
