#include "daemon/prompt/custom_commands.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/dir_fd.h"
#include "common/paths.h"
#include "common/status_macros.h"
#include "daemon/prompt/front_matter.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon {
namespace {

constexpr std::string_view kSuffix = ".md";

// Kept in step with client/input/slash_commands.cc, plus names the issues plan for built-ins.
constexpr std::array<std::string_view, 20> kBuiltins = {
    "help",  "status", "compact",     "clear", "fork",    "sessions", "model",
    "allow", "detach", "quit",        "exit",  "context", "usage",    "undo",
    "diff",  "rewind", "checkpoints", "mcp",   "agents",  "plan"};

// One line, no control characters (a terminal shows it), bounded.
std::string CleanDescription(std::string_view raw) {
  std::string_view v = TrimAscii(raw);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  std::string out;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    out.push_back(c);
  }
  return std::string(tools::Utf8Prefix(out, kMaxDescriptionBytes));
}

// `<project>/.agent/commands`, opened without following a symlink below the project.
absl::StatusOr<DirFd> OpenProjectDir(const std::string& project) {
  ASSIGN_OR_RETURN(DirFd root, DirFd::Open(project, false));
  ASSIGN_OR_RETURN(DirFd agent_dir, root.OpenSubdir(".agent", false));
  return agent_dir.OpenSubdir("commands", false);
}

absl::StatusOr<DirFd> OpenUserDir(const std::string& user_dir) {
  return DirFd::Open(user_dir, false);
}

// The file `name`.md of `dir`; NotFound when missing. User files may be symlinks (the
// user's own dotfiles), project files may not.
absl::StatusOr<CustomCommandFile> ReadCommand(const DirFd& dir, std::string_view name,
                                              std::string_view scope) {
  const std::string file = absl::StrCat(std::string(name), std::string(kSuffix));
  const std::string path = dir.PathOf(file);
  int fd = -1;
  if (scope == "project") {
    auto opened = dir.OpenFile(file, O_RDONLY);
    if (!opened.ok()) {
      if (absl::IsNotFound(opened.status())) return opened.status();
      return absl::InvalidArgumentError(opened.status().message());
    }
    fd = *opened;
  } else {
    fd = ::openat(dir.fd(), file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return FileErrorStatus(errno, "open", path);
  }
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(fd, path, kMaxCommandFileBytes));
  ParsedCommand parsed = ParseCommandFile(text);
  return CustomCommandFile{std::string(name), std::move(parsed.description), std::string(scope),
                           path, std::move(parsed.body)};
}

std::vector<std::string> CommandNames(const DirFd& dir) {
  std::vector<std::string> names = NamesWithSuffix(dir, kSuffix);
  std::erase_if(names, [](const std::string& n) { return !IsValidCommandName(n); });
  return names;
}

void AppendCommands(const absl::StatusOr<DirFd>& dir, std::string_view scope,
                    std::vector<CustomCommandFile>* out) {
  if (!dir.ok()) return;
  for (const std::string& name : CommandNames(*dir)) {
    if (IsBuiltinCommandName(name)) continue;  // never run, so never offered
    if (auto c = ReadCommand(*dir, name, scope); c.ok()) out->push_back(*std::move(c));
  }
}

// The words of `args`: whitespace-separated, quotes keeping spaces inside a word.
std::vector<std::string> Words(std::string_view args) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : args) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        cur.push_back(c);
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

}  // namespace

bool IsValidCommandName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCommandNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool IsBuiltinCommandName(std::string_view name) {
  return std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end();
}

ParsedCommand ParseCommandFile(std::string_view text) {
  ParsedCommand out;
  const FrontMatter fm = SplitFrontMatter(text);
  if (fm.kind != FrontMatter::Kind::kClosed) {  // none, or never closed: all of it is the body
    out.body = std::string(text);
    return out;
  }
  for (const auto& [key, value] : fm.fields) {
    if (key == "description") out.description = CleanDescription(value);
  }
  out.body = std::string(fm.body);
  return out;
}

std::string SubstituteArguments(std::string_view body, std::string_view arguments) {
  const std::string_view args = TrimAscii(arguments);
  const std::vector<std::string> words = Words(args);
  constexpr std::string_view kAll = "$ARGUMENTS";
  std::string out;
  bool used = false;
  for (size_t i = 0; i < body.size();) {
    if (body.substr(i, kAll.size()) == kAll) {
      out.append(args);
      i += kAll.size();
      used = true;
    } else if (body[i] == '$' && i + 1 < body.size() && body[i + 1] >= '1' && body[i + 1] <= '9') {
      const size_t n = static_cast<size_t>(body[i + 1] - '1');
      if (n < words.size()) out.append(words[n]);
      i += 2;
      used = true;
    } else {
      out.push_back(body[i++]);
    }
  }
  if (!used && !args.empty()) {
    while (!out.empty() && out.back() == '\n') out.pop_back();
    absl::StrAppend(&out, "\n\n", tools::AbslView(args));
  }
  return out;
}

std::vector<CustomCommandFile> ListCustomCommands(const std::string& project,
                                                  const std::string& user_dir) {
  std::vector<CustomCommandFile> out;
  AppendCommands(OpenProjectDir(project), "project", &out);
  AppendCommands(OpenUserDir(user_dir), "user", &out);
  return out;
}

absl::StatusOr<std::optional<CustomCommandFile>> FindCustomCommand(const std::string& project,
                                                                   const std::string& user_dir,
                                                                   std::string_view name) {
  if (!IsValidCommandName(name) || IsBuiltinCommandName(name)) return std::nullopt;
  const std::pair<absl::StatusOr<DirFd>, std::string_view> dirs[] = {
      {OpenProjectDir(project), "project"}, {OpenUserDir(user_dir), "user"}};
  for (const auto& [dir, scope] : dirs) {
    if (!dir.ok()) continue;
    absl::StatusOr<CustomCommandFile> c = ReadCommand(*dir, name, scope);
    if (c.ok()) return std::optional<CustomCommandFile>(*std::move(c));
    if (!absl::IsNotFound(c.status())) return c.status();
  }
  return std::nullopt;
}

std::optional<std::string> ExpandCustomCommand(const std::string& project,
                                               const std::string& user_dir, std::string_view text,
                                               std::string* warning) {
  if (text.size() < 2 || text[0] != '/') return std::nullopt;
  size_t end = 1;
  while (end < text.size() && !absl::ascii_isspace(static_cast<unsigned char>(text[end]))) ++end;
  const std::string_view name = text.substr(1, end - 1);
  absl::StatusOr<std::optional<CustomCommandFile>> found =
      FindCustomCommand(project, user_dir, name);
  if (!found.ok()) {
    if (warning != nullptr) {
      *warning = absl::StrCat("/", std::string(name), " not expanded: ", found.status().message());
    }
    return std::nullopt;
  }
  if (!found->has_value()) return std::nullopt;
  return SubstituteArguments((*found)->body, text.substr(end));
}

std::string UserCommandsDir() { return ConfigDir() + "/commands"; }

}  // namespace agent::daemon
