// Audience: who hears a session. The attached clients (their names, which are read-only
// observers, which serve an editor's file text) and the event log they are subscribed to.
//
// Not thread-safe on its own: the session keeps it under its mutex (a field guarded by `mu_`),
// so every event is appended, and every client added or removed, in one order with the rest
// of the session's state. Deliveries only queue (Subscriber::Deliver); the writes start once
// the session's mutex is released (deferred_writes.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/v1/agent.pb.h"
#include "common/clock.h"
#include "daemon/session/event_log.h"

namespace agent::daemon {

class Audience {
 public:
  Audience(std::string epoch, const Clock* clock);

  // Stamps the event and delivers it to every subscriber (clients and observers).
  void Emit(agent::v1::Event event);

  // Delivers to `sub` the events after (epoch, after_seq) when the log still has them all, else
  // `snapshot()`; then it is a client and hears every later event. The others get a
  // ClientsChanged.
  void Attach(Subscriber* sub, const std::string& name, bool read_only, bool serves_file_text,
              const std::string& epoch, uint64_t after_seq,
              const std::function<agent::v1::Event()>& snapshot);
  // False when `sub` was no client (an observer is only unsubscribed).
  bool Detach(Subscriber* sub);
  // Live events without being a client: not named, not counted.
  void AddObserver(Subscriber* sub) { log_.Subscribe(sub); }
  void RemoveObserver(Subscriber* sub) { log_.Unsubscribe(sub); }

  // A client attached read-only under `name` (a name may be attached more than once: while
  // one read-only attachment of it remains, it is read-only).
  bool IsReadOnly(const std::string& name) const;
  int size() const { return static_cast<int>(clients_.size()); }
  bool empty() const { return clients_.empty(); }
  std::vector<std::string> names() const;
  uint64_t last_seq() const { return log_.last_seq(); }
  const std::string& epoch() const { return log_.epoch(); }

  // Ends every client's stream with `status` after what it was sent.
  void EndAll(const absl::Status& status);
  // `event` to the first client that serves an editor's file text, not to the history; false
  // when none is attached.
  bool AskEditor(const agent::v1::Event& event);

 private:
  struct Client {
    Subscriber* sub;
    std::string name;
    bool read_only;
    bool serves_file_text;
  };

  EventLog log_;
  std::vector<Client> clients_;
};

}  // namespace agent::daemon
