#include "common/transcript_rule.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace agent {

bool HasToolCalls(const Json& m) {
  auto it = m.find("tool_calls");
  return it != m.end() && it->is_array() && !it->empty();
}

absl::StatusOr<std::string> ToolCallId(const Json& call) {
  if (!call.is_object()) return absl::InvalidArgumentError("tool call is not an object");
  std::string id = GetString(call, "id");
  if (id.empty()) return absl::InvalidArgumentError("tool call without an id");
  auto fn = call.find("function");
  if (fn == call.end() || !fn->is_object() || GetString(*fn, "name").empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tool call ", id, " has no function name"));
  }
  auto args = fn->find("arguments");
  if (args == fn->end() || !args->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool call ", id, " has arguments that are not a string"));
  }
  return id;
}

void TranscriptRule::ReportUnanswered(size_t at, std::vector<std::string>* problems) const {
  for (const std::string& id : open_) {
    if (open_set_.count(id)) {
      problems->push_back(absl::StrCat("message ", open_from_, ": tool call ", id,
                                       " has no tool result before message ", at));
    }
  }
}

std::vector<std::string> TranscriptRule::Check(const Json& m) const {
  std::vector<std::string> problems;
  const size_t i = count_;
  if (!m.is_object()) {
    problems.push_back(absl::StrCat("message ", i, " is not an object"));
    return problems;
  }
  const std::string role = GetString(m, "role");
  if (role == "system") {
    if (i != 0) problems.push_back(absl::StrCat("message ", i, ": system message not first"));
  } else if (role == "user" || role == "assistant") {
    ReportUnanswered(i, &problems);
    if (role == "assistant" && HasToolCalls(m)) {
      std::unordered_set<std::string> here;
      for (const Json& call : m["tool_calls"]) {
        auto id = ToolCallId(call);
        if (!id.ok()) {
          problems.push_back(absl::StrCat("message ", i, ": ", id.status().message()));
        } else if (all_ids_.count(*id) || !here.insert(*id).second) {
          problems.push_back(absl::StrCat("message ", i, ": duplicate tool call id ", *id));
        }
      }
    }
  } else if (role == "tool") {
    const std::string id = GetString(m, "tool_call_id");
    if (id.empty()) {
      problems.push_back(absl::StrCat("message ", i, ": tool message without tool_call_id"));
    } else if (!open_set_.count(id)) {
      problems.push_back(absl::StrCat("message ", i, ": tool result ", id,
                                      " answers no pending call of the message before it"));
    }
  } else {
    problems.push_back(absl::StrCat("message ", i, ": unknown role \"", role, "\""));
  }
  return problems;
}

void TranscriptRule::Take(const Json& m) {
  const size_t i = count_++;
  if (!m.is_object()) return;
  const std::string role = GetString(m, "role");
  if (role == "user" || role == "assistant") {
    open_.clear();
    open_set_.clear();
    if (role == "assistant" && HasToolCalls(m)) {
      open_from_ = i;
      for (const Json& call : m["tool_calls"]) {
        auto id = ToolCallId(call);
        if (!id.ok() || !all_ids_.insert(*id).second) continue;
        open_.push_back(*id);
        open_set_.insert(*id);
      }
    }
  } else if (role == "tool") {
    open_set_.erase(GetString(m, "tool_call_id"));
  }
}

std::vector<std::string> TranscriptRule::Add(const Json& m) {
  std::vector<std::string> problems = Check(m);
  Take(m);
  return problems;
}

std::vector<std::string> TranscriptRule::Finish(bool allow_open_tail) const {
  std::vector<std::string> problems;
  if (!allow_open_tail) ReportUnanswered(count_, &problems);
  return problems;
}

std::vector<std::string> ValidateMessages(const Json& messages, bool allow_open_tail) {
  if (!messages.is_array()) return {"the transcript is not a JSON array of messages"};
  TranscriptRule rule;
  std::vector<std::string> problems;
  for (const Json& m : messages) {
    std::vector<std::string> p = rule.Add(m);
    problems.insert(problems.end(), std::make_move_iterator(p.begin()),
                    std::make_move_iterator(p.end()));
  }
  std::vector<std::string> p = rule.Finish(allow_open_tail);
  problems.insert(problems.end(), p.begin(), p.end());
  return problems;
}

}  // namespace agent
