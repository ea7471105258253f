#include "daemon/llm/request_cache.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/responses_convert.h"

namespace agent::daemon::llm {
namespace {

uint64_t HashOf(const std::string& s) {
  return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
}

// `rest` is a request object without "messages"; its keys sort after `head` (nlohmann's
// objects are ordered by key), so the body is head + messages + rest's members.
std::string Splice(std::string head, const std::string& messages, const Json& rest) {
  const std::string tail = DumpJson(rest);  // "{...}", never empty: "model" is always there
  std::string out = std::move(head);
  out.reserve(out.size() + messages.size() + tail.size() + 16);
  out += "\"messages\":";
  out += messages;
  if (tail.size() > 2) {
    out += ',';
    out.append(tail, 1, std::string::npos);
  } else {
    out += '}';
  }
  return out;
}

// `rest` (an object without `key`) with `"key":value_text` among its members, where DumpJson
// would put it (nlohmann's objects are ordered by key).
std::string SpliceMember(const Json& rest, const std::string& key, const std::string& value_text) {
  std::string out = "{";
  bool placed = false;
  auto member = [&](const std::string& name, const std::string& text) {
    if (out.size() > 1) out += ',';
    out += DumpJson(Json(name));
    out += ':';
    out += text;
  };
  for (auto it = rest.begin(); it != rest.end(); ++it) {
    if (!placed && key < it.key()) {
      member(key, value_text);
      placed = true;
    }
    member(it.key(), DumpJson(*it));
  }
  if (!placed) member(key, value_text);
  out += '}';
  return out;
}

// The messages text with `cache_control` first in each breakpoint's block: the key sorts
// before every key a block has, so this is where DumpJson of the marked block puts it.
std::string WithBreakpoints(const PreparedMessages& prepared, const AnthropicCache& cache) {
  const std::string marker = absl::StrCat("\"cache_control\":", DumpJson(CacheControl(cache)), ",");
  std::vector<size_t> at;
  for (size_t i : BreakpointMessages(prepared.marks.size())) {
    if (prepared.marks[i] != std::string::npos) at.push_back(prepared.marks[i] + 1);
  }
  std::sort(at.begin(), at.end());
  std::string out;
  out.reserve(prepared.messages.size() + at.size() * marker.size());
  size_t from = 0;
  for (size_t pos : at) {
    out.append(prepared.messages, from, pos - from);
    out += marker;
    from = pos;
  }
  out.append(prepared.messages, from, std::string::npos);
  return out;
}

}  // namespace

RequestCache::Entry RequestCache::Convert(const Json& message, const std::string& source) const {
  Entry e;
  e.hash = HashOf(source);
  e.size = source.size();
  if (provider_ == Provider::kOpenAi) {
    e.text = DumpJson(OutgoingOpenAiMessage(message, options_));
    e.same_as_source = e.text == source;
    if (e.same_as_source) e.text.clear();
    return e;
  }
  if (provider_ == Provider::kOpenAiResponses) {
    // The message's input items, comma-separated; "" when it sends none.
    for (const Json& item : ResponsesInputItems(message, options_.model)) {
      if (!e.text.empty()) e.text += ',';
      e.text += DumpJson(item);
    }
    e.role = e.text.empty() ? "" : "items";
    return e;
  }
  // One message through the whole converter: what it contributes to the request.
  Json one = Json::array();
  one.push_back(message);
  const Json converted = BuildAnthropicRequest("", one, Json::array(), 0, false);
  if (auto system = converted.find("system"); system != converted.end() && system->is_string()) {
    e.role = "system";
    e.text = system->get<std::string>();
    return e;
  }
  const Json& msgs = converted["messages"];
  if (!msgs.is_array() || msgs.empty()) return e;  // nothing sent (no blocks)
  e.role = GetString(msgs[0], "role");
  for (const Json& block : msgs[0]["content"]) {
    if (!e.text.empty()) e.text += ',';
    if (MarkableBlock(block)) e.mark = e.text.size();
    e.text += DumpJson(block);
  }
  return e;
}

PreparedMessages RequestCache::Prepare(const Json& messages,
                                       const std::vector<std::string>& serialized,
                                       Provider provider, const OpenAiRequestOptions& options) {
  // Responses items depend on the model (reasoning items are sent to their own model only).
  if (provider != provider_ || options.send_reasoning_content != options_.send_reasoning_content ||
      (provider == Provider::kOpenAiResponses && options.model != options_.model)) {
    entries_.clear();
    provider_ = provider;
    options_ = options;
  }
  const size_t n = messages.is_array() ? std::min(messages.size(), serialized.size()) : 0;
  entries_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Entry& e = entries_[i];
    const std::string& source = serialized[i];
    if (e.size == source.size() && e.size > 0 && e.hash == HashOf(source)) continue;
    e = Convert(messages[i], source);
  }
  PreparedMessages out;
  out.provider = provider_;
  out.options = options_;
  if (provider_ == Provider::kOpenAi) {
    AppendOpenAi(serialized, &out);
  } else if (provider_ == Provider::kOpenAiResponses) {
    AppendResponses(&out);
  } else {
    AppendAnthropic(&out);
  }
  return out;
}

void RequestCache::AppendOpenAi(const std::vector<std::string>& serialized,
                                PreparedMessages* out) const {
  size_t size = 2;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size += (entries_[i].same_as_source ? serialized[i].size() : entries_[i].text.size()) + 1;
  }
  std::string& m = out->messages;
  m.clear();
  m.reserve(size);
  m += '[';
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0) m += ',';
    m += entries_[i].same_as_source ? serialized[i] : entries_[i].text;
  }
  m += ']';
}

void RequestCache::AppendResponses(PreparedMessages* out) const {
  size_t size = 2;
  for (const Entry& e : entries_) size += e.text.size() + 1;
  std::string& m = out->messages;
  m.clear();
  m.reserve(size);
  m += '[';
  for (const Entry& e : entries_) {
    if (e.text.empty()) continue;
    if (m.size() > 1) m += ',';
    m += e.text;
  }
  m += ']';
}

// Consecutive messages of one role become one message (BuildAnthropicRequest's merging);
// system text goes to `system`, joined with a blank line.
void RequestCache::AppendAnthropic(PreparedMessages* out) const {
  std::string& m = out->messages;
  m = "[";
  std::string open_role;
  for (const Entry& e : entries_) {
    if (e.role.empty()) continue;
    if (e.role == "system") {
      if (!out->system.empty()) out->system += "\n\n";
      out->system += e.text;
      continue;
    }
    if (e.role == open_role) {
      m += ',';
    } else {
      if (!open_role.empty()) absl::StrAppend(&m, "],\"role\":\"", open_role, "\"},");
      m += "{\"content\":[";
      open_role = e.role;
      out->marks.push_back(std::string::npos);
    }
    if (e.mark != std::string::npos) out->marks.back() = m.size() + e.mark;
    m += e.text;
  }
  if (!open_role.empty()) absl::StrAppend(&m, "],\"role\":\"", open_role, "\"}");
  m += ']';
}

size_t RequestCache::bytes() const {
  size_t total = entries_.capacity() * sizeof(Entry);
  for (const Entry& e : entries_) total += e.text.capacity() + e.role.capacity();
  return total;
}

std::string PreparedBody(const PreparedMessages& prepared, const std::string& model,
                         const Json& tools, const OpenAiRequestOptions& openai,
                         const AnthropicCache& anthropic) {
  if (prepared.provider == Provider::kAnthropic) {
    Json rest = BuildAnthropicRequest(model, Json::array(), tools, kAnthropicMaxTokens,
                                      /*stream=*/true, anthropic);
    rest.erase("messages");
    rest.erase("max_tokens");
    if (!prepared.system.empty()) {
      rest["system"] =
          anthropic.breakpoints ? SystemBlocks(prepared.system, anthropic) : Json(prepared.system);
    }
    const std::string head = absl::StrCat("{\"max_tokens\":", kAnthropicMaxTokens, ",");
    if (!anthropic.breakpoints) return Splice(head, prepared.messages, rest);
    return Splice(head, WithBreakpoints(prepared, anthropic), rest);
  }
  if (prepared.provider == Provider::kOpenAiResponses) {
    Json rest = BuildResponsesRequest(
        model, Json::array(), tools, /*stream=*/true,
        {.prompt_cache_key = openai.prompt_cache_key, .model = prepared.options.model});
    rest.erase("input");
    return SpliceMember(rest, "input", prepared.messages);
  }
  OpenAiRequestOptions options = prepared.options;
  options.prompt_cache_key = openai.prompt_cache_key;
  Json rest = BuildOpenAiRequest(model, Json::array(), tools, /*stream=*/true, options);
  rest.erase("messages");
  return Splice("{", prepared.messages, rest);
}

Json RequestMessages(const ModelRequest& request) {
  if (request.prepared == nullptr) return request.messages;
  absl::StatusOr<Json> parsed = ParseJson(request.prepared->messages);
  if (!parsed.ok()) return Json::array();
  if (request.prepared->provider == Provider::kOpenAi) return *std::move(parsed);
  if (request.prepared->provider == Provider::kOpenAiResponses) {
    return ChatMessagesFromResponsesInput(*parsed);
  }
  Json anthropic = {{"messages", *std::move(parsed)}};
  if (!request.prepared->system.empty()) anthropic["system"] = request.prepared->system;
  return OpenAiMessagesFromAnthropic(anthropic);
}

}  // namespace agent::daemon::llm
