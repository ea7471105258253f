#include "daemon/subagents/agent_definition.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/dir_fd.h"
#include "common/file_stamp.h"
#include "common/paths.h"
#include "common/status_macros.h"
#include "daemon/prompt/front_matter.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::subagents {
namespace {

constexpr std::string_view kSuffix = ".md";
constexpr size_t kMaxToolNameBytes = 128;
constexpr size_t kMaxModelBytes = 128;

std::string_view Unquote(std::string_view v) {
  v = TrimAscii(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return TrimAscii(v);
}

// One line without control characters (a terminal and the model's tool list show it).
std::string CleanDescription(std::string_view raw) {
  std::string out;
  for (char c : Unquote(raw)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) out.push_back(c);
  }
  return std::string(tools::Utf8Prefix(out, kMaxAgentDescriptionBytes));
}

bool AllOf(std::string_view s, size_t max, bool (*ok)(char)) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), ok);
}

// Tool names as the registries spell them (MCP tools: server__tool).
bool IsValidToolName(std::string_view s) {
  return AllOf(s, kMaxToolNameBytes, [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool IsValidModel(std::string_view s) {
  return AllOf(s, kMaxModelBytes, [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == ':' || c == '/' || c == '@';
  });
}

// "a, b", "[a, b]" or "a b".
absl::StatusOr<std::vector<std::string>> ParseToolList(std::string_view raw) {
  std::string_view v = TrimAscii(raw);
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  std::vector<std::string> out;
  for (absl::string_view part :
       absl::StrSplit(tools::AbslView(v), absl::ByAnyChar(", "), absl::SkipEmpty())) {
    std::string_view name = Unquote(std::string_view(part.data(), part.size()));
    if (name.empty()) continue;
    if (!IsValidToolName(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tools: \"", tools::AbslView(tools::Utf8Prefix(name, 40)), "\" is not a tool name"));
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
    if (out.size() > kMaxAgentTools) {
      return absl::InvalidArgumentError(absl::StrCat("tools: more than ", kMaxAgentTools));
    }
  }
  return out;
}

absl::Status ApplyKey(std::string_view key, std::string_view value, AgentDefinition* def) {
  if (key == "name") {
    def->name = std::string(Unquote(value));
    if (!IsValidAgentName(def->name)) {
      return absl::InvalidArgumentError("name must be [a-z0-9_-], at most 64 bytes");
    }
  } else if (key == "description") {
    def->description = CleanDescription(value);
  } else if (key == "tools") {
    ASSIGN_OR_RETURN(def->tools, ParseToolList(value));
    def->all_tools = false;
  } else if (key == "model") {
    def->model = std::string(Unquote(value));
    if (!def->model.empty() && !IsValidModel(def->model)) {
      return absl::InvalidArgumentError("model is not a model name");
    }
  }
  // Anything else (a mode, rules, permissions) is ignored on purpose: a file cannot widen
  // what the parent's policy allows.
  return absl::OkStatus();
}

absl::StatusOr<AgentDefinition> ReadAgent(const DirFd& dir, const std::string& stem,
                                          std::string_view scope) {
  const std::string file = stem + std::string(kSuffix);
  const std::string path = dir.PathOf(file);
  int fd = -1;
  if (scope == "project") {  // repository content: never through a symlink
    ASSIGN_OR_RETURN(fd, dir.OpenFile(file, O_RDONLY));
  } else {
    fd = ::openat(dir.fd(), file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return FileErrorStatus(errno, "open", path);
  }
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(fd, path, kMaxAgentFileBytes));
  absl::StatusOr<AgentDefinition> def = ParseAgentDefinition(text, stem);
  if (!def.ok()) return Annotate(def.status(), path);
  def->scope = std::string(scope);
  def->path = path;
  return def;
}

std::vector<std::string> Stems(const DirFd& dir) {
  std::vector<std::string> stems = NamesWithSuffix(dir, kSuffix);
  std::erase_if(stems, [](const std::string& n) { return !IsValidAgentName(n); });
  if (stems.size() > kMaxAgentsPerDir) stems.resize(kMaxAgentsPerDir);
  return stems;
}

absl::StatusOr<DirFd> OpenProjectDir(const std::string& project) {
  ASSIGN_OR_RETURN(DirFd root, DirFd::Open(project, false));
  ASSIGN_OR_RETURN(DirFd agent_dir, root.OpenSubdir(".agent", false));
  return agent_dir.OpenSubdir("agents", false);
}

bool Listed(const std::vector<AgentDefinition>& defs, std::string_view name) {
  return std::any_of(defs.begin(), defs.end(),
                     [&](const AgentDefinition& d) { return d.name == name; });
}

void AppendDir(const absl::StatusOr<DirFd>& dir, std::string_view scope,
               std::vector<AgentDefinition>* out, std::vector<std::string>* problems,
               std::vector<std::string>* files) {
  if (!dir.ok()) return;
  for (const std::string& stem : Stems(*dir)) {
    files->push_back(dir->PathOf(stem + std::string(kSuffix)));
    absl::StatusOr<AgentDefinition> def = ReadAgent(*dir, stem, scope);
    if (!def.ok()) {
      if (problems != nullptr) problems->emplace_back(def.status().message());
      continue;
    }
    if (!Listed(*out, def->name)) out->push_back(*std::move(def));
  }
}

AgentDefinition General() {
  AgentDefinition d;
  d.name = std::string(kGeneralAgent);
  d.description = "General-purpose agent for research and multi-step tasks; the usual tools.";
  d.scope = "builtin";
  return d;
}

}  // namespace

bool IsValidAgentName(std::string_view name) {
  return AllOf(name, kMaxAgentNameBytes, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

absl::StatusOr<AgentDefinition> ParseAgentDefinition(std::string_view text,
                                                     std::string_view file_stem) {
  AgentDefinition def;
  def.name = std::string(file_stem);
  const FrontMatter fm = SplitFrontMatter(text);
  if (fm.kind == FrontMatter::Kind::kNone) {
    return absl::InvalidArgumentError("no front matter (a first line \"---\")");
  }
  for (const auto& [key, value] : fm.fields) {
    if (absl::Status s = ApplyKey(key, value, &def); !s.ok()) return s;
  }
  if (fm.kind != FrontMatter::Kind::kClosed) {
    return absl::InvalidArgumentError("the front matter is not closed by \"---\"");
  }
  if (!IsValidAgentName(def.name)) {
    return absl::InvalidArgumentError("name must be [a-z0-9_-], at most 64 bytes");
  }
  def.prompt = std::string(TrimAscii(fm.body));
  if (def.prompt.empty()) return absl::InvalidArgumentError("the body (the prompt) is empty");
  return def;
}

std::vector<AgentDefinition> ListAgents(const std::string& project, const std::string& user_dir,
                                        std::vector<std::string>* problems) {
  struct Listing {
    std::vector<AgentDefinition> agents;
    std::vector<std::string> problems;
  };
  // Every step lists them (the task tool's description): read again only when a directory or
  // a definition changed.
  static auto* read = new ReadOnChangeByKey<Listing>;  // outlives exit: threads may read
  Listing listing =
      read->Get(absl::StrCat(project, "\n", user_dir), {project + "/.agent/agents", user_dir},
                [&](std::vector<std::string>* files) {
                  Listing l;
                  AppendDir(OpenProjectDir(project), "project", &l.agents, &l.problems, files);
                  AppendDir(DirFd::Open(user_dir, false), "user", &l.agents, &l.problems, files);
                  if (!Listed(l.agents, kGeneralAgent)) l.agents.push_back(General());
                  return l;
                });
  if (problems != nullptr) {
    problems->insert(problems->end(), listing.problems.begin(), listing.problems.end());
  }
  return std::move(listing.agents);
}

absl::StatusOr<AgentDefinition> FindAgent(const std::string& project, const std::string& user_dir,
                                          std::string_view name) {
  std::vector<AgentDefinition> all = ListAgents(project, user_dir);
  std::vector<std::string> names;
  for (AgentDefinition& d : all) {
    if (d.name == name) return std::move(d);
    names.push_back(d.name);
  }
  return absl::NotFoundError(absl::StrCat("no agent \"",
                                          tools::AbslView(tools::Utf8Prefix(name, 64)),
                                          "\"; available: ", absl::StrJoin(names, ", ")));
}

bool AgentMayUse(const AgentDefinition& def, std::string_view tool, int depth, int max_depth) {
  const bool listed = std::find(def.tools.begin(), def.tools.end(), tool) != def.tools.end();
  if (tool == "task") return !def.all_tools && listed && depth < max_depth;
  // A child's question would reach a person who did not start it: only when the definition
  // asks for it by name.
  if (tool == "ask_user") return !def.all_tools && listed;
  return def.all_tools || listed;
}

std::string UserAgentsDir() { return ConfigDir() + "/agents"; }

}  // namespace agent::daemon::subagents
