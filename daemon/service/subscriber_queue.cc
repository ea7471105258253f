#include "daemon/service/subscriber_queue.h"

#include <memory>

namespace agent::daemon {

SubscriberQueue::SubscriberQueue(size_t max_events, size_t max_bytes, size_t coalesce_after)
    : max_events_(max_events), max_bytes_(max_bytes), coalesce_after_(coalesce_after) {}

EventPtr SubscriberQueue::TakeFront() {
  EventPtr e = std::move(queue_.front());
  queue_.pop_front();
  bytes_ -= e->ByteSizeLong();
  writing_ = true;
  return e;
}

EventPtr SubscriberQueue::Push(const EventPtr& event) {
  if (lagged_) return nullptr;  // the coming snapshot covers this event
  if (!writing_) {
    // Idle: write it at once, whatever its size.
    writing_ = true;
    return event;
  }
  if (queue_.size() >= max_events_ || bytes_ + event->ByteSizeLong() > max_bytes_) {
    queue_.clear();
    bytes_ = 0;
    lagged_ = true;
    ++overflows_;
    return nullptr;
  }
  if (queue_.size() >= coalesce_after_ && event->has_text_delta() &&
      queue_.back()->has_text_delta()) {
    auto merged = std::make_shared<agent::v1::Event>(*queue_.back());
    merged->mutable_text_delta()->mutable_text()->append(event->text_delta().text());
    merged->set_seq(event->seq());
    merged->set_unix_ms(event->unix_ms());
    bytes_ -= queue_.back()->ByteSizeLong();
    bytes_ += merged->ByteSizeLong();
    queue_.back() = std::move(merged);
    return nullptr;
  }
  bytes_ += event->ByteSizeLong();
  queue_.push_back(event);
  return nullptr;
}

SubscriberQueue::AfterWrite SubscriberQueue::WriteDone() {
  writing_ = false;
  AfterWrite next;
  if (lagged_) {
    lagged_ = false;
    next.resync = true;
    return next;
  }
  if (!queue_.empty()) next.write = TakeFront();
  return next;
}

}  // namespace agent::daemon
