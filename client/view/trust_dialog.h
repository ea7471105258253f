// TrustDialog: /trust in the interactive client, the question `agent trust` asks on a terminal
// (trust_command.h). /trust lists the allow rules of the project's .agent/settings.json nobody
// trusted yet and asks "trust these rules for this project? [y/N]"; the next line typed
// answers (only y or yes trusts) and exactly the rules shown are trusted. Calls are synchronous
// on the view's thread. Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/v1/agent.grpc.pb.h"
#include "client/input/slash_commands.h"
#include "client/view/command_runner.h"
#include "client/view/renderer.h"

namespace agent::client {

class TrustDialog {
 public:
  using Outcome = CommandRunner::Outcome;

  static bool Handles(const SlashCommand& c) { return c.kind == SlashCommand::kTrust; }

  // Lists the untrusted rules of the project in `workdir` and asks, or says there are none.
  Outcome Start(agent::v1::AgentDaemon::Stub& stub, const std::string& workdir, const Renderer& r);
  // A question is waiting for the next line typed.
  bool Asking() const { return !shown_.empty(); }
  // `line` answers the question: y or yes trusts the rules shown.
  Outcome Answer(agent::v1::AgentDaemon::Stub& stub, const std::string& line, const Renderer& r);

 private:
  std::string workdir_;
  std::vector<std::string> shown_;  // the rules listed, sent back exactly
};

}  // namespace agent::client
