#include "daemon/llm/anthropic_stream.h"

#include <string_view>
#include <utility>

#include "daemon/llm/error_text.h"
#include "daemon/llm/stream_json.h"

namespace agent::daemon::llm {
namespace {

std::string MapStopReason(const std::string& reason) {
  if (reason == "end_turn" || reason == "stop_sequence") return "stop";
  if (reason == "tool_use") return "tool_calls";
  if (reason == "max_tokens") return "length";
  return reason;
}

}  // namespace

AnthropicStreamAssembler::AnthropicStreamAssembler(StreamSink* sink, size_t max_reply_bytes)
    : sink_(sink), budget_(max_reply_bytes) {}

absl::Status AnthropicStreamAssembler::Fail(absl::Status status) {
  error_ = status;
  return status;
}

void AnthropicStreamAssembler::ApplyUsage(const Json& usage) {
  if (!usage.is_object()) return;
  bool any = false;
  // Every count is cumulative: a later event replaces the earlier value.
  auto take = [&](const char* key, int64_t* field) {
    const Json* v = Member(usage, key);
    if (v != nullptr && v->is_number_integer()) {
      *field = v->get<int64_t>();
      any = true;
    }
  };
  take("input_tokens", &input_tokens_);
  take("cache_creation_input_tokens", &cache_creation_tokens_);
  take("cache_read_input_tokens", &cache_read_tokens_);
  int64_t output = usage_ ? usage_->completion_tokens : 0;
  take("output_tokens", &output);
  if (!any) return;
  Usage u;
  u.prompt_tokens = input_tokens_ + cache_creation_tokens_ + cache_read_tokens_;
  u.completion_tokens = output;
  u.cached_tokens = cache_read_tokens_;
  u.cache_write_tokens = cache_creation_tokens_;
  usage_ = u;
}

absl::Status AnthropicStreamAssembler::OnEvent(const SseEvent& ev) {
  if (!error_.ok()) return error_;
  if (complete_ || finished_) return absl::OkStatus();

  const std::string_view data = TrimWhitespace(ev.data);
  const Json json = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (ev.event == "error") return Fail(InStreamErrorStatus(json, data));
  if (data.empty()) return absl::OkStatus();
  if (json.is_discarded() || !json.is_object()) {
    return Fail(absl::InternalError("malformed chunk"));
  }
  // `type` repeats the SSE event name; trust it first (some proxies drop `event:` lines).
  std::string type = GetString(json, "type");
  if (type.empty()) type = ev.event;

  if (type == "error") return Fail(InStreamErrorStatus(json, data));
  if (type == "message_start") {
    if (const Json* message = Member(json, "message")) {
      if (const Json* usage = Member(*message, "usage")) ApplyUsage(*usage);
    }
  } else if (type == "content_block_start") {
    ApplyBlockStart(json);
  } else if (type == "content_block_delta") {
    ApplyBlockDelta(json);
  } else if (type == "message_delta") {
    if (const Json* delta = Member(json, "delta")) {
      const std::string reason = GetString(*delta, "stop_reason");
      if (!reason.empty()) stop_reason_ = reason;
    }
    if (const Json* usage = Member(json, "usage")) ApplyUsage(*usage);
  } else if (type == "message_stop") {
    complete_ = true;
  }
  // ping, content_block_stop and unknown events need nothing.
  return error_;  // set when the reply went over its cap
}

bool AnthropicStreamAssembler::Charge(size_t bytes) {
  if (!error_.ok()) return false;
  if (budget_.Take(bytes)) return true;
  error_ = budget_.Error();
  return false;
}

void AnthropicStreamAssembler::AppendText(const std::string& text) {
  if (text.empty() || !Charge(text.size())) return;
  content_.append(text);
  output_started_ = true;
  if (sink_ != nullptr) sink_->OnText(text);
}

void AnthropicStreamAssembler::ApplyBlockStart(const Json& json) {
  const Json* index = Member(json, "index");
  const Json* cb = Member(json, "content_block");
  if (index == nullptr || !index->is_number_integer() || cb == nullptr || !cb->is_object()) {
    return;
  }
  if (!Charge(kReplySlotBytes)) return;
  Block& block = blocks_[index->get<int64_t>()];
  block = Block();
  block.type = GetString(*cb, "type");
  if (block.type == "text") {
    AppendText(GetString(*cb, "text"));
  } else if (block.type == "tool_use") {
    block.id = GetString(*cb, "id");
    block.name = GetString(*cb, "name");
    const Json* input = Member(*cb, "input");
    if (input != nullptr && input->is_object() && !input->empty()) block.start_input = *input;
    const size_t input_bytes = block.start_input.is_null() ? 0 : DumpJson(block.start_input).size();
    if (!Charge(block.id.size() + block.name.size() + input_bytes)) return;
    output_started_ = true;
    if (sink_ != nullptr) sink_->OnToolCallStarted(block.id, block.name);
  } else if (block.type == "thinking") {
    block.thinking = GetString(*cb, "thinking");
    block.signature = GetString(*cb, "signature");
    // The thinking text is held twice: in the block and in the reply's reasoning.
    if (!Charge(2 * block.thinking.size() + block.signature.size())) return;
    if (!block.thinking.empty()) {
      reasoning_.append(block.thinking);
      output_started_ = true;
      if (sink_ != nullptr) sink_->OnReasoning(block.thinking);
    }
  } else if (block.type == "redacted_thinking") {
    if (const Json* d = Member(*cb, "data")) {
      if (!Charge(DumpJson(*d).size())) return;
      block.redacted_data = *d;
    }
  }
}

void AnthropicStreamAssembler::ApplyBlockDelta(const Json& json) {
  const Json* index = Member(json, "index");
  const Json* delta = Member(json, "delta");
  if (index == nullptr || !index->is_number_integer() || delta == nullptr) return;
  const std::string delta_type = GetString(*delta, "type");
  auto it = blocks_.find(index->get<int64_t>());
  Block* block = it == blocks_.end() ? nullptr : &it->second;
  if (delta_type == "text_delta") {
    // Text is kept even without its content_block_start: nothing else could own it.
    AppendText(GetString(*delta, "text"));
  } else if (delta_type == "input_json_delta") {
    const std::string part = GetString(*delta, "partial_json");
    if (block != nullptr && Charge(part.size())) block->partial_json.append(part);
  } else if (delta_type == "thinking_delta") {
    const std::string text = GetString(*delta, "thinking");
    if (!Charge((block != nullptr ? 2 : 1) * text.size())) return;
    if (block != nullptr) block->thinking.append(text);
    if (!text.empty()) {
      reasoning_.append(text);
      output_started_ = true;
      if (sink_ != nullptr) sink_->OnReasoning(text);
    }
  } else if (delta_type == "signature_delta") {
    const std::string signature = GetString(*delta, "signature");
    if (block != nullptr && Charge(signature.size())) block->signature.append(signature);
  }
  // citations_delta and delta types added later are ignored.
}

absl::StatusOr<ModelReply> AnthropicStreamAssembler::Finish() {
  if (absl::Status s = CheckFinish(error_, complete_, &finished_); !s.ok()) return s;

  ModelReply reply;
  reply.content = std::move(content_);
  reply.reasoning = std::move(reasoning_);
  reply.usage = usage_;
  Json thinking = Json::array();
  for (auto& [index, block] : blocks_) {
    if (block.type == "tool_use") {
      ToolCall call;
      call.id = block.id;
      call.name = block.name;
      if (!TrimWhitespace(block.partial_json).empty()) {
        call.arguments = std::move(block.partial_json);
      } else if (!block.start_input.is_null()) {
        call.arguments = DumpJson(block.start_input);
      } else {
        call.arguments = "{}";
      }
      reply.tool_calls.push_back(std::move(call));
    } else if (block.type == "thinking") {
      thinking.push_back(
          {{"type", "thinking"}, {"thinking", block.thinking}, {"signature", block.signature}});
    } else if (block.type == "redacted_thinking") {
      thinking.push_back({{"type", "redacted_thinking"}, {"data", block.redacted_data}});
    }
  }
  if (!thinking.empty()) reply.provider_fields["anthropic_thinking"] = std::move(thinking);

  reply.finish_reason = MapStopReason(stop_reason_);
  if (!reply.tool_calls.empty() && (reply.finish_reason == "stop" || reply.finish_reason.empty())) {
    reply.finish_reason = "tool_calls";
  }
  if (reply.finish_reason.empty()) reply.finish_reason = "stop";
  return reply;
}

}  // namespace agent::daemon::llm
