// AnthropicStreamAssembler: turns the SSE events of one Anthropic Messages stream
// (WIRE.md §5) into a ModelReply in the OpenAI shape, telling a StreamSink as it goes.
//
// - text_delta → content (StreamSink::OnText); thinking_delta → reasoning (OnReasoning).
// - tool_use blocks → tool calls; arguments are the concatenated input_json_delta
//   fragments, "{}" when there were none or only "" (or the block's start `input` when it
//   came non-empty and no fragment followed). OnToolCallStarted fires at content_block_start,
//   where id and name are known.
// - thinking blocks (text and signature) and redacted_thinking blocks are kept, in block
//   order and in Anthropic's own shape, in provider_fields["anthropic_thinking"], so the
//   next request can send them back unchanged (required with tools under extended thinking).
// - stop_reason: end_turn → "stop", tool_use → "tool_calls", max_tokens → "length",
//   stop_sequence → "stop" (what OpenAI calls a stop sequence hit); others are kept as they
//   are ("pause_turn", "refusal", "model_context_window_exceeded").
// - usage: prompt_tokens = input_tokens + cache_creation_input_tokens +
//   cache_read_input_tokens (Anthropic counts cached prompt tokens apart; the sum is the size
//   of the prompt, which is what compaction compares with the window); completion_tokens =
//   output_tokens, cumulative, so the latest value replaces the earlier one.
// - ping, unknown events, unknown block types and unknown delta types are ignored.
// - Complete() means message_stop arrived; without it the stream was cut.
// - The reply is capped (stream_assembler.h, kMaxReplyBytes): text, thinking (counted twice,
//   as it is kept twice), signatures, tool ids, names and input, plus kReplySlotBytes per
//   content block.
//
// Thread-safety: none; one assembler per stream, used on the transport's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/llm/stream_assembler.h"

namespace agent::daemon::llm {

class AnthropicStreamAssembler : public StreamAssembler {
 public:
  // `sink` is borrowed, may be null, and must outlive the assembler.
  explicit AnthropicStreamAssembler(StreamSink* sink, size_t max_reply_bytes = kMaxReplyBytes);

  AnthropicStreamAssembler(const AnthropicStreamAssembler&) = delete;
  AnthropicStreamAssembler& operator=(const AnthropicStreamAssembler&) = delete;

  // Applies one event. Errors (the stream must then be abandoned; later calls return the
  // same error): an `error` event → kUnavailable for overloaded_error, api_error and
  // rate_limit_error (retryable if nothing was shown), kInvalidArgument otherwise, with the
  // provider's message (at most 200 characters); data that is not a JSON object → kInternal
  // "malformed chunk"; the reply over `max_reply_bytes` → kResourceExhausted naming the cap.
  absl::Status OnEvent(const SseEvent& ev) override;

  // message_stop has been seen.
  bool Complete() const override { return complete_; }

  // Some text, thinking or tool call has reached the sink (or would have, with a null sink).
  bool OutputStarted() const override { return output_started_; }

  // To be called once, at the end of the stream: the error OnEvent returned, kUnavailable
  // "stream ended before the reply was complete" when !Complete(), or the reply.
  absl::StatusOr<ModelReply> Finish() override;

 private:
  struct Block {
    std::string type;  // "text", "tool_use", "thinking", "redacted_thinking", or other
    std::string id;
    std::string name;
    std::string partial_json;
    Json start_input;  // `input` of content_block_start, when non-empty
    std::string thinking;
    std::string signature;
    Json redacted_data;
  };

  absl::Status Fail(absl::Status status);
  // Takes `bytes` from the budget; false (and error_ set) when the reply is over its cap.
  bool Charge(size_t bytes);
  void AppendText(const std::string& text);
  void ApplyBlockStart(const Json& json);
  void ApplyBlockDelta(const Json& json);
  void ApplyUsage(const Json& usage);

  StreamSink* sink_;
  ReplyBudget budget_;
  absl::Status error_;
  bool complete_ = false;
  bool output_started_ = false;
  bool finished_ = false;

  std::string content_;
  std::string reasoning_;
  std::string stop_reason_;
  std::optional<Usage> usage_;
  int64_t input_tokens_ = 0;
  int64_t cache_creation_tokens_ = 0;
  int64_t cache_read_tokens_ = 0;
  std::map<int64_t, Block> blocks_;  // by content block index
};

}  // namespace agent::daemon::llm
