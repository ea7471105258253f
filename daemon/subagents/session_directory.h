// SessionDirectory: what the subagents need of the daemon's sessions: find one, make a child.
// Owned here, by the lower layer, and implemented by the SessionManager above it, so the
// runtime cycle (session → task tool → manager → new session) is an interface and not an
// include of the manager.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/session/session.h"

namespace agent::daemon::subagents {

class SessionDirectory {
 public:
  virtual ~SessionDirectory() = default;
  // By id; loads the session when it is not loaded.
  virtual absl::StatusOr<std::shared_ptr<Session>> Find(const std::string& id) = 0;
  // A child session (settings.child set) in its parent's `workdir`.
  virtual absl::StatusOr<std::shared_ptr<Session>> CreateChild(const std::string& workdir,
                                                               SessionSettings settings,
                                                               std::string title) = 0;
};

}  // namespace agent::daemon::subagents
