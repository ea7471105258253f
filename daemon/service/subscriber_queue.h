// SubscriberQueue: the queue policy of one attached client, apart from gRPC so it can be
// tested alone. At most one event is being written at a time; the rest wait here.
//
// Policy: past `coalesce_after` waiting events (a replay burst stays below it, so a client
// reattaching with after_seq gets exactly the events it missed), a text delta is merged into a
// waiting text delta (a lagging client gets the same text in fewer messages). Past kMaxQueuedEvents
// or kMaxQueuedBytes the backlog is dropped and the queue is *lagged*: it takes no events until the
// write in flight completes, and then asks for a fresh snapshot (which covers everything dropped),
// after which live events flow again. Memory per client is bounded by the caps.
//
// Thread-compatible: the owner (AttachReactor) serialises calls with its mutex.
#pragma once

#include <cstddef>
#include <deque>

#include "daemon/session/event_log.h"

namespace agent::daemon {

class SubscriberQueue {
 public:
  SubscriberQueue(size_t max_events, size_t max_bytes, size_t coalesce_after = 256);

  // Takes an event. Returns the event to write now when nothing was being written, else null.
  EventPtr Push(const EventPtr& event);

  struct AfterWrite {
    EventPtr write;       // the next event to write, or null
    bool resync = false;  // deliver a fresh snapshot (through Push) now
  };
  // The write in flight completed. A returned `write` is already marked as in flight.
  AfterWrite WriteDone();

  bool writing() const { return writing_; }
  bool lagged() const { return lagged_; }
  size_t size() const { return queue_.size(); }
  size_t bytes() const { return bytes_; }
  size_t overflows() const { return overflows_; }

 private:
  EventPtr TakeFront();

  size_t max_events_;
  size_t max_bytes_;
  size_t coalesce_after_;
  std::deque<EventPtr> queue_;
  size_t bytes_ = 0;
  bool writing_ = false;
  bool lagged_ = false;
  size_t overflows_ = 0;
};

}  // namespace agent::daemon
