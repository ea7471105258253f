#include "common/transcript.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unordered_set>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace agent {
namespace {

uint64_t HashOfText(std::string_view s) { return absl::Hash<std::string_view>{}(s); }

std::string Role(const Json& m) { return GetString(m, "role"); }

size_t ContentChars(const Json& m) {
  size_t n = 0;
  auto c = m.find("content");
  if (c != m.end()) {
    if (c->is_string()) {
      n += c->get_ref<const std::string&>().size();
    } else if (c->is_array()) {
      // An image counts as what a model charges for one, not as its base64.
      for (const Json& part : *c) {
        n += part.is_object() && GetString(part, "type") == "image_url"
                 ? kImagePartChars
                 : ContentAsText(part).size();
      }
    } else if (!c->is_null()) {
      n += DumpJson(*c).size();
    }
  }
  if (HasToolCalls(m)) {
    for (const Json& call : m["tool_calls"]) {
      n += GetString(call.value("function", Json::object()), "arguments").size();
      n += GetString(call.value("function", Json::object()), "name").size();
    }
  }
  return n;
}

void AddCallIds(const Json& m, std::unordered_set<std::string>* ids) {
  if (!HasToolCalls(m)) return;
  for (const Json& c : m["tool_calls"]) ids->insert(GetString(c, "id"));
}

void CountAll(const Json& messages, size_t* chars, std::unordered_set<std::string>* ids) {
  *chars = 0;
  ids->clear();
  for (const Json& m : messages) {
    *chars += ContentChars(m);
    AddCallIds(m, ids);
  }
}

}  // namespace

absl::StatusOr<Transcript> Transcript::FromJson(Json messages) {
  std::vector<std::string> problems = ValidateMessages(messages, true);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  }
  Transcript t;
  t.messages_ = std::move(messages);
  t.SerializeAll();
  t.RecomputePending();
  return t;
}

namespace {

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

bool ConsumeSuffix(std::string_view* s, std::string_view suffix) {
  if (!s->ends_with(suffix)) return false;
  s->remove_suffix(suffix.size());
  return true;
}

// Parses lines [begin, end) into out[begin, end); false at the first that is not JSON.
bool ParseLines(const std::vector<std::string>& lines, size_t begin, size_t end,
                std::vector<Json>* out) {
  for (size_t i = begin; i < end; ++i) {
    absl::StatusOr<Json> m = ParseJson(lines[i]);
    if (!m.ok()) return false;
    (*out)[i] = *std::move(m);
  }
  return true;
}

// Files this large are parsed on two threads: attaching to a long session waits for it.
constexpr size_t kParallelParseBytes = 256 * 1024;

// The messages and lines of text in TranscriptFileText's form; false for any other text.
bool SplitFileText(std::string_view text, Json* messages, std::vector<std::string>* lines) {
  const size_t size = text.size();
  if (!ConsumePrefix(&text, "[\n") || !ConsumeSuffix(&text, "]\n")) return false;
  lines->clear();
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return false;
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (!ConsumePrefix(&line, "  ")) return false;
    // Every line but the last ends with the comma between array elements.
    if (!text.empty() && !ConsumeSuffix(&line, ",")) return false;
    lines->emplace_back(line);
  }
  std::vector<Json> parsed(lines->size());
  const size_t half = size >= kParallelParseBytes ? lines->size() / 2 : 0;
  bool first_ok = true;
  std::thread first;
  if (half > 0) first = std::thread([&] { first_ok = ParseLines(*lines, 0, half, &parsed); });
  bool second_ok = ParseLines(*lines, half, lines->size(), &parsed);
  if (first.joinable()) first.join();
  if (!first_ok || !second_ok) return false;
  *messages = Json::array();
  messages->get_ref<Json::array_t&>() = std::move(parsed);
  return true;
}

}  // namespace

absl::StatusOr<Transcript> Transcript::FromFileText(std::string_view text) {
  Json messages;
  std::vector<std::string> lines;
  const bool split = SplitFileText(text, &messages, &lines);
  if (!split) {
    absl::StatusOr<Json> j = ParseJson(text);
    if (!j.ok()) return j.status();
    if (!j->is_array()) return absl::InvalidArgumentError("not a JSON array of messages");
    messages = *std::move(j);
  }
  std::vector<std::string> problems = ValidateMessages(messages, true);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("breaks the transcript rule: ", absl::StrJoin(problems, "; ")));
  }
  Transcript t;
  t.messages_ = std::move(messages);
  if (split) {
    t.serialized_ = std::move(lines);
    t.hashes_.reserve(t.serialized_.size());
    for (const std::string& line : t.serialized_) t.hashes_.push_back(HashOfText(line));
    t.Recount();
  } else {
    t.SerializeAll();
  }
  t.RecomputePending();
  t.DebugCheck();
  return t;
}

absl::Status Transcript::AppendSystem(std::string text) {
  if (!messages_.empty()) {
    return absl::FailedPreconditionError("the system prompt must be the first message");
  }
  messages_.push_back({{"role", "system"}, {"content", std::move(text)}});
  SerializeLast();
  DebugCheck();
  return absl::OkStatus();
}

absl::Status Transcript::AppendUser(std::string text, const std::vector<std::string>& image_urls) {
  if (HasPending()) {
    return absl::FailedPreconditionError(
        absl::StrCat("tool call ", pending_ids_[pending_begin_], " is not answered yet"));
  }
  if (image_urls.empty()) {
    messages_.push_back({{"role", "user"}, {"content", std::move(text)}});
  } else {
    Json parts = Json::array();
    if (!text.empty()) parts.push_back({{"type", "text"}, {"text", std::move(text)}});
    for (const std::string& url : image_urls) {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
    }
    messages_.push_back({{"role", "user"}, {"content", std::move(parts)}});
  }
  SerializeLast();
  pending_ids_.clear();
  pending_begin_ = 0;
  DebugCheck();
  return absl::OkStatus();
}

absl::Status Transcript::AppendAssistant(Json message) {
  if (HasPending()) {
    return absl::FailedPreconditionError(
        absl::StrCat("tool call ", pending_ids_[pending_begin_], " is not answered yet"));
  }
  if (!message.is_object()) return absl::InvalidArgumentError("assistant message not an object");
  message["role"] = "assistant";
  std::vector<std::string> ids;
  if (HasToolCalls(message)) {
    std::unordered_set<std::string> fresh;  // this message's, against each other
    for (const Json& call : message["tool_calls"]) {
      auto id = ToolCallId(call);
      if (!id.ok()) return id.status();
      if (call_ids_.count(*id) > 0 || !fresh.insert(*id).second) {
        return absl::InvalidArgumentError(absl::StrCat("duplicate tool call id ", *id));
      }
      ids.push_back(*id);
    }
  } else {
    message.erase("tool_calls");
  }
  messages_.push_back(std::move(message));
  SerializeLast();
  pending_ids_ = std::move(ids);
  pending_begin_ = 0;
  DebugCheck();
  return absl::OkStatus();
}

absl::Status Transcript::AppendToolResult(std::string_view call_id, std::string content) {
  if (!HasPending()) {
    return absl::FailedPreconditionError(
        absl::StrCat("tool result ", std::string(call_id), " answers no pending call"));
  }
  if (pending_ids_[pending_begin_] != call_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("tool result ", std::string(call_id),
                     " out of order: ", pending_ids_[pending_begin_], " is next"));
  }
  messages_.push_back(
      {{"role", "tool"}, {"tool_call_id", std::string(call_id)}, {"content", std::move(content)}});
  SerializeLast();
  ++pending_begin_;
  DebugCheck();
  return absl::OkStatus();
}

std::vector<std::string> Transcript::PendingCallIds() const {
  return {pending_ids_.begin() + static_cast<std::ptrdiff_t>(pending_begin_), pending_ids_.end()};
}

int Transcript::Seal(std::string_view reason) {
  int n = 0;
  while (HasPending()) {
    std::string id = pending_ids_[pending_begin_];
    // Cannot fail: `id` is the next pending call.
    (void)AppendToolResult(id, absl::StrCat("Not run: ", std::string(reason), "."));
    ++n;
  }
  return n;
}

size_t Transcript::FirstCompactable() const {
  return (!messages_.empty() && Role(messages_[0]) == "system") ? 1 : 0;
}

size_t Transcript::CutPoint() const {
  size_t start = FirstCompactable();
  size_t n = messages_.size();
  if (n - start < 4) return start;
  size_t cut = start + (n - start) / 2;
  while (cut < n && Role(messages_[cut]) == "tool") ++cut;
  // Never cut into the open tail: the pending assistant message and its results stay.
  if (HasPending()) {
    size_t last_assistant = n;
    while (last_assistant > start && Role(messages_[last_assistant - 1]) != "assistant") {
      --last_assistant;
    }
    if (last_assistant > start && cut >= last_assistant) cut = last_assistant - 1;
    while (cut > start && Role(messages_[cut]) == "tool") --cut;
  }
  if (cut >= n) return start;
  return cut;
}

absl::StatusOr<Json> Transcript::ReplacePrefix(size_t cut, std::string summary) {
  size_t start = FirstCompactable();
  if (cut <= start || cut >= messages_.size()) {
    return absl::InvalidArgumentError("nothing to compact");
  }
  std::string role = Role(messages_[cut]);
  if (role != "user" && role != "assistant") {
    return absl::InvalidArgumentError("a cut must fall on a user or assistant message");
  }
  Json removed = Json::array();
  Json kept = Json::array();
  for (size_t i = 0; i < start; ++i) kept.push_back(messages_[i]);
  for (size_t i = start; i < cut; ++i) removed.push_back(messages_[i]);
  kept.push_back({{"role", "user"}, {"content", std::move(summary)}});
  for (size_t i = cut; i < messages_.size(); ++i) kept.push_back(messages_[i]);
  if (!ValidateMessages(kept, true).empty()) {
    return absl::InternalError("compaction would break the transcript");
  }
  messages_ = std::move(kept);
  SerializeAll();
  RecomputePending();
  ++rewrites_;
  DebugCheck();
  return removed;
}

absl::Status Transcript::ReplaceSystemText(std::string text) {
  if (messages_.empty() || Role(messages_[0]) != "system") {
    return absl::FailedPreconditionError("the transcript has no system message");
  }
  chars_ -= ContentChars(messages_[0]);
  messages_[0]["content"] = std::move(text);
  chars_ += ContentChars(messages_[0]);
  serialized_[0] = DumpJson(messages_[0]);
  hashes_[0] = HashOfText(serialized_[0]);
  ++rewrites_;
  DebugCheck();
  return absl::OkStatus();
}

void Transcript::TruncateTo(size_t n) {
  if (n >= messages_.size()) return;
  messages_.erase(messages_.begin() + static_cast<std::ptrdiff_t>(n), messages_.end());
  serialized_.resize(n);
  hashes_.resize(n);
  Recount();
  RecomputePending();
  ++rewrites_;
  Seal("the session was forked at this point");
}

absl::Status Transcript::ValidateForRequest() const {
  std::vector<std::string> problems = ValidateMessages(messages_, false);
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrJoin(problems, "; "));
}

void Transcript::RecomputePending() {
  pending_ids_.clear();
  pending_begin_ = 0;
  // The open tail: the last assistant message and the tool messages after it.
  size_t i = messages_.size();
  while (i > 0 && Role(messages_[i - 1]) == "tool") --i;
  if (i == 0 || Role(messages_[i - 1]) != "assistant" || !HasToolCalls(messages_[i - 1])) return;
  for (const Json& c : messages_[i - 1]["tool_calls"]) pending_ids_.push_back(GetString(c, "id"));
  pending_begin_ = messages_.size() - i;
  // Results on disk may be in any order; what matters is which remain. Reorder the pending
  // list so answered ids come first.
  std::unordered_set<std::string> answered;
  for (size_t k = i; k < messages_.size(); ++k)
    answered.insert(GetString(messages_[k], "tool_call_id"));
  std::stable_partition(pending_ids_.begin(), pending_ids_.end(),
                        [&](const std::string& id) { return answered.count(id) > 0; });
}

void Transcript::SerializeLast() {
  serialized_.push_back(DumpJson(messages_.back()));
  hashes_.push_back(HashOfText(serialized_.back()));
  chars_ += ContentChars(messages_.back());
  AddCallIds(messages_.back(), &call_ids_);
}

void Transcript::SerializeAll() {
  serialized_.clear();
  serialized_.reserve(messages_.size());
  for (const Json& m : messages_) serialized_.push_back(DumpJson(m));
  hashes_.clear();
  hashes_.reserve(serialized_.size());
  for (const std::string& s : serialized_) hashes_.push_back(HashOfText(s));
  Recount();
}

void Transcript::Recount() { CountAll(messages_, &chars_, &call_ids_); }

std::string ContentAsText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_object()) {
    if (GetString(content, "type") == "image_url") return "[image]";
    return GetString(content, "text");
  }
  std::string out;
  if (content.is_array()) {
    for (const Json& part : content) {
      const std::string piece = ContentAsText(part);
      if (!out.empty() && !piece.empty()) out += '\n';
      out += piece;
    }
  }
  return out;
}

std::string Transcript::FileText() const { return TranscriptFileText(serialized_); }

std::string TranscriptFileText(const std::vector<std::string>& lines) {
  size_t size = 4;
  for (const std::string& l : lines) size += l.size() + 4;
  std::string out;
  out.reserve(size);
  out += "[\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    out += "  ";
    out += lines[i];
    out += i + 1 < lines.size() ? ",\n" : "\n";
  }
  out += "]\n";
  return out;
}

void Transcript::DebugCheck() const {
#ifndef NDEBUG
  if (serialized_.size() != messages_.size() || hashes_.size() != messages_.size()) {
    std::fprintf(stderr, "transcript cache out of step: %zu, %zu vs %zu\n", serialized_.size(),
                 hashes_.size(), messages_.size());
    std::abort();
  }
  // Appended to since the last check: only the new messages are checked, so a turn of
  // thousands of appends stays linear. A whole check after any other change, and whenever the
  // length reaches a power of two (linear in total), re-reads the counts and the rule.
  const size_t n = messages_.size();
  const bool whole = debug_.rewrites != rewrites_ || debug_.identity != identity() ||
                     n < debug_.rule.size() || (n & (n - 1)) == 0;
  if (whole) {
    size_t chars = 0;
    std::unordered_set<std::string> ids;
    CountAll(messages_, &chars, &ids);
    if (chars != chars_ || ids != call_ids_) {
      std::fprintf(stderr, "transcript counts out of step: %zu chars vs %zu\n", chars_, chars);
      std::abort();
    }
    debug_ = DebugState{};
    debug_.rewrites = rewrites_;
    debug_.identity = identity();
  }
  std::vector<std::string> problems;
  for (size_t i = debug_.rule.size(); i < n; ++i) {
    std::vector<std::string> p = debug_.rule.Add(messages_[i]);
    problems.insert(problems.end(), p.begin(), p.end());
  }
  if (!problems.empty()) {
    std::fprintf(stderr, "transcript rule broken: %s\n", absl::StrJoin(problems, "; ").c_str());
    std::abort();
  }
#endif
}

uint64_t Transcript::Identity::Next() noexcept {
  static std::atomic<uint64_t> next{1};  // 0 is no transcript's
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace agent
