// CommandRunner: the daemon calls the session view makes for the attached session (send a
// prompt, cancel, answer an approval) and the slash commands typed in the interactive
// client, most of which are one such call. The view stays with events, keys and the
// screen; what a command did comes back as an Outcome for the view to show or act on.
// Calls are synchronous on the view's thread, except /compact (as long as a summary
// request): it runs on a worker that posts a failure to the mailbox. Not thread-safe.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "agent/v1/agent.grpc.pb.h"
#include "client/commands/session_calls.h"
#include "client/input/slash_commands.h"
#include "client/link/event_stream.h"
#include "client/view/renderer.h"
#include "client/view/turn_state.h"

namespace agent::client {

class CommandRunner {
 public:
  CommandRunner(agent::v1::AgentDaemon::Stub& stub, const ClientOptions& options, Mailbox& mailbox);
  // Waits for a /compact still running.
  ~CommandRunner();
  CommandRunner(const CommandRunner&) = delete;
  CommandRunner& operator=(const CommandRunner&) = delete;

  // With `steer`, the text goes to the running turn (PROMPT_DELIVERY_STEER); `*steered` says
  // whether it did (false: no turn ran, it was queued as a prompt).
  grpc::Status SendPrompt(const std::string& session_id, const std::string& text,
                          bool steer = false, bool* steered = nullptr);
  grpc::Status Cancel(const std::string& session_id);
  // FAILED_PRECONDITION: another client answered first. `person`: a person typed the answer
  // (only then may the daemon allow a call that requires a person).
  // `rules`: for ALLOW_ALWAYS, which of the proposed rules to record (empty: proposed_rules).
  grpc::Status Approve(const std::string& session_id, const std::string& call_id,
                       agent::v1::Decision decision, const std::string& reason = "",
                       bool person = false, const std::vector<std::string>& rules = {});

  struct Outcome {
    std::string text;       // committed text to show (a notice, a list, an error line)
    std::string attach_to;  // not empty: the view attaches to this session, without history
    bool detach = false;    // the view leaves, with `text` as the last line
    // Only text to show.
    static Outcome Say(std::string text) { return {std::move(text), "", false}; }
  };
  // A session id as the view's lines name it: its first 8 characters.
  static std::string Short(const std::string& id) { return id.substr(0, 8); }
  // Runs `c` for the session in `turn` (whose model, tokens and echoes it updates when the
  // command changes them), formatting with `renderer`.
  Outcome Run(const SlashCommand& c, TurnState& turn, const Renderer& renderer);
  // A `/name` the daemon expands as a custom command (client/input/custom_commands.h).
  bool IsCustom(const SlashCommand& c, const std::string& workdir);

 private:
  Outcome NewSession(TurnState& turn, const Renderer& r);
  Outcome Fork(TurnState& turn, const Renderer& r);
  Outcome ListSessions(const TurnState& turn, const Renderer& r);
  Outcome SetPolicy(const SlashCommand& c, TurnState& turn, const Renderer& r);
  // /model with no argument: the provider's models (ListModels).
  Outcome ListModels(const TurnState& turn, const Renderer& r);

  agent::v1::AgentDaemon::Stub& stub_;
  const ClientOptions& o_;
  Mailbox& mailbox_;
  std::vector<std::thread> workers_;
  std::string model_;  // --model, then the last /model: sent with every prompt
};

}  // namespace agent::client
