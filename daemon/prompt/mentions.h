// Mentions: `@path` in a prompt a person typed. A mention of a file inside the project
// attaches what read_file would have shown the model (numbered lines, its caps and notes), a
// mention of a directory (`@src/`) what list_dir shows; the attachments follow the prompt in
// the same user message, each in a `<mention path=…>` block, and the prompt's text stays as
// typed. Files attached count as read by the model (the caller records them in the
// session's FileTracker when the prompt enters the transcript).
//
// A mention is `@` at the start of the text or after whitespace or `(["'`, up to the next
// whitespace; trailing punctuation (`.,;:!?)]}'"`) is dropped when the path with it does not
// exist. Text inside code (``` fences, `inline`) has no mentions.
//
// Paths are untrusted (a custom command's body is repository content): resolved inside the
// project (symlinks followed and kept inside, no `..` at all), never under `.agent/` or
// `.git/` (policy/protected_paths.h), never a path a deny rule for read_file (list_dir for a
// directory) names, and nothing when the rule files do not parse (fail closed). What is not
// attached stays as typed, with a warning for the person. Pure functions over the
// filesystem; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/policy/rules.h"

namespace agent::daemon {

struct MentionLimits {
  size_t max_mentions = 20;            // attachments per prompt
  size_t max_total_bytes = 256 << 10;  // what all attachments of a prompt add
  uint64_t max_file_bytes = 4 << 20;   // a larger file is described, not read
  size_t max_tracked_bytes = 4 << 20;  // file content kept to record the reads
  // Tests: runs after a file was shown to the model and before it is recorded as read.
  std::function<void(const std::string& abs_path)> after_show;
};

// A file the model has now seen whole, for FileTracker::RecordRead: exactly the content
// read_file showed (a file that changed between showing and recording is left out).
struct MentionRead {
  std::string abs_path;
  std::string content;
};

struct MentionExpansion {
  std::string attachments;  // the blocks to append to the prompt; empty when none
  std::vector<MentionRead> reads;
  std::vector<std::string> warnings;  // one line each, naming the mention
};

// The mentions of `text` as typed (without the `@`), in order, outside code.
std::vector<std::string> FindMentions(std::string_view text);

// Attaches the mentions of `text` for the project `workdir` (absolute, canonical). A relative
// mention resolves from `from` first (the directory, absolute and canonical, inside `workdir`,
// the session was started in: `@notes.txt` typed in `sub/` is `sub/notes.txt`, as the tools'
// own paths), then from the project root (so a path the completion offered, relative to the
// root, works from anywhere). Empty `from`: the root.
MentionExpansion ExpandMentions(const std::string& workdir, std::string_view text,
                                const absl::StatusOr<policy::RuleSet>& rules,
                                const MentionLimits& limits = {}, const std::string& from = "");

// Where the attachments of a user message start ("\n\n<mention path="), so a view can show
// the prompt as typed.
inline constexpr std::string_view kMentionBlockStart = "\n\n<mention path=";

}  // namespace agent::daemon
