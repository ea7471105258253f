#include "daemon/hooks/hook_decision.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace agent::daemon::hooks {
namespace {

constexpr size_t kMaxShown = 300;  // of a failing hook's stderr, in its failure line

// `text` without the white space around it.
std::string Stripped(std::string_view text) {
  return std::string(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
}

std::string Shown(std::string_view text) {
  std::string t = Stripped(text);
  if (t.size() > kMaxShown) t = t.substr(0, kMaxShown) + "…";
  return t;
}

std::string Name(const HookCommand& c) {
  return absl::StrCat(c.event, " hook `", Shown(c.command), "`");
}

// Plain stdout is context for the model on these events (Claude Code's rule).
bool StdoutIsContext(std::string_view event) {
  return event == kSessionStart || event == kUserPromptSubmit;
}

Permission ParsePermission(const Json& v, bool* bad) {
  const std::string s = v.is_string() ? v.get<std::string>() : "";
  if (s == "allow" || s == "approve") return Permission::kAllow;
  if (s == "deny" || s == "block") return Permission::kDeny;
  if (s == "ask") return Permission::kAsk;
  *bad = true;
  return Permission::kNone;
}

struct One {
  Permission permission = Permission::kNone;
  bool block = false;
  std::string reason;
  std::optional<Json> updated;
  std::vector<std::string> context;
  std::optional<std::string> failure;
};

// Reads a hook's JSON answer into `one`; false when its shape is wrong.
bool ReadJson(std::string_view event, const Json& j, One& one, HookOutcome& all) {
  if (!j.is_object()) return false;
  if (j.contains("continue") && j["continue"].is_boolean() && !j["continue"].get<bool>()) {
    all.stop = true;
    if (all.stop_reason.empty()) all.stop_reason = GetString(j, "stopReason");
  }
  if (std::string m = GetString(j, "systemMessage"); !m.empty()) all.messages.push_back(m);
  bool bad = false;
  if (j.contains("decision") && j["decision"].is_string()) {
    Permission p = ParsePermission(j["decision"], &bad);
    if (event == kPreToolUse || event == kPermissionRequest) {
      one.permission = p;
    } else if (p == Permission::kDeny) {
      one.block = true;
    }
    one.reason = GetString(j, "reason");
  }
  if (j.contains("updatedInput")) one.updated = j["updatedInput"];
  auto spec = j.find("hookSpecificOutput");
  if (spec != j.end() && spec->is_object()) {
    if (spec->contains("permissionDecision")) {
      one.permission = ParsePermission((*spec)["permissionDecision"], &bad);
      one.reason = GetString(*spec, "permissionDecisionReason", one.reason);
    }
    if (auto d = spec->find("decision"); d != spec->end() && d->is_object()) {
      one.permission = ParsePermission(d->value("behavior", Json()), &bad);
      one.reason = GetString(*d, "message", one.reason);
      if (d->contains("updatedInput")) one.updated = (*d)["updatedInput"];
    }
    if (spec->contains("updatedInput")) one.updated = (*spec)["updatedInput"];
    if (std::string c = GetString(*spec, "additionalContext"); !c.empty()) {
      one.context.push_back(std::move(c));
    }
  }
  if (one.updated.has_value() && !one.updated->is_object()) return false;
  return !bad;
}

One Judge(std::string_view event, const HookCommand& command, const HookRun& run,
          HookOutcome& all) {
  One one;
  const std::string name = Name(command);
  if (!run.started) {
    one.failure = absl::StrCat(name, " could not start: ", run.error);
  } else if (run.timed_out) {
    one.failure = absl::StrCat(name, " timed out after ", command.timeout_s, " s");
  } else if (!run.exited) {
    one.failure = absl::StrCat(name, " was killed by signal ", run.term_signal);
  } else if (run.exit_code == 2) {
    one.block = true;
    one.permission = Permission::kDeny;
    one.reason = Shown(run.err);
    if (one.reason.empty()) one.reason = absl::StrCat("blocked by the ", name);
  } else if (run.exit_code != 0) {
    one.failure = absl::StrCat(name, " failed (exit ", run.exit_code, ")",
                               run.err.empty() ? "" : ": ", Shown(run.err));
  } else {
    const std::string out = Stripped(run.out);
    if (!out.empty() && out.front() == '{') {
      absl::StatusOr<Json> j = ParseJson(out);
      if (!j.ok() || run.out_cut || !ReadJson(event, *j, one, all)) {
        one.failure = absl::StrCat(name, " printed JSON that is not a hook's answer");
      }
    } else if (!out.empty() && StdoutIsContext(event)) {
      one.context.emplace_back(out);
    } else if (!out.empty() && IsGuardEvent(event)) {
      one.failure = absl::StrCat(name, " printed something that is not JSON");
    }
  }
  return one;
}

int Rank(Permission p) {
  switch (p) {
    case Permission::kDeny:
      return 3;
    case Permission::kAsk:
      return 2;
    case Permission::kAllow:
      return 1;
    default:
      return 0;
  }
}

}  // namespace

bool IsGuardEvent(std::string_view event) {
  return event == kPreToolUse || event == kPermissionRequest;
}

HookOutcome Decide(std::string_view event, const std::vector<HookCommand>& commands,
                   const std::vector<HookRun>& runs) {
  HookOutcome all;
  all.ran = !runs.empty();
  for (size_t i = 0; i < runs.size() && i < commands.size(); ++i) {
    One one = Judge(event, commands[i], runs[i], all);
    if (one.failure.has_value()) {
      all.failures.push_back(std::move(*one.failure));
      continue;
    }
    for (std::string& c : one.context) all.context.push_back(std::move(c));
    if (one.block && !all.block) {
      all.block = true;
      all.reason = one.reason;
    }
    if (one.permission == Permission::kAllow && commands[i].origin == HookOrigin::kUser) {
      all.user_allowed = true;
    }
    if (Rank(one.permission) > Rank(all.permission)) {
      all.permission = one.permission;
      if (!all.block) all.reason = one.reason;
    }
    if (one.permission == Permission::kDeny && all.reason.empty()) all.reason = one.reason;
    // Only an answer that lets the call run may change what it runs with.
    if (one.updated.has_value() && one.permission != Permission::kDeny) {
      all.updated_input = std::move(one.updated);
    }
  }
  if (all.permission == Permission::kDeny) all.block = true;
  return all;
}

}  // namespace agent::daemon::hooks
