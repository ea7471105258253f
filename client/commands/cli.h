// What every `agent` command line shares: the options built from flags and this process's
// environment, the connection, usage errors and the exit. Used by main.cc and
// subcommands.cc only. Not thread-safe (reads the environment, may exit the process).
#pragma once

#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "client/commands/session_calls.h"
#include "client/link/connection.h"

namespace agent::client {

// Options from the flags and this process: colour (NO_COLOR, a terminal), the client name,
// the project (project_root.h) and the AGENT_* settings; InvalidArgument for a malformed
// setting.
absl::StatusOr<ClientOptions> BaseOptions(bool json, bool yes, bool plain);

// The daemon, started when none answers and `autostart`; exits with kExitError and one line on
// stderr when there is none.
Connection ConnectOrExit(bool autostart = true);

// ConnectOrExit for a command that works in o.project: over ssh (remote.h) the project is the
// one the remote side found for --cd, which replaces this machine's.
Connection ConnectForProject(ClientOptions& o);

// What CLI11 prints for a parse failure (usage on stderr, or --help on stdout), and the exit
// code: 0 for --help, kExitUsage for any usage error (never CLI11's own 105, 109, ...).
int ParseFailed(CLI::App& app, const CLI::ParseError& e);

// Parses a subcommand's words (argv[1] is the subcommand): nothing when they parse, else the
// code to exit with (ParseFailed).
std::optional<int> ParseSubcommand(CLI::App& app, int argc, char** argv);
// The same, then the options every command shares into `options` (a malformed setting exits
// with kExitUsage).
std::optional<int> ParseSubcommand(CLI::App& app, int argc, char** argv, ClientOptions* options);

// Prints "agent: <message>" on stderr and returns `code`.
int Complain(const std::string& message, int code = kExitError);

// Every command that connected ends here, once its own objects (the session view, which
// restores the terminal and saves the line history) are gone, but without tearing gRPC down
// (destroying the channel, stopping and joining its threads): the kernel closes the socket.
// `agent ls` takes ~3.6 ms instead of ~5.5 ms.
[[noreturn]] void ExitWithoutTeardown(int code);

}  // namespace agent::client
