#include "daemon/llm/openai_stream.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "daemon/llm/error_text.h"
#include "daemon/llm/stream_json.h"

namespace agent::daemon::llm {
namespace {

// A string field that is present, a string and not empty; null and "" count as absent
// (WIRE.md §4 rule 1: vLLM sends explicit nulls, SGLang and DeepSeek hosts empty strings).
std::optional<std::string_view> NonEmptyString(const Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  const std::string& s = it->get_ref<const std::string&>();
  if (s.empty()) return std::nullopt;
  return std::string_view(s);
}

bool Truthy(const Json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_structured()) return !v.empty();
  return true;
}

Usage UsageFrom(const Json& u) {
  Usage usage;
  usage.prompt_tokens = GetInt(u, "prompt_tokens");
  usage.completion_tokens = GetInt(u, "completion_tokens");
  if (auto d = u.find("prompt_tokens_details"); d != u.end() && d->is_object()) {
    usage.cached_tokens = GetInt(*d, "cached_tokens");
  }
  return usage;
}

// Objects merge key by key (a metadata-only delta may add to extra_content); anything else
// replaces.
void MergeInto(Json& target, const Json& value) {
  if (target.is_object() && value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it->is_null()) continue;
      MergeInto(target[it.key()], *it);
    }
    return;
  }
  target = value;
}

// 9 characters of [A-Za-z0-9]: accepted by every provider, including Mistral.
std::string IdFromHash(uint64_t h) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id(9, 'A');
  for (char& c : id) {
    c = kAlphabet[h % 62];
    h /= 62;
    h ^= h << 21;  // 64 bits cover about 10.7 base-62 digits; stir so all 9 vary
    h *= 0x9E3779B97F4A7C15ULL;
  }
  return id;
}

}  // namespace

OpenAiStreamAssembler::OpenAiStreamAssembler(StreamSink* sink, size_t max_reply_bytes)
    : sink_(sink), budget_(max_reply_bytes) {}

absl::Status OpenAiStreamAssembler::Fail(absl::Status status) {
  error_ = status;
  return status;
}

bool OpenAiStreamAssembler::Charge(size_t bytes) {
  if (!error_.ok()) return false;
  if (budget_.Take(bytes)) return true;
  error_ = budget_.Error();
  return false;
}

absl::Status OpenAiStreamAssembler::OnEvent(const SseEvent& ev) {
  if (!error_.ok()) return error_;
  if (done_ || finished_) return absl::OkStatus();

  const std::string_view data = TrimWhitespace(ev.data);
  if (ev.event == "error") {
    return Fail(InStreamErrorStatus(Json::parse(data, nullptr, false), data));
  }
  if (data.empty()) return absl::OkStatus();
  if (data.substr(0, 6) == "[DONE]") {
    done_ = true;
    StartAll();
    return absl::OkStatus();
  }

  const Json chunk = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    return Fail(absl::InternalError("malformed chunk"));
  }
  auto error_it = chunk.find("error");
  if ((error_it != chunk.end() && Truthy(*error_it)) || GetString(chunk, "object") == "error") {
    return Fail(InStreamErrorStatus(chunk, data));
  }

  if (response_id_.empty()) {
    if (auto id = NonEmptyString(chunk, "id")) response_id_ = std::string(*id);
  }

  // Usage: a usage-only chunk with empty choices (OpenAI include_usage, llama.cpp since
  // #15444), or usage on the finish chunk (older llama.cpp, Claude via proxies). Groq puts
  // it under x_groq; a standard `usage` wins when both come.
  if (auto it = chunk.find("usage"); it != chunk.end() && it->is_object()) {
    usage_ = UsageFrom(*it);
    standard_usage_seen_ = true;
  } else if (!standard_usage_seen_) {
    auto xg = chunk.find("x_groq");
    if (xg != chunk.end() && xg->is_object()) {
      auto u = xg->find("usage");
      if (u != xg->end() && u->is_object()) usage_ = UsageFrom(*u);
    }
  }

  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return absl::OkStatus();
  for (const Json& choice : *choices) {  // empty for Azure's prompt_filter_results chunk
    if (!choice.is_object()) continue;
    auto index = choice.find("index");
    if (index != choice.end() && index->is_number_integer() && index->get<int64_t>() != 0) {
      continue;
    }
    ApplyChoice(choice);
    if (!error_.ok()) return error_;  // the reply went over its cap
  }
  return absl::OkStatus();
}

void OpenAiStreamAssembler::ApplyChoice(const Json& choice) {
  // Azure sends choices with only content_filter_* fields and no delta.
  auto delta_it = choice.find("delta");
  if (delta_it != choice.end() && delta_it->is_object()) {
    const Json& delta = *delta_it;
    if (auto text = NonEmptyString(delta, "content")) {
      if (!Charge(text->size())) return;
      content_.append(*text);  // <think> tags stay in the text: we do not parse them
      output_started_ = true;
      if (sink_ != nullptr) sink_->OnText(*text);
    }
    auto reasoning = NonEmptyString(delta, "reasoning_content");
    if (!reasoning) reasoning = NonEmptyString(delta, "reasoning");
    if (reasoning) {
      if (!Charge(reasoning->size())) return;
      reasoning_.append(*reasoning);
      output_started_ = true;
      if (sink_ != nullptr) sink_->OnReasoning(*reasoning);
    }
    if (auto refusal = NonEmptyString(delta, "refusal")) {
      if (!Charge(refusal->size())) return;
      refusal_.append(*refusal);
    }
    auto calls = delta.find("tool_calls");
    if (calls != delta.end() && calls->is_array()) {
      // Entries are applied in order, including several for one index (openai-python#3201).
      for (const Json& entry : *calls) {
        if (entry.is_object()) ApplyToolCallEntry(entry);
        if (!error_.ok()) return;
      }
    }
  }
  // "" is SGLang's way of saying "not yet" (WIRE.md §3).
  if (auto reason = NonEmptyString(choice, "finish_reason")) {
    finish_reason_ = std::string(*reason);
    finish_seen_ = true;
    StartAll();
  }
}

size_t OpenAiStreamAssembler::NewSlot(bool has_index, int64_t index) {
  StartAll();  // earlier calls are as named as they will get
  Slot slot;
  slot.has_index = has_index;
  slot.index = index;
  slot.order = slots_.size();
  slots_.push_back(std::move(slot));
  if (has_index) slot_of_index_[index] = slots_.size() - 1;
  return slots_.size() - 1;
}

void OpenAiStreamAssembler::ApplyToolCallEntry(const Json& entry) {
  const std::optional<std::string_view> id = NonEmptyString(entry, "id");
  const Json* function = nullptr;
  if (auto f = entry.find("function"); f != entry.end() && f->is_object()) function = &*f;
  const std::optional<std::string_view> name =
      function != nullptr ? NonEmptyString(*function, "name") : std::nullopt;
  const Json* arguments = nullptr;
  if (function != nullptr) {
    auto a = function->find("arguments");
    if (a != function->end() && !a->is_null()) arguments = &*a;
  }

  // WIRE.md §4 rule 2: which slot this entry belongs to.
  const size_t slots_before = slots_.size();
  size_t slot_pos;
  auto index_it = entry.find("index");
  if (index_it != entry.end() && index_it->is_number_integer()) {
    const int64_t index = index_it->get<int64_t>();
    auto found = slot_of_index_.find(index);
    if (found == slot_of_index_.end()) {
      slot_pos = NewSlot(true, index);
    } else {
      const Slot& s = slots_[found->second];
      // Ollama: parallel calls all at index 0, told apart by a new id with a name. A new id
      // without a name continues the call (LM Studio sends a new id on every fragment).
      if (!s.id.empty() && id && *id != s.id && name && !s.arguments.empty()) {
        slot_pos = NewSlot(true, index);
      } else {
        slot_pos = found->second;
      }
    }
  } else if (slots_.empty()) {
    slot_pos = NewSlot(false, 0);
  } else {
    // Gemini: no index. A different id starts a call; so does (our addition, for
    // index-less calls without ids) a different name once the last call has arguments.
    const Slot& last = slots_.back();
    const bool new_id = id && *id != last.id;
    const bool new_name = !id && name && *name != last.name && !last.arguments.empty();
    slot_pos = (new_id || new_name) ? NewSlot(false, 0) : slots_.size() - 1;
  }
  Slot& slot = slots_[slot_pos];
  // A string fragment (the usual case, once per delta) is appended from the parsed event
  // without a copy; only a non-string value is serialised.
  std::string dumped;
  if (arguments != nullptr && !arguments->is_string()) dumped = DumpJson(*arguments);
  const std::string& arguments_text = arguments != nullptr && arguments->is_string()
                                          ? arguments->get_ref<const std::string&>()
                                          : dumped;
  const size_t new_slot_bytes = slots_.size() > slots_before ? kReplySlotBytes : 0;
  // What this entry adds to the slot (rules 4 and 5 below keep restated ids and names out).
  const size_t id_bytes = id && slot.id.empty() ? id->size() : 0;
  const size_t name_bytes = name && *name != slot.name ? name->size() : 0;
  if (!Charge(new_slot_bytes + id_bytes + name_bytes + arguments_text.size())) return;

  if (id && slot.id.empty()) slot.id = std::string(*id);  // rule 4: set once
  if (name) {                                             // rule 5
    if (slot.name.empty()) {
      slot.name = std::string(*name);
    } else if (*name != slot.name) {
      slot.name.append(*name);
    }
  }
  // Rule 6: `type` is ignored. Rule 7: raw fragments, an object serialised once.
  slot.arguments.append(arguments_text);
  // Rule 9: unknown per-call fields travel with the call.
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    const std::string& key = it.key();
    if (key == "index" || key == "id" || key == "type" || key == "function" || it->is_null()) {
      continue;
    }
    if (!Charge(key.size() + DumpJson(*it).size())) return;
    MergeInto(slot.extra[key], *it);
  }
  MaybeStart(slot, /*force=*/false);
}

void OpenAiStreamAssembler::MaybeStart(Slot& slot, bool force) {
  if (slot.started || slot.name.empty()) return;
  if (!force && slot.arguments.empty()) return;
  slot.started = true;
  output_started_ = true;
  if (sink_ != nullptr) sink_->OnToolCallStarted(slot.id, slot.name);
}

void OpenAiStreamAssembler::StartAll() {
  for (Slot& slot : slots_) MaybeStart(slot, /*force=*/true);
}

absl::StatusOr<ModelReply> OpenAiStreamAssembler::Finish() {
  if (absl::Status s = CheckFinish(error_, Complete(), &finished_); !s.ok()) return s;
  StartAll();

  ModelReply reply;
  reply.content = std::move(content_);
  reply.reasoning = std::move(reasoning_);
  reply.refusal = std::move(refusal_);
  reply.usage = usage_;

  // Rule 8: by index, then by first appearance; index-less calls keep their order.
  std::vector<const Slot*> order;
  for (const Slot& slot : slots_) {
    if (!slot.name.empty() || !slot.arguments.empty()) order.push_back(&slot);
  }
  std::stable_sort(order.begin(), order.end(), [](const Slot* a, const Slot* b) {
    if (a->has_index != b->has_index) return a->has_index;
    if (a->has_index && a->index != b->index) return a->index < b->index;
    return a->order < b->order;
  });

  std::set<std::string> ids;
  for (const Slot* slot : order) {
    ToolCall call;
    call.id = slot->id;
    call.name = slot->name;
    call.arguments = TrimWhitespace(slot->arguments).empty() ? "{}" : slot->arguments;
    call.extra = slot->extra;
    if (call.id.empty() || ids.count(call.id) > 0) {
      uint64_t h = 1469598103934665603ULL;
      h = Fnv1a(h, response_id_);
      h = Fnv1a(h, std::to_string(slot->order));
      h = Fnv1a(h, call.name);
      h = Fnv1a(h, call.arguments);
      do {
        call.id = IdFromHash(h);
        h = Fnv1a(h, "+");
      } while (ids.count(call.id) > 0);
    }
    ids.insert(call.id);
    reply.tool_calls.push_back(std::move(call));
  }

  // Rule 10: "stop" (Gemini, Ollama via LiteLLM) or nothing with calls means tool calls.
  reply.finish_reason = finish_reason_;
  if (!reply.tool_calls.empty() && (reply.finish_reason.empty() || reply.finish_reason == "stop" ||
                                    reply.finish_reason == "function_call")) {
    reply.finish_reason = "tool_calls";
  }
  if (reply.finish_reason.empty()) reply.finish_reason = "stop";
  return reply;
}

}  // namespace agent::daemon::llm
