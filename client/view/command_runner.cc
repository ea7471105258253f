#include "client/view/command_runner.h"

#include <unistd.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "client/commands/context_commands.h"
#include "client/commands/mcp_command.h"
#include "client/input/custom_commands.h"
#include "client/terminal/terminal_text.h"
#include "client/text/policy_mode.h"
#include "client/text/session_table.h"
#include "client/view/allow_warnings.h"
#include "common/person_answer.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr auto Say = CommandRunner::Outcome::Say;

}  // namespace

CommandRunner::CommandRunner(v1::AgentDaemon::Stub& stub, const ClientOptions& options,
                             Mailbox& mailbox)
    : stub_(stub), o_(options), mailbox_(mailbox), model_(options.model) {}

CommandRunner::~CommandRunner() {
  for (std::thread& t : workers_) t.join();
}

grpc::Status CommandRunner::SendPrompt(const std::string& session_id, const std::string& text,
                                       bool steer, bool* steered) {
  grpc::ClientContext ctx;
  v1::SendPromptRequest req = PromptRequest(session_id, text, o_, model_);
  req.set_expand(true);  // @mentions and custom commands, as a person typing means them
  if (steer) req.set_delivery(v1::PROMPT_DELIVERY_STEER);
  v1::SendPromptResponse resp;
  grpc::Status s = stub_.SendPrompt(&ctx, req, &resp);
  if (steered != nullptr) *steered = s.ok() && resp.steered();
  ShowPromptWarnings(resp, mailbox_, o_.json || !isatty(1));
  return s;
}

grpc::Status CommandRunner::Cancel(const std::string& session_id) {
  grpc::ClientContext ctx;
  v1::CancelRequest req;
  req.set_session_id(session_id);
  req.set_client_name(o_.client_name);
  v1::CancelResponse resp;
  return stub_.Cancel(&ctx, req, &resp);
}

grpc::Status CommandRunner::Approve(const std::string& session_id, const std::string& call_id,
                                    v1::Decision decision, const std::string& reason, bool person,
                                    const std::vector<std::string>& rules) {
  v1::ApproveRequest req;
  for (const std::string& r : rules) req.add_rules(r);
  req.set_session_id(session_id);
  req.set_call_id(call_id);
  req.set_client_name(o_.client_name);
  req.set_decision(decision);
  if (!reason.empty()) req.set_reason(reason);
  grpc::ClientContext ctx;
  if (person) ctx.AddMetadata(kPersonAnswerKey, kPersonAnswerValue);
  v1::ApproveResponse resp;
  return stub_.Approve(&ctx, req, &resp);
}

CommandRunner::Outcome CommandRunner::Run(const SlashCommand& c, TurnState& turn,
                                          const Renderer& r) {
  if (c.kind == SlashCommand::kModel && c.argument.empty()) return ListModels(turn, r);
  if (std::string missing = MissingArgument(c); !missing.empty()) {
    return Say(r.ErrorLine(missing));
  }
  switch (c.kind) {
    case SlashCommand::kHelp:
      return Say(SlashHelp() + CustomCommandsHelp(FetchCustomCommands(stub_, turn.workdir)));
    case SlashCommand::kStatus:
      return Say(r.StatusLine(turn.Status(o_.client_name, o_.read_only)) +
                 (turn.sandbox.empty() ? "" : r.Notice("sandbox: " + PrintableLine(turn.sandbox))) +
                 r.Notice(FetchStatusExtra(stub_, turn.session_id)));
    case SlashCommand::kContext:
      return Say(r.Notice(FetchContext(stub_, turn.session_id)));
    case SlashCommand::kDetach:
      return {r.Notice(absl::StrCat("detached; the session goes on. Come back with: agent attach ",
                                    Short(turn.session_id))),
              "", true};
    case SlashCommand::kCompact: {
      std::string id = turn.session_id;
      workers_.emplace_back([this, id] {
        grpc::ClientContext ctx;
        v1::CompactRequest req;
        req.set_session_id(id);
        v1::CompactResponse resp;
        grpc::Status s = stub_.Compact(&ctx, req, &resp);
        if (!s.ok()) mailbox_.PostNotice(s.error_message(), true);
      });
      return Say(r.Notice("compacting…"));
    }
    case SlashCommand::kClear:
      return NewSession(turn, r);
    case SlashCommand::kFork:
      return Fork(turn, r);
    case SlashCommand::kSessions:
      return ListSessions(turn, r);
    case SlashCommand::kModel:
    case SlashCommand::kAllow:
    case SlashCommand::kMode:
      return SetPolicy(c, turn, r);
    case SlashCommand::kUndo:  // the view's CheckpointDialog runs these
    case SlashCommand::kRewind:
    case SlashCommand::kDiff:
    case SlashCommand::kTrust:  // and its TrustDialog
      break;
    case SlashCommand::kMcp:
      return Say(McpServersText(stub_, turn.workdir));
    case SlashCommand::kLast:
      return Say(r.WholeOutput(turn.last_tool, turn.last_output));
    case SlashCommand::kUnknown:
      break;
  }
  return Say(r.ErrorLine("unknown command /" + c.name + "; /help lists them"));
}

bool CommandRunner::IsCustom(const SlashCommand& c, const std::string& workdir) {
  return IsCustomCommand(stub_, workdir, c);
}

CommandRunner::Outcome CommandRunner::NewSession(TurnState& turn, const Renderer& r) {
  auto s = CreateSessionHere(stub_, o_, ModeFromFlags(o_.mode_flags(), v1::POLICY_MODE_ASK));
  if (!s.ok()) return Say(r.ErrorLine(std::string(s.status().message())));
  std::string old = turn.session_id;
  turn.SwitchedTo(s->id());
  turn.prompt_tokens = -1;
  return {r.Notice(absl::StrCat("new session ", Short(s->id()),
                                "; the previous one stays: agent attach ", Short(old))),
          s->id()};
}

CommandRunner::Outcome CommandRunner::Fork(TurnState& turn, const Renderer& r) {
  grpc::ClientContext ctx;
  v1::ForkSessionRequest req;
  req.set_session_id(turn.session_id);
  v1::Session fork;
  grpc::Status s = stub_.ForkSession(&ctx, req, &fork);
  if (!s.ok()) return Say(r.ErrorLine(s.error_message()));
  std::string old = turn.session_id;
  turn.SwitchedTo(fork.id());
  return {
      r.Notice(absl::StrCat("forked ", Short(old), " → ", Short(fork.id()),
                            "; you are in the fork (the original: agent attach ", Short(old), ")")),
      fork.id()};
}

CommandRunner::Outcome CommandRunner::ListSessions(const TurnState& turn, const Renderer& r) {
  grpc::ClientContext ctx;
  v1::ListSessionsRequest req;
  req.set_workdir(turn.workdir);
  v1::ListSessionsResponse resp;
  grpc::Status s = stub_.ListSessions(&ctx, req, &resp);
  if (!s.ok()) return Say(r.ErrorLine(s.error_message()));
  std::string out;
  for (const v1::Session& x : resp.sessions()) {
    std::string mark = x.id() == turn.session_id ? "* " : "  ";
    absl::StrAppend(
        &out, mark, Short(x.id()), "  ", StateName(x.state()), "  ", x.message_count(), " msgs  ",
        x.title(),
        x.attached_clients() > 0 ? absl::StrCat("  (", x.attached_clients(), " attached)") : "",
        "\n");
  }
  return Say(out + r.Notice("switch with: agent attach ID"));
}

CommandRunner::Outcome CommandRunner::SetPolicy(const SlashCommand& c, TurnState& turn,
                                                const Renderer& r) {
  grpc::ClientContext ctx;
  v1::SetPolicyRequest req;
  req.set_session_id(turn.session_id);
  req.set_client_name(o_.client_name);
  if (c.kind == SlashCommand::kModel) {
    req.set_model(c.argument);
  } else if (c.kind == SlashCommand::kMode) {
    std::optional<v1::PolicyMode> mode = ParsePolicyMode(c.argument);
    if (!mode.has_value()) return Say(r.ErrorLine("/mode: ask, auto, edits, yes or read-only"));
    req.set_mode(*mode);
  } else {
    req.add_add_allow(c.argument);
  }
  v1::SetPolicyResponse resp;
  grpc::Status s = stub_.SetPolicy(&ctx, req, &resp);
  if (!s.ok()) return Say(r.ErrorLine(s.error_message()));
  if (c.kind == SlashCommand::kModel) {
    turn.model = c.argument;
    model_ = c.argument;  // else the next prompt's AGENT_MODEL would switch it back
    return Say(r.Notice("model " + c.argument + " from the next request"));
  }
  // The daemon's PolicyChanged event shows the new mode to every client, this one included.
  if (c.kind == SlashCommand::kMode) return Say("");
  std::string said = r.Notice(
      "recorded for you in this project (in your state directory, not the checkout): "
      "allow " +
      Visible(c.argument));
  for (const std::string& w : AllowRuleWarnings(c.argument)) said += r.Notice("warning: " + w);
  return Say(said);
}

CommandRunner::Outcome CommandRunner::ListModels(const TurnState& turn, const Renderer& r) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::ListModelsRequest req;
  req.set_session_id(turn.session_id);
  *req.mutable_model() = ModelFromEnv(model_);
  v1::ListModelsResponse resp;
  grpc::Status s = stub_.ListModels(&ctx, req, &resp);
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return Say(r.ErrorLine("this agentd cannot list models (restart it: agent daemon stop)"));
  }
  if (!s.ok()) return Say(r.ErrorLine("cannot list the models: " + s.error_message()));
  if (resp.models().empty()) {
    return Say(r.Notice(resp.message().empty()
                            ? "the provider lists no models; set one with /model NAME"
                            : "no models listed: " + resp.message()));
  }
  // The model this client's next prompt asks for, else the session's.
  std::string current = req.model().model().empty() ? turn.model : req.model().model();
  std::string out;
  for (const std::string& m : resp.models()) {
    absl::StrAppend(&out, m == current ? "* " : "  ", m, "\n");
  }
  return Say(out + r.Notice("switch with: /model NAME"));
}

}  // namespace agent::client
