// A tool the model can call: its name, the JSON schema sent to the model, and how it runs.
// Tools are stateless apart from the ToolContext they are given; Run may be called from
// several threads at once for read-only tools.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json.h"

namespace agent::daemon::sandbox {
class Sandbox;
}  // namespace agent::daemon::sandbox

namespace agent::daemon::tools {

class BackgroundJobs;
class FileTracker;

// What the model is told. is_error marks a refusal or failure; the turn goes on either way.
struct ToolOutcome {
  std::string content;
  bool is_error = false;
  bool denied_by_policy = false;  // the mode or a rule refused the call, nobody was asked
};

// A person's answer to the model's question (the ask_user tool).
struct QuestionAnswer {
  enum class Kind { kAnswered, kDeclined, kCancelled } kind = Kind::kCancelled;
  std::string text;    // kAnswered: the answer; kDeclined: why, when told
  std::string client;  // who answered
};

// What a running tool may use. Owned by the caller for the duration of Run.
struct ToolContext {
  // The session's working directory, absolute and canonical. Every path is kept inside it.
  std::string workdir;
  // Where commands (bash) run: a directory inside `workdir` (Session.cwd). Empty: workdir.
  std::string cwd;
  // Hashes of files the agent read, to refuse overwriting a file changed since.
  FileTracker* files = nullptr;
  // Set by Cancel; a long-running tool stops promptly when it turns true.
  const std::atomic<bool>* cancelled = nullptr;
  // Streams partial output (bash) to the clients while the tool runs. May be empty.
  std::function<void(std::string_view chunk, bool is_stderr)> on_output;
  // Default bash timeout in seconds when the call gives none.
  int default_timeout_s = 120;
  // The whole environment of commands a tool runs ("NAME=value"): the client's, filtered by
  // the policy of common/tool_env.h. Empty when no client sent one: commands then get
  // MinimalToolEnvironment(), never the daemon's own environment.
  std::vector<std::string> env;
  // The id of the call being run (the `task` tool names it in its children's progress).
  std::string call_id;
  // How commands (bash) are confined (daemon/sandbox/sandbox.h); null: not at all (unit tests).
  const sandbox::Sandbox* sandbox = nullptr;
  // Commands may read the project but change nothing in it (plan mode): bash runs only
  // confined, with the work tree read-only.
  bool read_only = false;
  // The session's background jobs (`bash` with background: true, `bash_job`); null: none
  // can start here.
  BackgroundJobs* jobs = nullptr;
  // The text an attached editor holds for the file at an absolute path (its unsaved changes),
  // or nullopt (no editor, no buffer, no answer): read_file then reads the disk. May be empty.
  std::function<std::optional<std::string>(const std::string& path)> editor_text;
  // Shows the person a question (with 0, or 2 to 6 options) on every attached client and
  // waits for the first answer, or a cancel. Empty: nobody can be asked here.
  std::function<QuestionAnswer(const std::string& question,
                               const std::vector<std::string>& options)>
      ask_user;
  // Plan mode's hand-over (present_plan): shows the plan to every attached client and waits
  // for a person's choice of how to go on; the session takes the mode chosen. What comes back
  // is what the model is told. Empty: no plan can be handed over here.
  std::function<ToolOutcome(const std::string& plan)> present_plan;
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string_view Name() const = 0;
  // {"type":"function","function":{"name":..., "description":..., "parameters":{...}}}
  virtual Json Schema() const = 0;
  // True for tools that change files or run commands: they pass through the policy.
  virtual bool Gated() const = 0;
  // True for tools that may run in a batch with other such calls (read-only ones). A gated
  // tool may be concurrent too (an MCP tool annotated readOnlyHint): it is still authorised
  // first, one call at a time.
  virtual bool Concurrent() const { return !Gated(); }
  // Runs with already-parsed arguments. Argument and path errors are ToolOutcome with
  // is_error, never a crash.
  virtual ToolOutcome Run(const Json& args, ToolContext& ctx) const = 0;
};

}  // namespace agent::daemon::tools
