// The daemon's gRPC reactions (an RPC handler's body, a reactor's callback) run on gRPC's few
// callback threads: a file written there holds up every client behind a slow or full disk.
// Each reaction marks its extent with a ReactionScope; work that touches the disk goes to a
// worker pool. In debug builds the file writes of common/atomic_file.h and the session
// store's removals call CheckNotInReaction, which aborts under a scope, naming the file, so
// any test that reaches such a write fails. Per thread; scopes nest.
#pragma once

#include <string_view>

namespace agent {

class ReactionScope {
 public:
  ReactionScope();
  ~ReactionScope();
  ReactionScope(const ReactionScope&) = delete;
  ReactionScope& operator=(const ReactionScope&) = delete;

  // Whether this thread is inside a reaction.
  static bool Active();
};

// Debug builds: aborts when called inside a ReactionScope, naming `what` and `path`.
void CheckNotInReaction(std::string_view what, std::string_view path);

}  // namespace agent
