// Where a remote command goes: `agent --host [user@]HOST` (or AGENT_HOST) and how the client
// reaches it through the user's own ssh. Pure functions: argv parsing, validation, the ssh
// command line and its environment. Nothing the user typed reaches a shell unquoted: HOST is
// validated and passed after `--`, the remote command is built from fixed words and the
// quoted --remote-bin path. Model settings and the key never appear here (they travel in the
// gRPC messages). Thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::client {

struct RemoteTarget {
  std::string host;                        // [user@]host, ValidateHost'ed
  std::string remote_bin = "agent";        // the agent on HOST (its PATH's, or --remote-bin)
  std::string dir;                         // --cd / AGENT_REMOTE_DIR; empty: the remote home
  std::vector<std::string> ssh = {"ssh"};  // AGENT_SSH split on blanks: the ssh command prefix
};

// What ParseRemoteArgs leaves: the target (none: the local daemon) and argv without the
// remote flags.
struct RemoteArgs {
  std::optional<RemoteTarget> target;
  std::vector<std::string> argv;
};

// Takes --host H, --remote-bin PATH and --cd DIR (also as --flag=value) out of `argv` anywhere
// before a "--", then applies AGENT_HOST, AGENT_REMOTE_DIR and AGENT_SSH from `getenv`.
// InvalidArgument for a malformed host or path, a flag without its value, or --cd /
// --remote-bin without a host.
absl::StatusOr<RemoteArgs> ParseRemoteArgs(std::vector<std::string> argv,
                                           const std::function<const char*(const char*)>& getenv);

// OK for "host" and "user@host": letters, digits and . _ - (and : for IPv6 addresses), not
// starting with '-', at most 255 bytes. Anything else (a space, a quote, an option) is
// InvalidArgument: it would reach ssh's option parser or a shell.
absl::Status ValidateHost(const std::string& host);

// OK for a command path without control characters, not starting with '-'.
absl::Status ValidateRemoteBin(const std::string& path);

// `word` quoted for a POSIX shell ('…' with ' as '\''); a leading "~/" stays unquoted so that
// the remote shell expands it.
std::string ShellQuote(const std::string& word);

// The command the remote shell runs: the quoted remote bin, then `words` each quoted unless it
// is a plain word ([A-Za-z0-9._=/-] only).
std::string RemoteCommandLine(const std::string& remote_bin, const std::vector<std::string>& words);

// `line` run in `dir` on the remote side ("cd -- 'dir' && line"); `line` when `dir` is empty.
std::string RemoteCommandIn(const std::string& dir, const std::string& line);

// ssh's argv: the AGENT_SSH prefix, -T (no terminal) and the options that make a dead link
// noticed, BatchMode when `batch` (a reconnect cannot ask for a password), `--`, HOST and
// `remote_line` (RemoteCommandLine). With `tty` -tt replaces -T (an interactive command).
std::vector<std::string> SshArgv(const RemoteTarget& t, const std::string& remote_line, bool batch,
                                 bool tty = false);

// The environment ssh runs with: this process's minus every variable whose name looks secret
// (KEY, SECRET, TOKEN, PASSWORD) and every AGENT_* setting, so that no SendEnv in a user's
// ssh_config can carry them to HOST. SSH_AUTH_SOCK, DISPLAY, TERM... stay.
std::vector<std::string> SshEnvironment(const std::vector<std::string>& env);

}  // namespace agent::client
