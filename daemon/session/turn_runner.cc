// TurnRunner (turn_runner.h): the turn thread and what runs around the state's changes: hooks,
// the tools' context, the call guard. Compaction is in compaction.cc.
#include "daemon/session/turn_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/session/events.h"
#include "daemon/session/turn.h"
#include "daemon/tools/ask_user.h"
#include "daemon/tools/present_plan.h"
#include "daemon/tools/tool_filter.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

constexpr const char* kIdleMessage = "agent is waiting for your input";

// The tools a session in plan mode offers, besides present_plan: bash runs read-only inside
// the sandbox (ToolContext::read_only).
constexpr std::string_view kPlanModeTools[] = {
    "read_file", "list_dir", "find_files", "search", "update_plan", tools::kAskUserTool, "bash"};

// How the person may go on from a plan (present_plan), in the order shown.
struct PlanChoice {
  const char* label;
  v1::PolicyMode mode;
  const char* name;  // what the model is told
};
constexpr PlanChoice kPlanChoices[] = {
    {"Go on in auto mode (sandboxed commands and edits run without asking)", v1::POLICY_MODE_AUTO,
     "auto"},
    {"Go on, accepting edits (commands ask first)", v1::POLICY_MODE_ACCEPT_EDITS, "accept-edits"},
    {"Go on, asking before each change", v1::POLICY_MODE_ASK, "ask"},
    {"Keep planning", v1::POLICY_MODE_PLAN, "plan"},
};

// The model's question as every client is asked it (PendingApproval.question).
v1::PendingApproval QuestionFor(const std::string& call_id, const std::string& tool,
                                const std::string& summary, const std::string& text,
                                const std::vector<std::string>& options) {
  v1::PendingApproval a;
  a.set_call_id(call_id);
  a.set_tool(tool);
  a.set_summary(summary);
  a.mutable_question()->set_text(text);
  for (const std::string& o : options) a.mutable_question()->add_options(o);
  return a;
}

// A question is answered by an allow with words (an option's, or the person's own).
bool Answered(const ApprovalGate::Answer& a) {
  return a.decision != v1::DECISION_DENY && !a.reason.empty();
}

}  // namespace

TurnRunner::TurnRunner(Parts parts)
    : state_(*parts.state),
      deps_(*parts.deps),
      hooks_(*parts.hooks),
      rules_(*parts.rules),
      files_(*parts.files),
      jobs_(*parts.jobs),
      editor_text_(*parts.editor_text),
      checkpointer_(std::move(parts.checkpointer)),
      set_mode_(std::move(parts.set_mode)),
      model_(deps_.make_model_client()),
      guard_(std::make_unique<CallGuard>(this, state_.workdir(), &rules_, &hooks_,
                                         deps_.sandbox != nullptr && deps_.sandbox->Confines())) {}

void TurnRunner::Main() {
  checkpointer_();  // made (its record read) before any lock is taken
  // May read the rule files.
  if (!BeginNextTurn(rules_.UntrustedRules())) return;
  for (;;) {
    SessionState::TurnStart start = state_.TakeTurnStart();
    std::string error;
    v1::TurnOutcome outcome = v1::TURN_OUTCOME_ERROR;
    if (!start.blocked.empty()) {
      error = "a hook blocked the prompt: " + start.blocked;
    } else {
      outcome = Turn(this, model_.get(), state_.cancelled(), start.max_steps).Run(&error);
      for (int n = 0; outcome == v1::TURN_OUTCOME_DONE && ContinueAfterStop(n); ++n) {
        // Sent back to work.
        outcome = Turn(this, model_.get(), state_.cancelled(), start.max_steps).Run(&error);
      }
    }
    // Before TurnEnded: an Undo that follows it finds the turn's checkpoint.
    std::vector<std::string> notices = checkpointer_().EndTurn(deps_.clock->NowMs());
    std::vector<std::string> untrusted = rules_.UntrustedRules();  // for the next turn
    // The turn's messages are written here, before TurnEnded says how it went.
    state_.SealTurn(outcome);
    if (!state_.EndTurn(outcome, std::move(error), std::move(notices))) return;
    if (!BeginNextTurn(std::move(untrusted))) return;
  }
}

hooks::PromptHooks TurnRunner::PromptHooksFor(const std::string& text) {
  hooks::PromptHooks hooked = hooks_.BeforePrompt(text);
  if (!hooked.context.empty()) {
    hooked.context = absl::StrCat("\n\n<hook-context>\n", hooked.context, "\n</hook-context>");
  }
  return hooked;
}

bool TurnRunner::BeginNextTurn(std::vector<std::string> untrusted_rules) {
  std::optional<std::string> text = state_.NextPromptText();
  if (!text.has_value()) return false;
  hooks::PromptHooks hooked = PromptHooksFor(*text);
  checkpoints::Checkpointer& checkpointer = checkpointer_();
  const int64_t now = deps_.clock->NowMs();
  return state_.BeginTurn(std::move(untrusted_rules), std::move(hooked), files_,
                          [&](int turn, int at_message, const std::string& prompt) {
                            checkpointer.BeginTurn(turn, at_message, prompt, now);
                          });
}

void TurnRunner::LandSteers() {
  std::deque<QueuedPrompt> steers = state_.TakeSteers();
  if (steers.empty()) return;
  // A steer is a prompt: the same UserPromptSubmit hooks, run without the lock.
  std::vector<hooks::PromptHooks> hooked;
  for (const QueuedPrompt& p : steers) hooked.push_back(PromptHooksFor(p.text));
  state_.LandSteers(std::move(steers), hooked, files_);
}

bool TurnRunner::ContinueAfterStop(int continued) {
  std::optional<std::string> reason = hooks_.OnStop(continued);
  if (!reason.has_value()) {
    hooks_.Notify("idle_prompt", kIdleMessage);
    return false;
  }
  return state_.SendBackToWork(*reason);
}

std::shared_ptr<const tools::ToolRegistry> TurnRunner::StepTools() {
  std::shared_ptr<const tools::ToolRegistry> tools;
  if (deps_.tools_for) {
    tools = deps_.tools_for(state_.workdir(), state_.id(), state_.cancelled(),
                            [this](const std::string& m) { state_.Error(m); });
  }
  if (!tools) tools = std::shared_ptr<const tools::ToolRegistry>(deps_.tools, [](auto*) {});
  if (state_.mode() != v1::POLICY_MODE_PLAN) return tools;
  // Plan mode offers what reads, plans and asks, and the hand-over; the policy refuses the
  // rest anyway (policy/escalation.cc), so a model that calls them is told why.
  return tools::FilterTools(
      std::move(tools),
      [](std::string_view name) {
        for (std::string_view kept : kPlanModeTools) {
          if (name == kept) return true;
        }
        return false;
      },
      tools::NewPresentPlanTool());
}

// ---- Tool calls ---------------------------------------------------------------------------------

void TurnRunner::CallReady(const llm::ToolCall& call) {
  state_.Publish(events::ToolCallReady(call));
}

void TurnRunner::Tell(std::string text, bool error) {
  if (error) {
    state_.Error(std::move(text));
  } else {
    state_.Notice(std::move(text));
  }
}

tools::ToolContext TurnRunner::MakeToolContext(const std::string& call_id) {
  checkpointer_().BeforeTool();  // no tool touches a file before the turn's checkpoint exists
  tools::ToolContext ctx;
  ctx.call_id = call_id;
  ctx.workdir = state_.workdir();
  ctx.files = &files_;
  ctx.cancelled = state_.cancelled();
  ctx.sandbox = deps_.sandbox.get();
  ctx.jobs = &jobs_;
  SessionState::ToolSettings settings = state_.tool_settings();
  ctx.default_timeout_s = settings.bash_timeout_s;
  ctx.env = std::move(settings.env);
  // Checked again at each use: the directory may be gone, and a loaded meta file is
  // repository content.
  ctx.cwd = DirectoryInside(state_.workdir(), settings.cwd);
  ctx.on_output = [this, call_id](std::string_view chunk, bool is_stderr) {
    state_.Publish(events::ToolOutput(call_id, chunk, is_stderr));
  };
  ctx.read_only = state_.mode() == v1::POLICY_MODE_PLAN;
  ctx.present_plan = [this, call_id](const std::string& plan) {
    return PresentPlan(call_id, plan);
  };
  ctx.ask_user = [this, call_id](const std::string& question,
                                 const std::vector<std::string>& options) {
    return AskUser(call_id, question, options);
  };
  ctx.editor_text = [this](const std::string& path) -> std::optional<std::string> {
    // To the first editor attached, directly: the question is not session history.
    auto send = [this](const v1::Event& e) { return state_.AskEditor(e); };
    return editor_text_.Ask(path, send, state_.cancelled());
  };
  return ctx;
}

tools::QuestionAnswer TurnRunner::AskUser(const std::string& call_id, const std::string& question,
                                          const std::vector<std::string>& options) {
  const v1::PendingApproval a =
      QuestionFor(call_id, tools::kAskUserTool, question, question, options);
  hooks_.Notify("elicitation_dialog", "agent has a question for you");
  std::optional<ApprovalGate::Answer> answer = state_.Ask(a);
  tools::QuestionAnswer out;
  if (!answer.has_value()) return out;  // cancelled
  out.client = answer->client;
  out.text = answer->reason;
  out.kind = Answered(*answer) ? tools::QuestionAnswer::Kind::kAnswered
                               : tools::QuestionAnswer::Kind::kDeclined;
  return out;
}

tools::ToolOutcome TurnRunner::PresentPlan(const std::string& call_id, const std::string& plan) {
  if (state_.mode() != v1::POLICY_MODE_PLAN) {
    return {
        "present_plan: the session is not planning any more (its mode changed); go on with "
        "the work.",
        true};
  }
  std::vector<std::string> labels;
  for (const PlanChoice& c : kPlanChoices) labels.emplace_back(c.label);
  v1::PendingApproval a = QuestionFor(call_id, tools::kPresentPlanTool, "the plan", plan, labels);
  // Going on may widen what runs unasked (auto mode): a person's answer, never a script's.
  a.set_requires_person(true);
  a.set_person_reason("the plan is handed over, and going on changes the session's mode");
  state_.ShowPlan(plan);  // the session's plan, as every client shows one
  hooks_.Notify("elicitation_dialog", "agent has a plan for you to review");
  std::optional<ApprovalGate::Answer> answer = state_.Ask(a);
  if (!answer.has_value()) return {"The hand-over was cancelled before anyone answered.", true};
  if (!Answered(*answer)) {
    return {absl::StrCat("Nobody chose how to go on",
                         answer->reason.empty() ? "" : absl::StrCat(" (", answer->reason, ")"),
                         ". Stay in plan mode: end your turn unless there is more to plan."),
            true};
  }
  for (const PlanChoice& c : kPlanChoices) {
    if (answer->reason != c.label) continue;
    if (c.mode == v1::POLICY_MODE_PLAN) {
      return {
          "The user wants to keep planning: ask what is unclear, or refine the plan and hand "
          "it over again.",
          false};
    }
    set_mode_(c.mode, answer->client);
    return {absl::StrCat("The user approved the plan; the session is now in ", c.name,
                         " mode. Carry the plan out."),
            false};
  }
  return {absl::StrCat("The user wants to keep planning, and says: ", answer->reason), false};
}

}  // namespace agent::daemon
