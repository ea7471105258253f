#include "daemon/policy/command_prefix.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/policy/command_words.h"

namespace agent::daemon::policy {
namespace {

// Programs that run what their arguments say, write or delete where they point, or reach the
// network: a prefix rule for them would allow nearly anything.
const std::set<std::string_view>& ExactOnly() {
  static const auto* s = new std::set<std::string_view>{
      // shells and interpreters
      "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "tclsh",
      "Rscript", "osascript", "pwsh", "powershell", "deno", "awk", "gawk", "mawk", "nawk", "sed",
      // programs that run another program
      "env", "xargs", "sudo", "doas", "su", "pkexec", "runuser", "eval", "exec", "command",
      "builtin", "nohup", "setsid", "timeout", "nice", "ionice", "time", "watch", "chroot",
      "unshare", "nsenter", "strace", "ltrace", "gdb", "find", "parallel", "npx", "pnpx", "bunx",
      "uvx", "pipx", "flock", "script", "stdbuf", "taskset", "chrt", "sg", "newgrp",
      // writes, deletes, permissions, processes
      "rm", "rmdir", "mv", "cp", "ln", "install", "dd", "tee", "truncate", "shred", "chmod",
      "chown", "chgrp", "chattr", "kill", "pkill", "killall", "crontab", "mkfs",
      // the network
      "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet",
      "ftp"};
  return *s;
}

// Interpreters with a version in their name (python3.11, node20, perl5.36).
bool IsInterpreter(std::string_view name) {
  for (std::string_view family : {"python", "pypy", "node", "nodejs", "ruby", "perl", "php", "lua",
                                  "luajit", "java", "jshell", "irb", "ghci", "scala"}) {
    if (name.substr(0, family.size()) == family) {
      std::string_view rest = name.substr(family.size());
      if (rest.find_first_not_of("0123456789.-") == std::string_view::npos) return true;
    }
  }
  return false;
}

// Programs whose first argument names what they do (`git status`, `cargo build`): the prefix
// keeps it. Listed with their subcommands that run arbitrary code or rewrite configuration.
struct SubcommandTool {
  std::set<std::string_view> exact_only;
  bool script_after_run = false;  // `npm run NAME`: the script's name is part of the prefix
};
const SubcommandTool* Subcommands(std::string_view program) {
  static const auto* tools = new std::vector<std::pair<std::string_view, SubcommandTool>>{
      {"git",
       {{"config", "rebase", "bisect", "submodule", "filter-branch", "filter-repo", "difftool",
         "mergetool", "daemon", "upload-pack", "receive-pack", "remote-ext", "credential",
         "send-email", "instaweb", "p4", "svn"}}},
      {"npm", {{"exec", "x", "init", "create", "explore", "config", "set"}, true}},
      {"pnpm", {{"exec", "dlx", "x", "create", "config"}, true}},
      {"yarn", {{"exec", "dlx", "create", "config", "node"}, true}},
      {"bun", {{"x", "exec", "create", "repl"}, true}},
      {"cargo", {{"install", "config", "script"}}},
      {"go", {{"run", "generate", "env", "tool"}}},
      {"docker", {{"run", "exec", "create", "compose", "buildx", "plugin", "context"}}},
      {"podman", {{"run", "exec", "create", "compose", "unshare"}}},
      {"kubectl", {{"exec", "run", "debug", "attach", "cp", "apply", "delete", "edit", "patch"}}},
      {"gh", {{"api", "extension", "alias", "auth", "secret", "repo"}}},
      {"pip", {{"install", "download", "config"}}},
      {"pip3", {{"install", "download", "config"}}},
      {"uv", {{"run", "tool", "pip"}}},
      {"poetry", {{"run", "shell", "config", "self"}}},
      {"bundle", {{"exec", "config"}}},
      {"dotnet", {{"exec", "tool", "run"}}},
      {"helm", {{"install", "upgrade", "plugin"}}},
      {"terraform", {{"apply", "destroy", "import", "console"}}},
      {"systemctl", {{"start", "stop", "restart", "enable", "disable", "edit", "kill", "mask"}}},
      {"brew", {{"install", "sh", "tap", "ruby", "irb"}}},
      {"apt", {{"install", "remove", "purge"}}},
      {"apt-get", {{"install", "remove", "purge"}}},
      {"rustup", {{"run", "toolchain"}}},
      {"conda", {{"run", "install", "create", "env"}}},
      {"mix", {{"run", "eval", "archive.install"}}},
      {"swift", {{"run", "repl"}}},
      {"dart", {{"run", "pub"}}},
      {"flutter", {{"run", "pub"}}},
      {"composer", {{"exec", "run-script", "run", "global", "config", "create-project"}}},
  };
  for (const auto& [name, tool] : *tools) {
    if (name == program) return &tool;
  }
  return nullptr;
}

// A word that means what it says (no quote, expansion, glob, assignment).
bool Plain(const ShellWord& w) {
  if (w.expands || w.globs || w.unsure || w.quoted || w.value.empty()) return false;
  for (char c : w.value) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '+' || c == '-' || c == '/' || c == ':' ||
                    c == '@';
    if (!ok) return false;
  }
  return true;
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<std::string> CommandPrefix(std::string_view part) {
  const std::vector<ShellWord> words = SplitWords(part);
  if (words.empty() || !Plain(words[0]) || words[0].value[0] == '-') return std::nullopt;
  const std::string_view program = Basename(words[0].value);
  if (program.empty() || ExactOnly().count(program) > 0 || IsInterpreter(program)) {
    return std::nullopt;
  }
  std::string prefix = words[0].value;
  if (const SubcommandTool* tool = Subcommands(program); tool != nullptr) {
    // `git -C dir …`, `git` alone: the prefix would be `git *`, which runs aliases and hooks.
    if (words.size() < 2 || !Plain(words[1]) || words[1].value[0] == '-') return std::nullopt;
    const std::string& sub = words[1].value;
    if (tool->exact_only.count(sub) > 0) return std::nullopt;
    absl::StrAppend(&prefix, " ", sub);
    if (tool->script_after_run && (sub == "run" || sub == "run-script")) {
      if (words.size() < 3 || !Plain(words[2]) || words[2].value[0] == '-') return std::nullopt;
      absl::StrAppend(&prefix, " ", words[2].value);
    }
  }
  // The rule matches the command's text: the prefix must be how that text starts.
  if (part.substr(0, prefix.size()) != prefix) return std::nullopt;
  if (part.size() > prefix.size() && part[prefix.size()] != ' ') return std::nullopt;
  return prefix;
}

}  // namespace agent::daemon::policy
