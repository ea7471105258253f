// OpenAiStreamAssembler: turns the SSE events of one OpenAI-compatible Chat Completions
// stream into a ModelReply, telling a StreamSink about text, reasoning and tool calls as they
// arrive. It implements the merge rules of WIRE.md §4 so that the quirks of §3 (Ollama's
// reused index, LM Studio's new id per fragment, vLLM's restated id and name, Gemini's
// index-less calls, a first index of 1, usage-only and empty-choices chunks, in-stream error
// objects, ...) all assemble into the reply the model meant.
//
// Policy choices, beyond WIRE.md:
// - Tool calls are only handed out by Finish(), never while streaming: arguments are raw text
//   until the stream is over (vercel/ai#13137).
// - OnToolCallStarted fires once per call, as soon as the call has a name and its first
//   argument bytes, or when a later call begins or the stream ends; so a name split over
//   fragments ("edit_ex" + "isting_file") is reported whole.
// - A call without an id gets a generated one (9 letters and digits, derived from the
//   response id and the call's content, so it is the same for any split of the stream and
//   also passes Mistral's id rule); a repeated id within one reply is replaced the same way.
// - Slots with neither a name nor arguments are dropped; a slot with arguments but no name
//   is kept so the tool layer can answer it with an error.
// - Only choice 0 is assembled (we never ask for n > 1).
// - When a delta carries both `reasoning_content` and `reasoning`, `reasoning_content` wins
//   (servers in transition send the same text under both names).
// - Without a finish_reason (stream ended by [DONE] only), finish_reason is "tool_calls"
//   when calls are present and "stop" otherwise.
// - The reply is capped (stream_assembler.h, kMaxReplyBytes): content, reasoning, refusal,
//   call ids, names, arguments and extra fields, plus kReplySlotBytes per call slot.
//
// Thread-safety: none; one assembler per stream, used on the transport's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/llm/stream_assembler.h"

namespace agent::daemon::llm {

class OpenAiStreamAssembler : public StreamAssembler {
 public:
  // `sink` is borrowed, may be null, and must outlive the assembler.
  explicit OpenAiStreamAssembler(StreamSink* sink, size_t max_reply_bytes = kMaxReplyBytes);

  OpenAiStreamAssembler(const OpenAiStreamAssembler&) = delete;
  OpenAiStreamAssembler& operator=(const OpenAiStreamAssembler&) = delete;

  // Applies one event. Errors, after which the stream must be abandoned (later calls return
  // the same error):
  // - an error object inside the stream (top-level `error`, vLLM `{"object":"error"}`,
  //   `event: error`): kUnavailable for server errors, overload and rate limits (retryable if
  //   nothing was shown yet), kInvalidArgument otherwise; the message is the provider's, at
  //   most 200 characters;
  // - data that is not a JSON object: kInternal "malformed chunk";
  // - the reply over `max_reply_bytes`: kResourceExhausted naming the cap.
  // `[DONE]` marks the stream done; events after it are ignored.
  absl::Status OnEvent(const SseEvent& ev) override;

  // [DONE] or a finish_reason has been seen.
  bool Complete() const override { return done_ || finish_seen_; }

  // Some text, reasoning or tool call has reached the sink (or would have, with a null
  // sink): a retry would show the user things twice.
  bool OutputStarted() const override { return output_started_; }

  // To be called once, at the end of the stream. Returns the error OnEvent returned, or
  // kUnavailable "stream ended before the reply was complete" when !Complete(), or the
  // assembled reply.
  absl::StatusOr<ModelReply> Finish() override;

 private:
  struct Slot {
    bool has_index = false;
    int64_t index = 0;
    size_t order = 0;  // creation order, the tie-breaker after index
    std::string id;
    std::string name;
    std::string arguments;
    Json extra = Json::object();
    bool started = false;  // the sink has been told
  };

  absl::Status Fail(absl::Status status);
  // Takes `bytes` from the budget; false (and error_ set) when the reply is over its cap.
  bool Charge(size_t bytes);
  void ApplyChoice(const Json& choice);
  void ApplyToolCallEntry(const Json& entry);
  size_t NewSlot(bool has_index, int64_t index);
  void MaybeStart(Slot& slot, bool force);
  void StartAll();

  StreamSink* sink_;
  ReplyBudget budget_;
  absl::Status error_;
  bool done_ = false;
  bool finish_seen_ = false;
  bool output_started_ = false;
  bool finished_ = false;

  std::string response_id_;
  std::string content_;
  std::string reasoning_;
  std::string refusal_;
  std::string finish_reason_;
  std::optional<Usage> usage_;
  bool standard_usage_seen_ = false;  // `usage` beats Groq's `x_groq.usage`

  std::vector<Slot> slots_;
  std::map<int64_t, size_t> slot_of_index_;  // the current slot of each index
};

}  // namespace agent::daemon::llm
