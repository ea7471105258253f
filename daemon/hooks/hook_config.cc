#include "daemon/hooks/hook_config.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace agent::daemon::hooks {
namespace {

constexpr std::array<std::string_view, 10> kEvents = {
    kSessionStart, kUserPromptSubmit, kPreToolUse, kPermissionRequest, kPostToolUse, kNotification,
    kStop,         kSubagentStop,     kPreCompact, kSessionEnd};

// Ours → Claude Code's. MultiEdit has no tool of its own here: edit_file answers to it too.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kClaudeNames = {{
    {"bash", "Bash"},
    {"edit_file", "Edit"},
    {"write_file", "Write"},
    {"read_file", "Read"},
    {"find_files", "Glob"},
    {"search", "Grep"},
    {"list_dir", "LS"},
    {"task", "Task"},
    {"update_plan", "TodoWrite"},
}};

absl::Status Malformed(std::string_view where, std::string_view place, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(where), ": hooks.", std::string(place), ": ", std::string(what)));
}

bool SelectsAll(std::string_view matcher) { return matcher.empty() || matcher == "*"; }

absl::Status ParseGroup(const Json& group, std::string_view event, size_t index, HookOrigin origin,
                        std::string_view where, std::vector<HookCommand>* out) {
  const std::string place = absl::StrCat(std::string(event), "[", index, "]");
  if (!group.is_object()) return Malformed(where, place, "not an object");
  std::string matcher;
  if (auto m = group.find("matcher"); m != group.end() && !m->is_null()) {
    if (!m->is_string()) return Malformed(where, place + ".matcher", "not a string");
    matcher = m->get<std::string>();
  }
  if (!SelectsAll(matcher)) {
    RE2 re(matcher, RE2::Quiet);
    if (!re.ok()) return Malformed(where, place + ".matcher", re.error());
  }
  auto list = group.find("hooks");
  if (list == group.end() || !list->is_array()) {
    return Malformed(where, place + ".hooks", "not an array");
  }
  for (size_t k = 0; k < list->size(); ++k) {
    const Json& h = (*list)[k];
    const std::string at = absl::StrCat(place, ".hooks[", k, "]");
    if (!h.is_object()) return Malformed(where, at, "not an object");
    if (GetString(h, "type", "command") != "command") continue;  // "prompt" hooks: not ours
    auto command = h.find("command");
    if (command == h.end() || !command->is_string() || command->get<std::string>().empty()) {
      return Malformed(where, at + ".command", "missing or not a string");
    }
    HookCommand c{std::string(event), matcher, command->get<std::string>(), kDefaultTimeoutS,
                  origin};
    if (auto t = h.find("timeout"); t != h.end() && !t->is_null()) {
      if (!t->is_number() || t->get<double>() <= 0) {
        return Malformed(where, at + ".timeout", "not a positive number of seconds");
      }
      c.timeout_s = static_cast<int>(std::min<double>(t->get<double>(), kMaxTimeoutS));
      if (c.timeout_s < 1) c.timeout_s = 1;
    }
    out->push_back(std::move(c));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsKnownEvent(std::string_view event) {
  return std::find(kEvents.begin(), kEvents.end(), event) != kEvents.end();
}

std::string HookCommand::TrustKey() const {
  return DumpJson(
      Json{{"event", event}, {"matcher", matcher}, {"command", command}, {"timeout", timeout_s}});
}

std::string HookCommand::Display() const {
  return absl::StrCat(std::string(kHookDisplayPrefix), event,
                      matcher.empty() ? "" : " [" + matcher + "]", " (", timeout_s,
                      " s): ", command);
}

absl::StatusOr<std::vector<HookCommand>> ParseHooks(const Json& hooks, HookOrigin origin,
                                                    std::string_view where) {
  std::vector<HookCommand> out;
  if (hooks.is_null()) return out;
  if (!hooks.is_object())
    return absl::InvalidArgumentError(absl::StrCat(std::string(where), ": hooks: not an object"));
  for (const auto& [event, groups] : hooks.items()) {
    if (!IsKnownEvent(event)) continue;
    if (!groups.is_array()) return Malformed(where, event, "not an array");
    for (size_t i = 0; i < groups.size(); ++i) {
      if (auto s = ParseGroup(groups[i], event, i, origin, where, &out); !s.ok()) return s;
    }
  }
  return out;
}

std::string_view ClaudeToolName(std::string_view tool) {
  for (const auto& [ours, theirs] : kClaudeNames) {
    if (ours == tool) return theirs;
  }
  return {};
}

bool MatcherSelects(std::string_view matcher, std::string_view subject) {
  if (SelectsAll(matcher)) return true;
  RE2 re(matcher, RE2::Quiet);
  if (!re.ok()) return false;
  if (RE2::FullMatch(subject, re)) return true;
  std::string_view alias = ClaudeToolName(subject);
  if (subject == "edit_file" && RE2::FullMatch("MultiEdit", re)) return true;
  return !alias.empty() && RE2::FullMatch(alias, re);
}

}  // namespace agent::daemon::hooks
