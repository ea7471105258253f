#include "daemon/hooks/session_hooks.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/v1/agent.pb.h"
#include "common/paths.h"
#include "common/tool_env.h"

namespace agent::daemon::hooks {
namespace {

namespace v1 = agent::v1;

// Notification hooks running at once per session; more are dropped (and said so).
constexpr size_t kMaxNotifiers = 8;
// What a PostToolUse note or a prompt's context may add to the transcript.
constexpr size_t kMaxContext = 16 << 10;

std::string Capped(std::string text) {
  if (text.size() > kMaxContext) text = text.substr(0, kMaxContext) + "\n[hook output cut]";
  return text;
}

std::vector<std::string> HookEnv(const HookContext& ctx, const SessionHooks::Info& info) {
  std::vector<std::string> env = ctx.env.empty() ? MinimalToolEnvironment() : ctx.env;
  // Claude Code's scripts find the project through CLAUDE_PROJECT_DIR; ours too.
  env.push_back("AGENT_PROJECT_DIR=" + info.project);
  env.push_back("CLAUDE_PROJECT_DIR=" + info.project);
  env.push_back("AGENT_SESSION_ID=" + info.session_id);
  return env;
}

}  // namespace

std::string PermissionModeName(int policy_mode) {
  switch (policy_mode) {
    case v1::POLICY_MODE_YES:
      return "bypassPermissions";
    case v1::POLICY_MODE_PLAN:
      return "plan";
    case v1::POLICY_MODE_READ_ONLY:
      return "readOnly";  // ours: every gated call refused, nobody asked
    case v1::POLICY_MODE_DENY_UNRULED:
      return "dontAsk";
    case v1::POLICY_MODE_ACCEPT_EDITS:
      return "acceptEdits";
    case v1::POLICY_MODE_AUTO:
      return "auto";  // ours: commands run confined without asking (README "Sandbox")
    default:
      return "default";
  }
}

SessionHooks::SessionHooks(Info info, HookFiles files, Context context, Report report)
    : info_(std::move(info)),
      files_(std::move(files)),
      context_(std::move(context)),
      report_(std::move(report)) {}

SessionHooks::~SessionHooks() {
  std::vector<Notifier> left;
  {
    MutexLock l(&mu_);
    left.swap(notifiers_);
  }
  for (Notifier& n : left) n.thread.join();
}

Json SessionHooks::BaseInput(std::string_view event, const HookContext& ctx) const {
  return Json{{"session_id", info_.session_id},
              {"transcript_path", info_.transcript_path},
              {"cwd", ctx.cwd.empty() ? info_.project : ctx.cwd},
              {"permission_mode", ctx.permission_mode},
              {"hook_event_name", std::string(event)}};
}

HookOutcome SessionHooks::Fire(std::string_view event, std::string_view subject, Json input,
                               const HookContext& ctx, bool* unreadable) {
  HookSet set = LoadHooks(files_);
  if (!set.problems.empty()) {
    if (unreadable != nullptr) *unreadable = true;
    // Told at each guarded event: a person must fix the file for hooks to run again.
    if (IsGuardEvent(event)) {
      report_(absl::StrCat("hooks cannot be read: ", absl::StrJoin(set.problems, "; ")), true);
    }
  }
  const std::string cwd = ctx.cwd.empty() ? info_.project : ctx.cwd;
  const bool confines = info_.sandbox != nullptr && info_.sandbox->Confines();
  std::vector<HookCommand> chosen;
  bool unconfinable = false;
  for (HookCommand& c : set.commands) {
    if (c.event != event || !MatcherSelects(c.matcher, subject)) continue;
    if (c.origin == HookOrigin::kProject && !confines) {
      unconfinable = true;
      continue;
    }
    chosen.push_back(std::move(c));
  }
  if (unconfinable) TellUnconfinable();
  if (chosen.empty()) return HookOutcome{};
  Json base = BaseInput(event, ctx);
  for (auto& [k, v] : input.items()) base[k] = v;
  const std::string text = DumpJson(base);
  std::vector<HookProcess> procs;
  // A confined hook is a confined command: git's control files are protected while it runs
  // and a `.git` it made is set aside after (sandbox/git_control.h).
  std::optional<sandbox::GitEntries> git;
  for (const HookCommand& c : chosen) {
    HookProcess p{c.command, std::chrono::seconds(c.timeout_s), {}};
    if (c.origin == HookOrigin::kProject) {
      if (!git.has_value()) git = sandbox::FindGitEntries(info_.project);
      sandbox::SandboxTarget target{info_.project, cwd, /*own_session=*/true};
      target.git = &*git;
      p.confine = info_.sandbox->Options(target, false);
    }
    procs.push_back(std::move(p));
  }
  std::vector<HookRun> runs = RunHooks(procs, text, cwd, HookEnv(ctx, info_));
  if (git.has_value() && info_.sandbox->policy().mode == sandbox::SandboxMode::kWorkspaceWrite) {
    sandbox::SetAside set_aside = sandbox::SetAsideNewGitEntries(info_.project, *git);
    set_aside.incomplete = false;  // said by the commands' results, not at every hook
    const std::string note = sandbox::SetAsideNote(set_aside);
    if (!note.empty()) report_(absl::StrCat("a project hook: ", note), true);
  }
  HookOutcome out = Decide(event, chosen, runs);
  for (const std::string& f : out.failures) report_(f, true);
  for (const std::string& m : out.messages) report_(m, false);
  return out;
}

void SessionHooks::TellUnconfinable() {
  {
    MutexLock l(&mu_);
    if (unconfinable_told_) return;
    unconfinable_told_ = true;
  }
  report_(absl::StrCat("the project's own hooks (", ProjectSettingsPath(info_.project),
                       ") do not run: they run only inside the sandbox, and ",
                       info_.sandbox == nullptr ? "there is none here"
                                                : sandbox::SandboxNotice(info_.sandbox.get())),
          false);
}

void SessionHooks::AnnounceUntrusted() {
  std::vector<std::string> untrusted;
  for (const HookCommand& c : LoadHooks(files_).untrusted) untrusted.push_back(c.Display());
  {
    MutexLock l(&mu_);
    if (untrusted == untrusted_told_) return;
    untrusted_told_ = untrusted;
  }
  if (untrusted.empty()) return;
  report_(absl::StrCat(
              ProjectSettingsPath(info_.project), " has ", untrusted.size(),
              " hook(s) you have not trusted for this project: ", absl::StrJoin(untrusted, "; "),
              ". They do not run; `agent trust` (or /trust) trusts them."),
          false);
}

PromptHooks SessionHooks::BeforePrompt(const std::string& prompt) {
  AnnounceUntrusted();
  const HookContext ctx = context_();
  PromptHooks result;
  std::vector<std::string> context;
  bool first;
  {
    MutexLock l(&mu_);
    first = !started_;
    started_ = true;
  }
  if (first) {
    const char* source = info_.resumed ? "resume" : "startup";
    HookOutcome start = Fire(kSessionStart, source, Json{{"source", source}}, ctx);
    context = std::move(start.context);
  }
  HookOutcome submit = Fire(kUserPromptSubmit, "", Json{{"prompt", prompt}}, ctx);
  if (submit.block || submit.stop) {
    result.blocked = true;
    result.reason = submit.block ? submit.reason : submit.stop_reason;
    if (result.reason.empty()) result.reason = "a UserPromptSubmit hook blocked the prompt";
    return result;
  }
  for (std::string& c : submit.context) context.push_back(std::move(c));
  result.context = Capped(absl::StrJoin(context, "\n\n"));
  return result;
}

ToolGuard SessionHooks::Guard(std::string_view event, const std::string& tool, const Json& input,
                              const std::string& call_id) {
  const HookContext ctx = context_();
  bool unreadable = false;
  HookOutcome o = Fire(event, tool,
                       Json{{"tool_name", tool},
                            {"tool_input", input},
                            {"tool_call_id", call_id},
                            {"tool_use_id", call_id}},
                       ctx, &unreadable);
  ToolGuard g;
  g.permission = o.permission;
  g.user_allow = o.permission == Permission::kAllow && o.user_allowed;
  g.reason = o.reason;
  g.updated_input = std::move(o.updated_input);
  if (o.permission == Permission::kDeny) return g;  // a failure beside a deny changes nothing
  if (!o.failures.empty() || unreadable) {
    g.failed = true;
    g.failure = o.failures.empty() ? "the hooks cannot be read" : absl::StrJoin(o.failures, "; ");
    g.updated_input.reset();
  }
  return g;
}

ToolGuard SessionHooks::BeforeTool(const std::string& tool, const Json& input,
                                   const std::string& call_id) {
  return Guard(kPreToolUse, tool, input, call_id);
}

ToolGuard SessionHooks::OnPermissionRequest(const std::string& tool, const Json& input,
                                            const std::string& call_id) {
  return Guard(kPermissionRequest, tool, input, call_id);
}

std::string SessionHooks::AfterTool(const std::string& tool, const Json& input,
                                    const std::string& call_id, const std::string& result,
                                    bool is_error) {
  const HookContext ctx = context_();
  HookOutcome o = Fire(kPostToolUse, tool,
                       Json{{"tool_name", tool},
                            {"tool_input", input},
                            {"tool_call_id", call_id},
                            {"tool_use_id", call_id},
                            {"tool_response", Json{{"content", result}, {"is_error", is_error}}}},
                       ctx);
  std::vector<std::string> notes = std::move(o.context);
  if (o.block && !o.reason.empty()) notes.insert(notes.begin(), o.reason);
  return Capped(absl::StrJoin(notes, "\n"));
}

std::optional<std::string> SessionHooks::OnStop(int continued) {
  const HookContext ctx = context_();
  const std::string_view event = info_.subagent ? kSubagentStop : kStop;
  HookSet limits = LoadHooks(HookFiles{files_.user_config, "", ""});
  HookOutcome o = Fire(event, "", Json{{"stop_hook_active", continued > 0}}, ctx);
  if (!o.block || o.stop) return std::nullopt;
  if (continued >= limits.stop_limit) {
    report_(absl::StrCat(std::string(event), " hooks sent the model back ", continued,
                         " time(s) this turn, the limit (hooks_stop_limit): the turn ends"),
            false);
    return std::nullopt;
  }
  return o.reason.empty() ? std::string("A Stop hook asks you to continue.") : o.reason;
}

void SessionHooks::Notify(std::string type, std::string message) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  MutexLock l(&mu_);
  for (auto it = notifiers_.begin(); it != notifiers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = notifiers_.erase(it);
    } else {
      ++it;
    }
  }
  if (ended_ || notifiers_.size() >= kMaxNotifiers) return;
  Json input{{"message", message}, {"notification_type", type}};
  try {
    notifiers_.push_back({std::thread([this, type, input, done] {
                            Fire(kNotification, type, input, context_());
                            *done = true;
                          }),
                          done});
  } catch (const std::system_error&) {
    // Out of threads: this notification is lost, the session goes on.
  }
}

void SessionHooks::PreCompact(bool manual) {
  const char* trigger = manual ? "manual" : "auto";
  Fire(kPreCompact, trigger, Json{{"trigger", trigger}, {"custom_instructions", ""}}, context_());
}

void SessionHooks::End(const std::string& reason) {
  bool fire;
  std::vector<Notifier> left;
  {
    MutexLock l(&mu_);
    fire = started_ && !ended_;
    ended_ = true;
    left.swap(notifiers_);
  }
  for (Notifier& n : left) n.thread.join();
  if (fire) Fire(kSessionEnd, reason, Json{{"reason", reason}}, context_());
}

}  // namespace agent::daemon::hooks
