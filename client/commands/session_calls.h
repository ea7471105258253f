// What the `agent` commands share: their options, their exit codes, the model settings and
// tool environment a client sends, and the calls that create or find a session of the project.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.grpc.pb.h"
#include "client/link/connection.h"
#include "client/link/project_root.h"
#include "client/text/policy_mode.h"

namespace agent::client {

// Exit codes of `agent "prompt"`, one per way a turn ends:
//   0 done; 1 an error (the turn failed, the daemon was lost with the turn, the session was
//   removed); 2 a usage error; 3 the step limit; 4 done, but the mode or a rule refused
//   at least one gated call (stderr names each); 130 cancelled (Ctrl-C); 129 / 143 SIGHUP /
//   SIGTERM (the turn is cancelled first, as by Ctrl-C).
enum ExitCode {
  kExitDone = 0,
  kExitError = 1,
  kExitUsage = 2,
  kExitMaxSteps = 3,
  kExitDenied = 4,
  kExitCancelled = 130,
};

struct ClientOptions {
  bool json = false;           // events as JSON lines
  bool json_snapshot = false;  // --json-snapshot: the first line is the whole snapshot
  bool color = false;          // colour and styling
  bool plain = false;          // --plain: no styling and no spinner
  bool yes = false;            // approve gated tools
  bool auto_mode = false;      // --auto: sandboxed commands and edits in the project run unasked
  bool accept_edits = false;   // --accept-edits: edits in the project run unasked, commands ask
  bool deny_tools = false;     // --read-only: deny every gated tool (no writes, no commands)
  bool plan = false;           // --plan: read and plan, then hand the plan over
  bool read_only = false;      // attach as an observer
  std::string client_name;
  std::string session_id;              // resume this one instead of creating a session
  std::string model;                   // --model: replaces AGENT_MODEL
  std::string title;                   // a new session's title; empty: the daemon's choice
  agent::v1::ClientSettings settings;  // this terminal's AGENT_* settings (client_settings.h)
  ProjectDirs project;                 // where sessions live, and where this client runs

  ModeFlags mode_flags() const { return {deny_tools, auto_mode, accept_edits, yes, plan}; }
};

// The model settings of this process's environment (AGENT_BASE_URL, ...), as sent to the
// daemon with a new session or a prompt; a non-empty `model` (--model, /model) replaces
// AGENT_MODEL.
agent::v1::ModelConfig ModelFromEnv(const std::string& model = "");

// This process's environment for the session's tools, as sent with a new session or a
// prompt: filtered by the tool_env policy (common/tool_env.h, this user's config.json), so no
// secret and never the API key leaves this process in it.
agent::v1::ToolEnvironment ToolEnvFromProcess();

// A prompt as this client sends it: its name, the model settings (`model` replacing
// AGENT_MODEL when set), the tools' environment and its settings travel with the text.
agent::v1::SendPromptRequest PromptRequest(const std::string& session_id, const std::string& text,
                                           const ClientOptions& options, const std::string& model);

// Creates a session in options.project (workdir: its root, cwd: where this client runs)
// with this process's model, tool environment and settings.
absl::StatusOr<agent::v1::Session> CreateSessionHere(agent::v1::AgentDaemon::Stub& stub,
                                                     const ClientOptions& options,
                                                     agent::v1::PolicyMode mode);

// The sessions of `project_root`, newest first.
absl::StatusOr<std::vector<agent::v1::Session>> SessionsOf(agent::v1::AgentDaemon::Stub& stub,
                                                           const std::string& project_root);

// The newest usable session of `project_root` that is not a child (child_view.h); NotFound
// when there is none.
absl::StatusOr<std::string> NewestSessionHere(agent::v1::AgentDaemon::Stub& stub,
                                              const std::string& project_root);

// The full id of `id` (a unique prefix), or of the newest session here when it is empty;
// NotFound naming `id` when the daemon knows no such session.
absl::StatusOr<std::string> ResolveSession(agent::v1::AgentDaemon::Stub& stub,
                                           const std::string& id, const std::string& project_root);

}  // namespace agent::client
