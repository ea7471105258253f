// ResponsesStreamAssembler: turns the SSE events of one OpenAI Responses API stream
// (`response.*` events) into the ModelReply the chat and Anthropic assemblers produce.
//
// What it reads (each event's JSON `type`, else the SSE event name):
// - response.output_text.delta → content (and StreamSink::OnText); response.refusal.delta →
//   refusal;
// - response.reasoning_summary_text.delta (and response.reasoning_text.delta, which open
//   models served through the Responses API send) → reasoning (OnReasoning); summary parts
//   after the first are separated by a blank line;
// - response.output_item.added with a function_call item opens a call keyed by its
//   output_index, with its call_id and name (OnToolCallStarted at once);
//   response.function_call_arguments.delta appends to it; .done and response.output_item.done
//   replace the arguments with the final text when it differs (the final text is authoritative);
// - response.output_item.done with a reasoning item keeps the item as sent (id, summary,
//   encrypted_content) for ModelReply::provider_fields["openai_reasoning"], to be sent back
//   before this reply's items on the next request. A message or reasoning item whose text
//   never came as deltas gives its text from the done item;
// - response.completed → finished, usage (input_tokens, output_tokens,
//   input_tokens_details.cached_tokens); response.incomplete → finished with finish_reason
//   "length" for max_output_tokens (else the reason as given), so a cut last call is handled
//   like chat's;
// - response.failed (response.error) and `error` events → InStreamErrorStatus: kUnavailable
//   for server errors and rate limits (retryable before output), kInvalidArgument otherwise.
// Other events (created, in_progress, content_part.*, *.done of text) carry nothing new.
//
// Calls are ordered by output_index; a call without a call_id takes its item id, then a
// generated one; a repeated id is replaced. Caps as in stream_assembler.h: text, reasoning,
// refusal, ids, names, arguments and the kept reasoning items, plus kReplySlotBytes per item.
//
// Thread-safety: none; one assembler per stream, used on the transport's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/llm/stream_assembler.h"

namespace agent::daemon::llm {

class ResponsesStreamAssembler : public StreamAssembler {
 public:
  // `sink` is borrowed, may be null, and must outlive the assembler.
  // `model`, the model asked for, is recorded beside the reasoning items
  // (kOpenAiReasoningModelField) when not empty.
  explicit ResponsesStreamAssembler(StreamSink* sink, size_t max_reply_bytes = kMaxReplyBytes,
                                    std::string model = "");

  ResponsesStreamAssembler(const ResponsesStreamAssembler&) = delete;
  ResponsesStreamAssembler& operator=(const ResponsesStreamAssembler&) = delete;

  absl::Status OnEvent(const SseEvent& ev) override;
  // response.completed or response.incomplete has been seen.
  bool Complete() const override { return complete_; }
  bool OutputStarted() const override { return output_started_; }
  absl::StatusOr<ModelReply> Finish() override;

 private:
  struct Call {
    std::string item_id;
    std::string call_id;
    std::string name;
    std::string arguments;
    bool started = false;
  };

  absl::Status Fail(absl::Status status);
  bool Charge(size_t bytes);
  void Text(std::string_view text);
  void Reasoning(std::string_view text);
  void NoteDelta(std::string_view item_id);
  Call* CallAt(const Json& event);
  Call& OpenCall(int64_t output_index, const Json& item);
  void SetArguments(Call& call, const std::string& arguments);
  void ItemDone(const Json& event);
  void Finished(const Json& response, const std::string& finish_reason);

  StreamSink* sink_;
  ReplyBudget budget_;
  std::string model_;
  absl::Status error_;
  bool complete_ = false;
  bool output_started_ = false;
  bool finished_ = false;

  std::string content_;
  std::string reasoning_;
  std::string refusal_;
  std::string finish_reason_;
  std::optional<Usage> usage_;
  std::map<int64_t, Call> calls_;            // by output_index
  std::map<int64_t, Json> reasoning_items_;  // by output_index
  std::set<std::string> items_with_deltas_;  // item ids whose text came as deltas
  bool anonymous_deltas_ = false;            // a text delta came without an item id
  std::set<std::string> reasoning_parts_;    // "<item id>/<summary index>" seen
};

}  // namespace agent::daemon::llm
