// EventLog: a session's events, numbered by `seq`, kept in a bounded ring for replay, and
// fanned out to subscribers as they are appended.
//
// Thread-safety: none of its own. The owning Session calls every method under its mutex, which
// is what makes "snapshot, then every later event" atomic for a new subscriber. Subscribers
// must therefore never block in Deliver and never call back into the session from it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"

namespace agent::daemon {

using EventPtr = std::shared_ptr<const agent::v1::Event>;

class Subscriber {
 public:
  virtual ~Subscriber() = default;
  // Called under the session's mutex: queue the event and return at once.
  virtual void Deliver(const EventPtr& event) = 0;
};

class EventLog {
 public:
  EventLog(std::string epoch, size_t capacity);

  // Stamps seq, epoch and time on `event`, keeps it, and delivers it to every subscriber.
  EventPtr Append(agent::v1::Event event);

  // The events after `after_seq`, when this epoch's ring still holds all of them; nullopt
  // when the client must start from a snapshot instead.
  std::optional<std::vector<EventPtr>> Since(const std::string& epoch, uint64_t after_seq) const;

  void Subscribe(Subscriber* s);
  void Unsubscribe(Subscriber* s);
  size_t subscriber_count() const { return subscribers_.size(); }

  uint64_t last_seq() const { return next_seq_ - 1; }
  const std::string& epoch() const { return epoch_; }

 private:
  std::string epoch_;
  size_t capacity_;
  uint64_t next_seq_ = 1;
  std::deque<EventPtr> ring_;
  std::vector<Subscriber*> subscribers_;
};

}  // namespace agent::daemon
