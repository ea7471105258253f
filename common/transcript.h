// Transcript: the message list sent to the model (OpenAI chat shape), behind one type whose
// every mutation keeps THE ONE RULE of DESIGN.md:
//   - every assistant tool call is answered by exactly one `tool` message, placed after that
//     assistant message and before the next `user` or `assistant` message;
//   - no `tool` message answers a call that does not exist or was answered already;
//   - tool call ids are unique in the whole transcript.
// The only state allowed beyond the rule is an *open tail*: the calls of the last assistant
// message may still be unanswered while a turn runs them. Seal() closes it. A request may be
// sent only when nothing is pending (ValidateForRequest).
//
// Results are appended in call order (the first pending call is the one answered next), so
// concurrent tools cannot reorder them. Debug builds re-validate after every mutation.
// Thread-compatible: the owning Session serialises access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "common/transcript_rule.h"

namespace agent {

// The session file's text for `lines` (serialised messages): "[\n  m1,\n  m2\n]\n".
std::string TranscriptFileText(const std::vector<std::string>& lines);

// What an image part counts for in CharCount: about the 1,600 tokens a model charges for a
// large one, not the length of its base64.
inline constexpr size_t kImagePartChars = 6400;

// A message's content as text: a string as it is, a list's text parts joined by newlines and
// each image as "[image]".
std::string ContentAsText(const Json& content);

class Transcript {
 public:
  Transcript() = default;

  // Takes a loaded message list. InvalidArgument listing the problems when it breaks the rule
  // (an open tail is accepted: call Seal() after loading a session from disk).
  static absl::StatusOr<Transcript> FromJson(Json messages);
  // Loads a session file's text. A file in TranscriptFileText's form is read line by line,
  // each line kept as its message's serialisation, so a load does not re-serialise; any other
  // JSON array of messages (a file fixed in an editor) is parsed whole. InvalidArgument says
  // whether the text is not JSON, not an array, or breaks the rule.
  static absl::StatusOr<Transcript> FromFileText(std::string_view text);

  const Json& messages() const { return messages_; }
  size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  // Characters of all message content and arguments; the compaction threshold's measure.
  // Kept as messages change, so asking every step costs nothing.
  size_t CharCount() const { return chars_; }

  // Only as the first message.
  absl::Status AppendSystem(std::string text);
  // FailedPrecondition while calls are pending. With images (data: URLs), the content is a
  // list of parts: the text (when not empty), then an image_url part for each.
  absl::Status AppendUser(std::string text, const std::vector<std::string>& image_urls = {});
  // `message` is {"role":"assistant", "content", "tool_calls"?, ...}. Validates the calls'
  // shape and id uniqueness; FailedPrecondition while calls are pending.
  absl::Status AppendAssistant(Json message);
  // Answers the first pending call, which must be `call_id`.
  absl::Status AppendToolResult(std::string_view call_id, std::string content);

  // Ids of the last assistant message's calls not answered yet, in call order.
  std::vector<std::string> PendingCallIds() const;
  bool HasPending() const { return pending_begin_ < pending_ids_.size(); }
  // Answers every pending call with a result saying why (`reason`, e.g. "cancelled by the
  // user" or "interrupted: the daemon stopped"). Returns how many were answered.
  int Seal(std::string_view reason);

  // Where compaction may cut: the middle of the non-system messages, moved forward past
  // `tool` messages so a call stays with its results. Returns FirstCompactable() when there
  // is nothing worth cutting.
  size_t CutPoint() const;
  // Index of the first message that is not the system prompt.
  size_t FirstCompactable() const;
  // Replaces messages [FirstCompactable(), cut) by one user message holding `summary`;
  // returns the removed messages. Requires no pending calls before `cut` and `cut` at a
  // user/assistant message (as CutPoint gives).
  absl::StatusOr<Json> ReplacePrefix(size_t cut, std::string summary);
  // Drops every message from `n` on (fork at a point); seals what that leaves open.
  void TruncateTo(size_t n);
  // Replaces the text of the leading system message; FailedPrecondition when there is none.
  absl::Status ReplaceSystemText(std::string text);
  // How many changes other than appends (ReplacePrefix, TruncateTo, ReplaceSystemText) were
  // made: a saver that saw the same count and fewer messages may append the rest.
  uint64_t rewrites() const { return rewrites_; }
  // Which transcript this is: no two objects hold the same number, and a copy or assignment into
  // one gives it a new one, so the same identity and rewrites() mean "only appended to since".
  uint64_t identity() const { return identity_.value(); }

  // The session file's text: a JSON array with one message per line. Each message is
  // serialised once, when it is appended, so saving after every message costs a copy of
  // the file, not a re-serialisation of the whole transcript.
  std::string FileText() const;
  // Each message's serialisation (DumpJson), in step with messages(): what FileText joins.
  const std::vector<std::string>& serialized() const { return serialized_; }
  // A hash of each serialisation (this process's absl::Hash), in step with it: what lets a
  // request cache find the changed messages without reading every message's text.
  const std::vector<uint64_t>& hashes() const { return hashes_; }

  // Problems by the rule; empty when valid (open tail allowed).
  std::vector<std::string> Validate() const { return ValidateMessages(messages_, true); }
  // OK when the transcript can be sent to a model: valid and nothing pending.
  absl::Status ValidateForRequest() const;

 private:
  void RecomputePending();
  void DebugCheck() const;
  // Keeps serialized_ in step with messages_: after an append, or after any other change.
  void SerializeLast();
  void SerializeAll();
  // Recomputes chars_ and call_ids_ from messages_ (after a change other than an append).
  void Recount();

  Json messages_ = Json::array();
  std::vector<std::string> serialized_;   // DumpJson of each message
  std::vector<uint64_t> hashes_;          // hashes()
  std::vector<std::string> pending_ids_;  // calls of the last assistant message
  size_t pending_begin_ = 0;              // how many of them are answered
  // Kept with serialized_, so a step is not a walk of the whole transcript.
  size_t chars_ = 0;                          // CharCount()
  std::unordered_set<std::string> call_ids_;  // every tool call id, for uniqueness
  uint64_t rewrites_ = 0;                     // rewrites()
  // What DebugCheck has checked already (debug builds; empty otherwise).
  struct DebugState {
    TranscriptRule rule;
    uint64_t rewrites = ~uint64_t{0};
    uint64_t identity = 0;
  };
  mutable DebugState debug_;
  // identity(): a number drawn anew at construction and by every copy or move into the object.
  class Identity {
   public:
    Identity() : value_(Next()) {}
    Identity(const Identity&) noexcept : value_(Next()) {}
    Identity& operator=(const Identity&) noexcept {
      value_ = Next();
      return *this;
    }
    uint64_t value() const { return value_; }

   private:
    static uint64_t Next() noexcept;
    uint64_t value_;
  };
  Identity identity_;
};

}  // namespace agent
