#include "daemon/llm/request_cache.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/responses_convert.h"

namespace agent::daemon::llm {
namespace {

constexpr size_t kMinArenaBytes = 64 * 1024;
constexpr size_t kMaxArenaBytes = 4 * 1024 * 1024;

// `rest` is a request object without "messages"; its keys sort after `head` (nlohmann's
// objects are ordered by key), so the body is head + messages + rest's members.
RequestBody Splice(std::string head, const RequestBody& messages, const Json& rest) {
  std::string tail = DumpJson(rest);  // "{...}", never empty: "model" is always there
  head += "\"messages\":";
  RequestBody out(std::move(head));
  out.Append(messages);
  if (tail.size() > 2) {
    tail[0] = ',';  // rest's members follow the messages in the same object
    out.Append(std::move(tail));
  } else {
    out.Append(std::string(1, '}'));
  }
  return out;
}

// `rest` (an object without `key`) with `"key":value` among its members, where DumpJson
// would put it (nlohmann's objects are ordered by key).
RequestBody SpliceMember(const Json& rest, const std::string& key, const RequestBody& value) {
  RequestBody out;
  std::string text = "{";
  bool placed = false;
  auto member = [&](const std::string& name) {
    if (text.size() > 1 || out.size() > 0) text += ',';
    text += DumpJson(Json(name));
    text += ':';
  };
  for (auto it = rest.begin(); it != rest.end(); ++it) {
    if (!placed && key < it.key()) {
      member(key);
      out.Append(std::move(text));
      out.Append(value);
      text.clear();
      placed = true;
    }
    member(it.key());
    text += DumpJson(*it);
  }
  if (!placed) {
    member(key);
    out.Append(std::move(text));
    out.Append(value);
    text.clear();
  }
  text += '}';
  out.Append(std::move(text));
  return out;
}

// The messages with `cache_control` first in each breakpoint's block: the key sorts before
// every key a block has, so this is where DumpJson of the marked block puts it.
RequestBody WithBreakpoints(const PreparedMessages& prepared, const AnthropicCache& cache) {
  const std::string marker = absl::StrCat("\"cache_control\":", DumpJson(CacheControl(cache)), ",");
  std::vector<size_t> at = prepared.breakpoints;
  std::sort(at.begin(), at.end());
  RequestBody out = prepared.messages;
  // From the end, so earlier offsets stay where they were.
  for (size_t k = at.size(); k-- > 0;) out.Insert(at[k] + 1, marker);
  return out;
}

const char* RoleName(bool user) { return user ? "user" : "assistant"; }

}  // namespace

RequestCache::Converted RequestCache::Convert(const Json& message,
                                              const std::string& source) const {
  Converted c;
  if (provider_ == Provider::kOpenAi) {
    c.role = Role::kItems;
    c.text = DumpJson(OutgoingOpenAiMessage(message, options_));
    c.same_as_source = c.text == source;
    if (c.same_as_source) c.text.clear();
    return c;
  }
  if (provider_ == Provider::kOpenAiResponses) {
    // The message's input items, comma-separated; none when it sends nothing.
    for (const Json& item : ResponsesInputItems(message, options_.model)) {
      if (!c.text.empty()) c.text += ',';
      c.text += DumpJson(item);
    }
    c.role = c.text.empty() ? Role::kNone : Role::kItems;
    return c;
  }
  // One message through the whole converter: what it contributes to the request.
  Json one = Json::array();
  one.push_back(message);
  const Json converted = BuildAnthropicRequest("", one, Json::array(), 0, false);
  if (auto system = converted.find("system"); system != converted.end() && system->is_string()) {
    c.role = Role::kSystem;
    c.text = system->get<std::string>();
    return c;
  }
  const Json& msgs = converted["messages"];
  if (!msgs.is_array() || msgs.empty()) return c;  // nothing sent (no blocks)
  c.role = GetString(msgs[0], "role") == "user" ? Role::kUser : Role::kAssistant;
  for (const Json& block : msgs[0]["content"]) {
    if (!c.text.empty()) c.text += ',';
    if (MarkableBlock(block)) c.mark = c.text.size();
    c.text += DumpJson(block);
  }
  return c;
}

void RequestCache::Reset() {
  entries_.clear();
  hashes_.clear();
  messages_ = RequestBody();
  arena_.reset();
  group_marks_.clear();
  open_role_ = Role::kNone;
  AppendText("[");
}

void RequestCache::AppendText(std::string_view text) {
  if (text.empty()) return;
  if (arena_ == nullptr || arena_->size() + text.size() > arena_->capacity()) {
    // Room for about as much again as is laid out, so a long session has few arenas.
    const size_t want = std::clamp(messages_.size(), kMinArenaBytes, kMaxArenaBytes);
    arena_ = std::make_shared<std::string>();
    arena_->reserve(std::max(want, text.size()));
  }
  const size_t at = arena_->size();
  arena_->append(text);  // within the reserved size: the bytes bodies view do not move
  messages_.Append(arena_, std::string_view(arena_->data() + at, text.size()));
}

void RequestCache::LayOut(Entry* e, std::string_view text) {
  e->messages_before = messages_.size();
  e->groups_before = group_marks_.size();
  e->open_mark_before = group_marks_.empty() ? std::string::npos : group_marks_.back();
  e->open_role_before = open_role_;
  const bool first = messages_.size() <= 1;  // only the opening '['
  if (provider_ == Provider::kAnthropic) {
    if (e->role == Role::kUser || e->role == Role::kAssistant) {
      // Consecutive messages of one role become one message (BuildAnthropicRequest's merging).
      if (e->role == open_role_) {
        AppendText(",");
      } else {
        if (open_role_ != Role::kNone) {
          AppendText(absl::StrCat("],\"role\":\"", RoleName(open_role_ == Role::kUser), "\"},"));
        }
        AppendText("{\"content\":[");
        open_role_ = e->role;
        group_marks_.push_back(std::string::npos);
      }
      e->text_begin = messages_.size();
      AppendText(text);
      if (e->mark != std::string::npos) group_marks_.back() = e->text_begin + e->mark;
    } else {
      e->text_begin = messages_.size();  // system text goes to `system`; nothing sends nothing
    }
  } else if (e->role != Role::kNone) {
    if (!first) AppendText(",");
    e->text_begin = messages_.size();
    AppendText(text);
  } else {
    e->text_begin = messages_.size();
  }
  e->text_end = messages_.size();
}

void RequestCache::CutTo(size_t k) {
  if (k >= entries_.size()) return;
  const Entry& e = entries_[k];
  messages_.Truncate(e.messages_before);
  group_marks_.resize(e.groups_before);
  if (!group_marks_.empty()) group_marks_.back() = e.open_mark_before;
  open_role_ = e.open_role_before;
  entries_.resize(k);
  hashes_.resize(k);
  // The arena keeps the bytes cut off (an earlier body may view them): appends go after them.
}

PreparedMessages RequestCache::Prepare(const Transcript& transcript, Provider provider,
                                       const OpenAiRequestOptions& options) {
  // Responses items depend on the model (reasoning items are sent to their own model only).
  if (provider != provider_ || options.send_reasoning_content != options_.send_reasoning_content ||
      (provider == Provider::kOpenAiResponses && options.model != options_.model) ||
      messages_.size() == 0) {
    provider_ = provider;
    options_ = options;
    Reset();
  }
  const Json& messages = transcript.messages();
  const std::vector<std::string>& serialized = transcript.serialized();
  const std::vector<uint64_t>& hashes = transcript.hashes();
  const size_t n =
      messages.is_array() ? std::min({messages.size(), serialized.size(), hashes.size()}) : 0;
  const size_t kept = std::min(hashes_.size(), n);
  auto first_change = [&] {
    return static_cast<size_t>(std::mismatch(hashes_.begin(),
                                             hashes_.begin() + static_cast<std::ptrdiff_t>(kept),
                                             hashes.begin())
                                   .first -
                               hashes_.begin());
  };
  // Only appended to since the last step: every message laid out is still right, and a long
  // session's step does not walk all its hashes.
  const bool appended_only = transcript.identity() == seen_identity_ &&
                             transcript.rewrites() == seen_rewrites_ && kept == hashes_.size() &&
                             (kept == 0 || hashes[kept - 1] == hashes_[kept - 1]);
  const size_t k = appended_only ? kept : first_change();
  assert(!appended_only || first_change() == k);  // debug builds check the claim each step
  seen_identity_ = transcript.identity();
  seen_rewrites_ = transcript.rewrites();
  if (k < entries_.size()) {
    // Lay out again from the first change, reusing what did not change after it.
    std::vector<Entry> old(entries_.begin() + static_cast<std::ptrdiff_t>(k), entries_.end());
    std::vector<uint64_t> old_hashes(hashes_.begin() + static_cast<std::ptrdiff_t>(k),
                                     hashes_.end());
    const RequestBody old_text = messages_;
    CutTo(k);
    for (size_t i = k; i < n; ++i) {
      const Entry* was =
          i - k < old.size() && old_hashes[i - k] == hashes[i] ? &old[i - k] : nullptr;
      Entry e;
      if (was == nullptr) {
        Converted c = Convert(messages[i], serialized[i]);
        e.role = c.role;
        e.mark = c.mark;
        if (c.role == Role::kSystem) e.system = c.text;
        LayOut(&e, c.same_as_source ? std::string_view(serialized[i]) : std::string_view(c.text));
      } else {
        e.role = was->role;
        e.mark = was->mark;
        e.system = was->system;
        const std::string text = old_text.Substr(was->text_begin, was->text_end - was->text_begin);
        LayOut(&e, text);
      }
      entries_.push_back(std::move(e));
      hashes_.push_back(hashes[i]);
    }
  }
  for (size_t i = entries_.size(); i < n; ++i) {
    Converted c = Convert(messages[i], serialized[i]);
    Entry e;
    e.role = c.role;
    e.mark = c.mark;
    if (c.role == Role::kSystem) e.system = std::move(c.text);
    LayOut(&e, c.same_as_source ? std::string_view(serialized[i]) : std::string_view(c.text));
    entries_.push_back(std::move(e));
    hashes_.push_back(hashes[i]);
  }

  PreparedMessages out;
  out.provider = provider_;
  out.options = options_;
  out.messages = messages_;
  if (provider_ == Provider::kAnthropic) {
    for (const Entry& e : entries_) {
      if (e.role != Role::kSystem) continue;
      if (!out.system.empty()) out.system += "\n\n";
      out.system += e.system;
    }
    if (open_role_ != Role::kNone) {
      out.messages.Append(
          absl::StrCat("],\"role\":\"", RoleName(open_role_ == Role::kUser), "\"}"));
    }
    for (size_t g : BreakpointMessages(group_marks_.size())) {
      if (group_marks_[g] != std::string::npos) out.breakpoints.push_back(group_marks_[g]);
    }
  }
  out.messages.Append("]");
  return out;
}

size_t RequestCache::bytes() const {
  size_t total = entries_.capacity() * sizeof(Entry) + hashes_.capacity() * sizeof(uint64_t) +
                 messages_.size();
  for (const Entry& e : entries_) total += e.system.capacity();
  if (arena_ != nullptr) total += arena_->capacity() - arena_->size();
  return total;
}

RequestBody PreparedBody(const PreparedMessages& prepared, const std::string& model,
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
  absl::StatusOr<Json> parsed = ParseJson(request.prepared->messages.Text());
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
