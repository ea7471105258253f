// CheckpointDialog: /undo, /rewind and /diff in the interactive client. /diff is one call;
// /undo and /rewind ask questions, answered by the next line typed in the editor:
//   /undo [N]  a dry run lists the files (those changed since the turn marked), then
//              "restore? [y/N]"; if some were changed since, "overwrite those too? [y/N]";
//              then Undo (without overwrite the daemon keeps those files).
//   /rewind    the session's prompts, numbered; the number picks one; if turns after it
//              changed files, "restore the files too? [y/N]"; then ForkSession at that
//              prompt, and the view switches to the fork (the old session stays).
// Every answer but y/yes is no (Enter alone too); a question is dropped when the view
// switches session. Calls are synchronous on the view's thread. Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/v1/agent.grpc.pb.h"
#include "client/input/slash_commands.h"
#include "client/text/checkpoint_text.h"
#include "client/view/command_runner.h"
#include "client/view/renderer.h"
#include "client/view/turn_state.h"

namespace agent::client {

class CheckpointDialog {
 public:
  using Outcome = CommandRunner::Outcome;

  // True for the commands this dialog runs.
  static bool Handles(const SlashCommand& c);

  // Runs /undo, /rewind or /diff for the session in `turn`; `color` colours the diff.
  Outcome Start(agent::v1::AgentDaemon::Stub& stub, const SlashCommand& c, TurnState& turn,
                const Renderer& r, bool color, const std::string& client_name);
  // A question is waiting for the next line typed.
  bool Asking() const { return step_ != Step::kNone; }
  // `line` answers the question shown; may ask the next one.
  Outcome Answer(agent::v1::AgentDaemon::Stub& stub, const std::string& line, TurnState& turn,
                 const Renderer& r);
  // Forgets a question (the view attached elsewhere).
  void Reset() { step_ = Step::kNone; }

 private:
  enum class Step { kNone, kConfirmUndo, kConfirmOverwrite, kPickPrompt, kConfirmRestore };

  Outcome StartUndo(agent::v1::AgentDaemon::Stub& stub, const SlashCommand& c,
                    const TurnState& turn, const Renderer& r, bool color);
  Outcome StartRewind(agent::v1::AgentDaemon::Stub& stub, const TurnState& turn, const Renderer& r,
                      bool color);
  Outcome Diff(agent::v1::AgentDaemon::Stub& stub, const SlashCommand& c, const TurnState& turn,
               const Renderer& r, bool color);
  Outcome Restore(agent::v1::AgentDaemon::Stub& stub, bool overwrite, const Renderer& r);
  Outcome Fork(agent::v1::AgentDaemon::Stub& stub, bool restore_files, TurnState& turn,
               const Renderer& r);
  std::string Question(const Renderer& r, const std::string& text) const;

  Step step_ = Step::kNone;
  std::string session_id_;  // the session the question is about
  std::string client_name_;
  int turns_ = 1;
  int changed_since_ = 0;
  std::vector<RewindPoint> points_;
  RewindPoint chosen_;
};

}  // namespace agent::client
