#include "client/link/remote_target.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/tool_env.h"

namespace agent::client {
namespace {

constexpr size_t kMaxHost = 255;
constexpr size_t kMaxPath = 4096;

bool HostChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
         c == ':';
}

bool PlainWord(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '=' &&
        c != '/' && c != '-') {
      return false;
    }
  }
  return true;
}

// One of the remote flags at argv[i] (as "--flag value" or "--flag=value"): its value, and
// how many elements it took; 0 when argv[i] is none of them.
struct FlagHit {
  std::string name;
  std::string value;
  int taken = 0;
};

absl::StatusOr<FlagHit> RemoteFlagAt(const std::vector<std::string>& argv, size_t i) {
  for (const char* flag : {"--host", "--remote-bin", "--cd"}) {
    const std::string f = flag;
    if (argv[i] == f) {
      if (i + 1 >= argv.size()) return absl::InvalidArgumentError(f + " needs a value");
      return FlagHit{f, argv[i + 1], 2};
    }
    if (absl::StartsWith(argv[i], f + "=")) return FlagHit{f, argv[i].substr(f.size() + 1), 1};
  }
  return FlagHit{};
}

}  // namespace

absl::Status ValidateHost(const std::string& host) {
  if (host.empty() || host.size() > kMaxHost || host[0] == '-') {
    return absl::InvalidArgumentError("--host takes [user@]HOST, not \"" + host + "\"");
  }
  size_t at = host.find('@');
  std::string user = at == std::string::npos ? "" : host.substr(0, at);
  std::string name = at == std::string::npos ? host : host.substr(at + 1);
  bool ok = !name.empty() && name[0] != '-' && (at == std::string::npos || !user.empty());
  for (char c : user) ok = ok && HostChar(c) && c != ':';
  for (char c : name) ok = ok && HostChar(c);
  if (!ok) {
    return absl::InvalidArgumentError(
        "--host takes [user@]HOST (letters, digits, '.', '_', '-', ':'), not \"" + host + "\"");
  }
  return absl::OkStatus();
}

absl::Status ValidateRemoteBin(const std::string& path) {
  bool ok = !path.empty() && path.size() <= kMaxPath && path[0] != '-';
  for (char c : path) ok = ok && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  if (!ok) return absl::InvalidArgumentError("--remote-bin takes a command path");
  return absl::OkStatus();
}

absl::StatusOr<RemoteArgs> ParseRemoteArgs(std::vector<std::string> argv,
                                           const std::function<const char*(const char*)>& getenv) {
  RemoteArgs out;
  std::optional<std::string> host, bin, dir;
  bool rest = false;  // past "--": everything is an argument
  for (size_t i = 0; i < argv.size();) {
    if (rest || argv[i] == "--") {
      rest = true;
      out.argv.push_back(argv[i++]);
      continue;
    }
    absl::StatusOr<FlagHit> hit = RemoteFlagAt(argv, i);
    if (!hit.ok()) return hit.status();
    if (hit->taken == 0) {
      out.argv.push_back(argv[i++]);
      continue;
    }
    (hit->name == "--host" ? host : hit->name == "--cd" ? dir : bin) = hit->value;
    i += static_cast<size_t>(hit->taken);
  }
  auto env = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v != nullptr ? v : "";
  };
  if (!host.has_value() && !env("AGENT_HOST").empty()) host = env("AGENT_HOST");
  if (!host.has_value() || host->empty()) {
    if (bin.has_value() || dir.has_value()) {
      return absl::InvalidArgumentError("--cd and --remote-bin need --host (or AGENT_HOST)");
    }
    return out;
  }
  RemoteTarget t;
  t.host = *host;
  if (auto s = ValidateHost(t.host); !s.ok()) return s;
  if (bin.has_value()) t.remote_bin = *bin;
  if (auto s = ValidateRemoteBin(t.remote_bin); !s.ok()) return s;
  t.dir = dir.has_value() ? *dir : env("AGENT_REMOTE_DIR");
  if (t.dir.size() > kMaxPath) return absl::InvalidArgumentError("--cd: the path is too long");
  std::vector<std::string> ssh =
      absl::StrSplit(env("AGENT_SSH"), absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (!ssh.empty()) t.ssh = std::move(ssh);
  out.target = std::move(t);
  return out;
}

std::string ShellQuote(const std::string& word) {
  if (absl::StartsWith(word, "~/")) return "~/" + ShellQuote(word.substr(2));
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string RemoteCommandLine(const std::string& remote_bin,
                              const std::vector<std::string>& words) {
  std::string line = ShellQuote(remote_bin);
  for (const std::string& w : words) absl::StrAppend(&line, " ", PlainWord(w) ? w : ShellQuote(w));
  return line;
}

std::string RemoteCommandIn(const std::string& dir, const std::string& line) {
  if (dir.empty()) return line;
  return "cd -- " + ShellQuote(dir) + " && " + line;
}

std::vector<std::string> SshArgv(const RemoteTarget& t, const std::string& remote_line, bool batch,
                                 bool tty) {
  std::vector<std::string> argv = t.ssh;
  // No terminal and no escape character: the channel carries gRPC's bytes as they are.
  // Keepalives notice a link that died without a FIN (a laptop asleep, a network change).
  for (const char* a : {tty ? "-tt" : "-T", "-e", "none", "-x", "-o", "ServerAliveInterval=15",
                        "-o", "ServerAliveCountMax=3"}) {
    argv.push_back(a);
  }
  if (batch) {
    argv.push_back("-o");
    argv.push_back("BatchMode=yes");
  }
  argv.push_back("--");
  argv.push_back(t.host);
  argv.push_back(remote_line);
  return argv;
}

std::vector<std::string> SshEnvironment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = entry.substr(0, eq);
    if (NameLooksSecret(name) || absl::StartsWith(name, "AGENT_")) continue;
    out.push_back(entry);
  }
  return out;
}

}  // namespace agent::client
