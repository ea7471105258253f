#include "daemon/session/event_log.h"

#include <algorithm>

namespace agent::daemon {

EventLog::EventLog(std::string epoch, size_t capacity, size_t max_bytes, const Clock* clock)
    : epoch_(std::move(epoch)),
      capacity_(std::max<size_t>(capacity, 1)),
      max_bytes_(max_bytes),
      clock_(clock) {}

EventPtr EventLog::Append(agent::v1::Event event) {
  event.set_seq(next_seq_++);
  event.set_epoch(epoch_);
  event.set_unix_ms(clock_->NowMs());
  size_t size = event.ByteSizeLong();
  auto ptr = std::make_shared<const agent::v1::Event>(std::move(event));
  ring_.push_back({ptr, size});
  bytes_ += size;
  // Oldest first, never the event just added.
  while (ring_.size() > 1 && (ring_.size() > capacity_ || bytes_ > max_bytes_)) {
    bytes_ -= ring_.front().bytes;
    ring_.pop_front();
  }
  for (Subscriber* s : subscribers_) s->Deliver(ptr);
  return ptr;
}

std::optional<std::vector<EventPtr>> EventLog::Since(const std::string& epoch,
                                                     uint64_t after_seq) const {
  if (epoch != epoch_ || after_seq == 0 || after_seq > last_seq()) return std::nullopt;
  uint64_t first_kept = ring_.empty() ? next_seq_ : ring_.front().event->seq();
  if (after_seq + 1 < first_kept) return std::nullopt;
  // Seqs in the ring are consecutive.
  std::vector<EventPtr> out;
  for (size_t i = after_seq + 1 - first_kept; i < ring_.size(); ++i) {
    out.push_back(ring_[i].event);
  }
  return out;
}

void EventLog::Subscribe(Subscriber* s) { subscribers_.push_back(s); }

void EventLog::Unsubscribe(Subscriber* s) {
  subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), s), subscribers_.end());
}

}  // namespace agent::daemon
