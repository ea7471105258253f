// EventLog: a session's events, numbered by `seq`, kept in a bounded ring for replay, and
// fanned out to subscribers as they are appended.
//
// The ring is bounded twice: by count (`capacity`) and by bytes (`max_bytes`, the events'
// serialised sizes, measured once at Append). Tool output arrives in chunks of up to 64 KB,
// so a count bound alone let one noisy command pin 4096 × 64 KB = 256 MB per session. The
// newest event is always kept, even alone above the byte bound: the ring then holds at most
// one event more than `max_bytes` allows, and a client one event behind still resumes
// without a snapshot. A client asking for events no longer held gets nullopt from Since
// (the caller sends a snapshot instead).
//
// Thread-safety: none of its own. The owning Session calls every method under its mutex, which
// is what makes "snapshot, then every later event" atomic for a new subscriber. Subscribers
// must therefore never block in Deliver and never call back into the session from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/v1/agent.pb.h"
#include "common/clock.h"

namespace agent::daemon {

using EventPtr = std::shared_ptr<const agent::v1::Event>;

// Bytes of events a session keeps for replay (see above).
inline constexpr size_t kEventRingMaxBytes = 8 << 20;

class Subscriber {
 public:
  virtual ~Subscriber() = default;
  // Called under the session's mutex: queue the event and return at once.
  virtual void Deliver(const EventPtr& event) = 0;
  // Called under the session's mutex: after the events delivered so far, end the stream with
  // `status` (the session was removed, the daemon is stopping); later events are dropped.
  virtual void End(const absl::Status& status) { (void)status; }
};

class EventLog {
 public:
  // `clock` stamps the events' time and must outlive the log.
  EventLog(std::string epoch, size_t capacity, size_t max_bytes = kEventRingMaxBytes,
           const Clock* clock = Clock::Real());

  // Stamps seq, epoch and time (from the clock) on `event`, keeps it, and delivers it to every
  // subscriber.
  EventPtr Append(agent::v1::Event event);

  // The events after `after_seq` (none when it is the last), when this epoch's ring still
  // holds all of them; nullopt when the client must start from a snapshot instead: another
  // epoch, after_seq 0 (a new client), a seq not issued yet, or one whose successors are gone.
  std::optional<std::vector<EventPtr>> Since(const std::string& epoch, uint64_t after_seq) const;

  void Subscribe(Subscriber* s);
  void Unsubscribe(Subscriber* s);
  size_t subscriber_count() const { return subscribers_.size(); }

  uint64_t last_seq() const { return next_seq_ - 1; }
  const std::string& epoch() const { return epoch_; }
  // What the ring holds now: events and their serialised bytes.
  size_t size() const { return ring_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Kept {
    EventPtr event;
    size_t bytes;
  };

  std::string epoch_;
  size_t capacity_;
  size_t max_bytes_;
  const Clock* clock_;
  uint64_t next_seq_ = 1;
  std::deque<Kept> ring_;
  size_t bytes_ = 0;  // sum of ring_[i].bytes
  std::vector<Subscriber*> subscribers_;
};

}  // namespace agent::daemon
