// SessionFiles: the disk seam of one session's saves (leveldb's Env, ninja's DiskInterface are
// the models): the real one writes through the Store (daemon/store/store.h); tests put one in its
// place that fails (EIO, a full disk) or sleeps (a slow disk). Called by one writer at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "daemon/store/store.h"

namespace agent::daemon {

class SessionFiles {
 public:
  virtual ~SessionFiles() = default;
  // <id>.json whole (synced), and a new journal that extends it.
  virtual absl::Status WriteTranscript(std::string_view file_text) = 0;
  // Serialised messages, each line ending in '\n', appended to the journal (synced).
  virtual absl::Status AppendJournal(std::string_view lines) = 0;
  virtual absl::Status WriteMeta(const SessionMeta& meta) = 0;
  // Every file of the session (a session discarded unanswered).
  virtual absl::Status Delete() = 0;
};

// The files of session `id` of the project `workdir`, through the Store.
std::unique_ptr<SessionFiles> DiskSessionFiles(std::string workdir, std::string id);

}  // namespace agent::daemon
