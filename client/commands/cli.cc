#include "client/commands/cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "client/link/client_settings.h"
#include "client/link/project_root.h"
#include "client/link/remote.h"
#include "common/paths.h"

namespace agent::client {

absl::StatusOr<ClientOptions> BaseOptions(bool json, bool yes, bool plain) {
  ClientOptions o;
  o.json = json;
  o.yes = yes;
  o.plain = plain;
  // NO_COLOR: any non-empty value turns colour off (no-color.org).
  const char* no_color = std::getenv("NO_COLOR");
  o.color = !plain && !json && isatty(1) && (no_color == nullptr || no_color[0] == '\0');
  // The name others see in "allowed by …" and the client list: the pid keeps it unique,
  // the terminal says which window it is.
  const char* tty = isatty(0) ? ttyname(0) : nullptr;
  std::string where = tty != nullptr ? tty : "";
  if (where.rfind("/dev/", 0) == 0) where = where.substr(5);
  o.client_name = absl::StrCat("agent-", getpid(), where.empty() ? "" : "@" + where);
  // Over ssh the project is HOST's (ConnectForProject): no local directory is looked at.
  if (ActiveRemote() == nullptr) o.project = ProjectHere();
  auto settings = ClientSettingsFromEnv([](const char* name) { return std::getenv(name); });
  if (!settings.ok()) return settings.status();
  o.settings = *std::move(settings);
  return o;
}

Connection ConnectOrExit(bool autostart) {
  ConnectOptions o{SocketPath(), autostart};
  auto daemon = Connect(o);
  if (!daemon.ok()) std::exit(Complain(std::string(daemon.status().message())));
  return *std::move(daemon);
}

Connection ConnectForProject(ClientOptions& o) {
  Connection c = ConnectOrExit();
  if (const ProxyReply* remote = RemoteHostInfo(); remote != nullptr) o.project = remote->project;
  return c;
}

int ParseFailed(CLI::App& app, const CLI::ParseError& e) {
  int code = app.exit(e);
  return code == 0 ? 0 : kExitUsage;
}

std::optional<int> ParseSubcommand(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    return ParseFailed(app, e);
  }
  return std::nullopt;
}

std::optional<int> ParseSubcommand(CLI::App& app, int argc, char** argv, ClientOptions* options) {
  if (std::optional<int> code = ParseSubcommand(app, argc, argv)) return code;
  absl::StatusOr<ClientOptions> o = BaseOptions(false, false, false);
  if (!o.ok()) return Complain(std::string(o.status().message()), kExitUsage);
  *options = *std::move(o);
  return std::nullopt;
}

int Complain(const std::string& message, int code) {
  std::fprintf(stderr, "agent: %s\n", message.c_str());
  return code;
}

void ExitWithoutTeardown(int code) {
  std::fflush(nullptr);
  ::_exit(code);
}

}  // namespace agent::client
