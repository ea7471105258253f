#include "client/commands/steer_command.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "client/commands/cli.h"
#include "client/commands/session_calls.h"
#include "client/text/checkpoint_text.h"
#include "common/protocol.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr auto kCallDeadline = std::chrono::seconds(30);

// The daemon's protocol version (DaemonStatus); 0 when it does not say.
int DaemonProtocol(v1::AgentDaemon::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::DaemonStatusRequest req;
  v1::DaemonStatusResponse resp;
  if (!stub.DaemonStatus(&ctx, req, &resp).ok()) return 0;
  return resp.protocol_version();
}

}  // namespace

int RunSteerSubcommand(int argc, char** argv) {
  std::string id;
  std::string text;
  CLI::App app{"Send text to a session's running turn: the model reads it at its next step."};
  app.name("agent steer");
  app.add_option("id", id, "session id or unique prefix (default: the newest here)");
  app.add_option("text", text, "what the model should know or do now")->required();
  ClientOptions options;
  // With one word it is the text: `agent steer "stop, use the v2 API"`.
  if (std::optional<int> code = ParseSubcommand(app, argc, argv, &options)) return *code;
  if (text.empty() && !id.empty()) std::swap(id, text);
  Connection daemon = ConnectOrExit(/*autostart=*/false);
  if (const int version = DaemonProtocol(*daemon.stub); version < kProtocolVersion) {
    ExitWithoutTeardown(Complain(absl::StrCat(
        "the running agentd speaks protocol ", version,
        " and cannot steer (it would queue the text): restart it with `agent daemon stop`")));
  }
  absl::StatusOr<std::string> full = ResolveSession(*daemon.stub, id, options.project.root);
  if (!full.ok()) ExitWithoutTeardown(Complain(TerminalSafe(std::string(full.status().message()))));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::SendPromptRequest req = PromptRequest(*full, text, options, options.model);
  req.set_expand(true);
  req.set_delivery(v1::PROMPT_DELIVERY_STEER);
  v1::SendPromptResponse resp;
  grpc::Status st = daemon.stub->SendPrompt(&ctx, req, &resp);
  if (!st.ok()) ExitWithoutTeardown(Complain(TerminalSafe(st.error_message())));
  for (const std::string& w : resp.warnings()) std::fprintf(stderr, "agent: %s\n", w.c_str());
  std::printf("%s\n", resp.steered() ? "steered: the model reads it at its next step"
                                     : "no turn was running: sent as a prompt");
  std::fflush(stdout);
  ExitWithoutTeardown(kExitDone);
}

}  // namespace agent::client
