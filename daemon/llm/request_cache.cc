#include "daemon/llm/request_cache.h"

#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "daemon/llm/anthropic_convert.h"

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
    e.text += DumpJson(block);
  }
  return e;
}

PreparedMessages RequestCache::Prepare(const Json& messages,
                                       const std::vector<std::string>& serialized,
                                       Provider provider, const OpenAiRequestOptions& options) {
  if (provider != provider_ || options.send_reasoning_content != options_.send_reasoning_content) {
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
      m += e.text;
      continue;
    }
    if (!open_role.empty()) absl::StrAppend(&m, "],\"role\":\"", open_role, "\"},");
    m += "{\"content\":[";
    m += e.text;
    open_role = e.role;
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
                         const Json& tools) {
  if (prepared.provider == Provider::kAnthropic) {
    Json rest = BuildAnthropicRequest(model, Json::array(), tools, kAnthropicMaxTokens,
                                      /*stream=*/true);
    rest.erase("messages");
    rest.erase("max_tokens");
    if (!prepared.system.empty()) rest["system"] = prepared.system;
    return Splice(absl::StrCat("{\"max_tokens\":", kAnthropicMaxTokens, ","), prepared.messages,
                  rest);
  }
  Json rest = BuildOpenAiRequest(model, Json::array(), tools, /*stream=*/true, prepared.options);
  rest.erase("messages");
  return Splice("{", prepared.messages, rest);
}

Json RequestMessages(const ModelRequest& request) {
  if (request.prepared == nullptr) return request.messages;
  absl::StatusOr<Json> parsed = ParseJson(request.prepared->messages);
  if (!parsed.ok()) return Json::array();
  if (request.prepared->provider == Provider::kOpenAi) return *std::move(parsed);
  Json anthropic = {{"messages", *std::move(parsed)}};
  if (!request.prepared->system.empty()) anthropic["system"] = request.prepared->system;
  return OpenAiMessagesFromAnthropic(anthropic);
}

}  // namespace agent::daemon::llm
