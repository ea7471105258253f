// The prompt history of one project, shared by every terminal on it: an append-only file,
// one entry a line ("\" and newlines escaped), appended under an exclusive flock of
// "<file>.lock", so two clients merge their entries instead of the last one to leave
// overwriting the other's. Past twice `max_entries` lines the file is rewritten (under the
// same lock, by rename) with the newest `max_entries`. The file is 0600: prompts may hold
// secrets. Thread-compatible; any number of processes may share one file.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace agent::client {

class PromptHistory {
 public:
  explicit PromptHistory(std::string path, size_t max_entries = 1000)
      : path_(std::move(path)), max_entries_(max_entries) {}

  // Adds `entry` after everything any client has added so far.
  absl::Status Append(const std::string& entry) const;
  // The newest `max_entries`, oldest first, with repeats of the entry before collapsed.
  std::vector<std::string> Load() const;
  const std::string& path() const { return path_; }

 private:
  absl::Status CompactLocked(const std::vector<std::string>& lines) const;

  std::string path_;
  size_t max_entries_;
};

// One entry as one line (no '\n' in the result) and back.
std::string EncodeHistoryEntry(const std::string& entry);
std::string DecodeHistoryEntry(const std::string& line);

}  // namespace agent::client
