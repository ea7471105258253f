// `agent undo [ID] [--turns N] [--yes] [--overwrite]` and `agent diff [ID] [--turn N]`, and
// the calls they share with the interactive /undo, /rewind and /diff (checkpoint_dialog.h).
//   undo  lists the files the last N turns changed (dry run), then restores them: with --yes
//         at once; on a terminal after asking; without either it refuses (exit 1). Files
//         changed after the turn are kept unless --overwrite (or a yes to the second question).
//   diff  what the session (or its turn N) changed, as a unified diff: coloured on a terminal
//         (not with NO_COLOR), exactly as the daemon sent it into a pipe.
// ID defaults to the newest session of the project, as `agent -c` does. Not thread-safe
// (may exit the process).
#pragma once

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "agent/v1/agent.grpc.pb.h"
#include "client/text/checkpoint_text.h"

namespace agent::client {

struct CheckpointArgs {
  std::string cmd;  // "undo" or "diff"
  std::string id;
  int turns = 1;  // undo
  int turn = 0;   // diff: 0 for the whole session
  bool yes = false;
  bool overwrite = false;
};

// The flags of `agent undo` (a.cmd == "undo") or `agent diff`.
void AddCheckpointFlags(CLI::App& app, CheckpointArgs& a);

// `agent undo ...` / `agent diff ...` with argv[1] the subcommand; the exit code.
int RunCheckpointSubcommand(int argc, char** argv);

// ---- calls shared with the interactive commands ----

// One line for a failed checkpoint call ("this agentd has no checkpoints…" when it is older).
std::string CheckpointCallError(const grpc::Status& s);

grpc::Status CallUndo(agent::v1::AgentDaemon::Stub& stub, const std::string& session_id, int turns,
                      bool dry_run, bool overwrite, const std::string& client_name,
                      agent::v1::UndoResponse* resp);

// The unified diff of the session (turn 0) or of its turn N; the error as one line.
absl::StatusOr<std::string> FetchDiff(agent::v1::AgentDaemon::Stub& stub,
                                      const std::string& session_id, int turn);

// The prompts of the session (its transcript) and the checkpoints after each.
absl::StatusOr<std::vector<RewindPoint>> FetchRewindPoints(agent::v1::AgentDaemon::Stub& stub,
                                                           const std::string& session_id);

// ForkSession just before message `at_message`, restoring the files when asked.
absl::StatusOr<agent::v1::Session> ForkAt(agent::v1::AgentDaemon::Stub& stub,
                                          const std::string& session_id, int at_message,
                                          bool restore_files);

}  // namespace agent::client
