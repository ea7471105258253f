#include "daemon/llm/responses_stream.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/llm/error_text.h"
#include "daemon/llm/responses_convert.h"
#include "daemon/llm/stream_json.h"

namespace agent::daemon::llm {
namespace {

// A string member, or "" when absent or not a string; no copy.
std::string_view StringAt(const Json& obj, const char* key) {
  const Json* v = Member(obj, key);
  if (v == nullptr || !v->is_string()) return {};
  return v->get_ref<const std::string&>();
}

std::optional<int64_t> IntAt(const Json& obj, const char* key) {
  const Json* v = Member(obj, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

// "call_" and 12 letters and digits: the same for any split of the stream.
std::string IdFromHash(uint64_t h) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = "call_";
  for (int i = 0; i < 12; ++i) {
    id += kAlphabet[h % 62];
    h /= 62;
    h ^= h << 21;
    h *= 0x9E3779B97F4A7C15ULL;
  }
  return id;
}

}  // namespace

ResponsesStreamAssembler::ResponsesStreamAssembler(StreamSink* sink, size_t max_reply_bytes,
                                                   std::string model)
    : sink_(sink), budget_(max_reply_bytes), model_(std::move(model)) {}

absl::Status ResponsesStreamAssembler::Fail(absl::Status status) {
  error_ = status;
  return status;
}

bool ResponsesStreamAssembler::Charge(size_t bytes) {
  if (!error_.ok()) return false;
  if (budget_.Take(bytes)) return true;
  error_ = budget_.Error();
  return false;
}

void ResponsesStreamAssembler::Text(std::string_view text) {
  if (text.empty() || !Charge(text.size())) return;
  content_.append(text);
  output_started_ = true;
  if (sink_ != nullptr) sink_->OnText(text);
}

void ResponsesStreamAssembler::Reasoning(std::string_view text) {
  if (text.empty() || !Charge(text.size())) return;
  reasoning_.append(text);
  output_started_ = true;
  if (sink_ != nullptr) sink_->OnReasoning(text);
}

absl::Status ResponsesStreamAssembler::OnEvent(const SseEvent& ev) {
  if (!error_.ok()) return error_;
  if (complete_ || finished_) return absl::OkStatus();

  const std::string_view data = TrimWhitespace(ev.data);
  if (data.empty() || data == "[DONE]") return absl::OkStatus();
  const Json json = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (ev.event == "error" && (json.is_discarded() || GetString(json, "type").empty())) {
    return Fail(InStreamErrorStatus(json, data));
  }
  if (json.is_discarded() || !json.is_object()) {
    return Fail(absl::InternalError("malformed chunk"));
  }
  // `type` repeats the SSE event name; trust it first (proxies drop `event:` lines).
  std::string type = GetString(json, "type");
  if (type.empty()) type = ev.event;

  if (type == "response.output_text.delta") {
    NoteDelta(StringAt(json, "item_id"));
    Text(StringAt(json, "delta"));
  } else if (type == "response.reasoning_summary_text.delta" ||
             type == "response.reasoning_text.delta") {
    const std::string item_id(StringAt(json, "item_id"));
    NoteDelta(item_id);
    // A new summary part after earlier reasoning text starts a paragraph.
    const std::string part = absl::StrCat(item_id, "/", IntAt(json, "summary_index").value_or(0));
    if (reasoning_parts_.insert(part).second && !reasoning_.empty()) Reasoning("\n\n");
    Reasoning(StringAt(json, "delta"));
  } else if (type == "response.refusal.delta") {
    const std::string_view delta = StringAt(json, "delta");
    if (Charge(delta.size())) refusal_.append(delta);
  } else if (type == "response.output_item.added") {
    const Json* item = Member(json, "item");
    if (item != nullptr && GetString(*item, "type") == "function_call") {
      OpenCall(IntAt(json, "output_index").value_or(static_cast<int64_t>(calls_.size())), *item);
    }
  } else if (type == "response.function_call_arguments.delta") {
    if (Call* call = CallAt(json)) {
      const std::string_view delta = StringAt(json, "delta");
      if (Charge(delta.size())) call->arguments.append(delta);
    }
  } else if (type == "response.function_call_arguments.done") {
    if (Call* call = CallAt(json)) {
      if (const Json* a = Member(json, "arguments"); a != nullptr && a->is_string()) {
        SetArguments(*call, a->get_ref<const std::string&>());
      }
    }
  } else if (type == "response.output_item.done") {
    ItemDone(json);
  } else if (type == "response.completed") {
    Finished(json.value("response", Json::object()), "stop");
  } else if (type == "response.incomplete") {
    const Json response = json.value("response", Json::object());
    std::string reason(StringAt(response.value("incomplete_details", Json::object()), "reason"));
    if (reason.empty() || reason == "max_output_tokens") reason = "length";
    Finished(response, reason);
  } else if (type == "response.failed") {
    const Json response = json.value("response", Json::object());
    const Json* err = Member(response, "error");
    if (err != nullptr && err->is_object()) {
      return Fail(InStreamErrorStatus(Json{{"error", *err}}, data));
    }
    return Fail(absl::UnavailableError("the model's response failed"));
  } else if (type == "error") {
    return Fail(InStreamErrorStatus(json, data));
  }
  return error_;
}

void ResponsesStreamAssembler::NoteDelta(std::string_view item_id) {
  if (item_id.empty()) {
    anonymous_deltas_ = true;
  } else {
    items_with_deltas_.emplace(item_id);
  }
}

ResponsesStreamAssembler::Call* ResponsesStreamAssembler::CallAt(const Json& event) {
  if (std::optional<int64_t> index = IntAt(event, "output_index")) {
    auto it = calls_.find(*index);
    return it == calls_.end() ? nullptr : &it->second;
  }
  const std::string_view item_id = StringAt(event, "item_id");
  for (auto& [index, call] : calls_) {
    if (!item_id.empty() && call.item_id == item_id) return &call;
  }
  return nullptr;
}

ResponsesStreamAssembler::Call& ResponsesStreamAssembler::OpenCall(int64_t output_index,
                                                                   const Json& item) {
  auto [it, inserted] = calls_.try_emplace(output_index);
  Call& call = it->second;
  if (!inserted) return call;
  const std::string_view item_id = StringAt(item, "id");
  const std::string_view call_id = StringAt(item, "call_id");
  const std::string_view name = StringAt(item, "name");
  const std::string_view arguments = StringAt(item, "arguments");
  if (!Charge(kReplySlotBytes + item_id.size() + call_id.size() + name.size() + arguments.size())) {
    return call;
  }
  call.item_id = item_id;
  call.call_id = call_id;
  call.name = name;
  call.arguments = arguments;
  if (!call.name.empty()) {
    call.started = true;
    output_started_ = true;
    if (sink_ != nullptr) sink_->OnToolCallStarted(call.call_id, call.name);
  }
  return call;
}

void ResponsesStreamAssembler::SetArguments(Call& call, const std::string& arguments) {
  if (arguments == call.arguments) return;
  if (arguments.size() > call.arguments.size() &&
      !Charge(arguments.size() - call.arguments.size())) {
    return;
  }
  call.arguments = arguments;
}

void ResponsesStreamAssembler::ItemDone(const Json& event) {
  const Json* item = Member(event, "item");
  if (item == nullptr || !item->is_object()) return;
  const int64_t index = IntAt(event, "output_index").value_or(-1);
  const std::string type = GetString(*item, "type");
  const std::string item_id = GetString(*item, "id");
  // Without item ids on the deltas we cannot tell which item they belonged to: then no done
  // item adds text, so nothing is shown twice.
  const bool had_deltas =
      anonymous_deltas_ || (!item_id.empty() && items_with_deltas_.count(item_id) > 0);
  if (type == "function_call") {
    Call& call = OpenCall(index >= 0 ? index : static_cast<int64_t>(calls_.size()), *item);
    if (!error_.ok()) return;
    if (const Json* a = Member(*item, "arguments"); a != nullptr && a->is_string()) {
      SetArguments(call, a->get_ref<const std::string&>());
    }
    if (!call.started && !call.name.empty()) {
      call.started = true;
      output_started_ = true;
      if (sink_ != nullptr) sink_->OnToolCallStarted(call.call_id, call.name);
    }
  } else if (type == "reasoning") {
    if (!had_deltas) {  // a server that sends the summary only with the done item
      if (const Json* summary = Member(*item, "summary");
          summary != nullptr && summary->is_array()) {
        for (const Json& part : *summary) {
          if (!reasoning_.empty()) Reasoning("\n\n");
          Reasoning(StringAt(part, "text"));
        }
      }
    }
    const std::string text = DumpJson(*item);
    if (!Charge(kReplySlotBytes + text.size())) return;
    reasoning_items_[index >= 0 ? index : static_cast<int64_t>(reasoning_items_.size())] = *item;
  } else if (type == "message" && !had_deltas) {
    if (const Json* content = Member(*item, "content"); content != nullptr && content->is_array()) {
      for (const Json& part : *content) {
        const std::string part_type = GetString(part, "type");
        if (part_type == "output_text") Text(StringAt(part, "text"));
        if (part_type == "refusal") {
          const std::string_view r = StringAt(part, "refusal");
          if (Charge(r.size())) refusal_.append(r);
        }
      }
    }
  }
}

void ResponsesStreamAssembler::Finished(const Json& response, const std::string& finish_reason) {
  complete_ = true;
  finish_reason_ = finish_reason;
  const Json* u = Member(response, "usage");
  if (u == nullptr || !u->is_object()) return;
  Usage usage;
  usage.prompt_tokens = GetInt(*u, "input_tokens");
  usage.completion_tokens = GetInt(*u, "output_tokens");
  if (const Json* d = Member(*u, "input_tokens_details"); d != nullptr && d->is_object()) {
    usage.cached_tokens = GetInt(*d, "cached_tokens");
  }
  usage_ = usage;
}

absl::StatusOr<ModelReply> ResponsesStreamAssembler::Finish() {
  if (absl::Status s = CheckFinish(error_, complete_, &finished_); !s.ok()) return s;

  ModelReply reply;
  reply.content = std::move(content_);
  reply.reasoning = std::move(reasoning_);
  reply.refusal = std::move(refusal_);
  reply.usage = usage_;
  std::set<std::string> ids;
  for (auto& [index, call] : calls_) {
    if (call.name.empty() && call.arguments.empty()) continue;
    ToolCall out;
    out.id = !call.call_id.empty() ? call.call_id : call.item_id;
    out.name = std::move(call.name);
    out.arguments = TrimWhitespace(call.arguments).empty() ? "{}" : std::move(call.arguments);
    if (out.id.empty() || ids.count(out.id) > 0) {
      uint64_t h = Fnv1a(1469598103934665603ULL, std::to_string(index));
      h = Fnv1a(h, out.name);
      h = Fnv1a(h, out.arguments);
      do {
        out.id = IdFromHash(h);
        h = Fnv1a(h, "+");
      } while (ids.count(out.id) > 0);
    }
    ids.insert(out.id);
    reply.tool_calls.push_back(std::move(out));
  }
  if (!reasoning_items_.empty()) {
    Json items = Json::array();
    for (auto& [index, item] : reasoning_items_) items.push_back(std::move(item));
    reply.provider_fields[kOpenAiReasoningField] = std::move(items);
    if (!model_.empty()) reply.provider_fields[kOpenAiReasoningModelField] = model_;
  }
  reply.finish_reason = finish_reason_;
  if (reply.finish_reason == "stop" && !reply.tool_calls.empty())
    reply.finish_reason = "tool_calls";
  return reply;
}

}  // namespace agent::daemon::llm
