#include "client/input/slash_commands.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"

namespace agent::client {
namespace {

struct Entry {
  const char* name;
  SlashCommand::Kind kind;
  const char* usage;
  const char* what;
};

const std::vector<Entry>& Commands() {
  static const std::vector<Entry>* c = new std::vector<Entry>{
      {"help", SlashCommand::kHelp, "/help", "this list"},
      {"status", SlashCommand::kStatus, "/status", "session, model, tokens, attached clients"},
      {"context", SlashCommand::kContext, "/context",
       "what the next request is made of, in tokens"},
      {"compact", SlashCommand::kCompact, "/compact",
       "summarise the older half of the session now"},
      {"clear", SlashCommand::kClear, "/clear", "start a new session in this directory"},
      {"fork", SlashCommand::kFork, "/fork", "copy this session and continue in the copy"},
      {"undo", SlashCommand::kUndo, "/undo [N]",
       "restore the files to before the last (N) turns, after asking"},
      {"rewind", SlashCommand::kRewind, "/rewind",
       "fork the session before one of its prompts, files too"},
      {"diff", SlashCommand::kDiff, "/diff [N]", "what the session (or its turn N) changed"},
      {"sessions", SlashCommand::kSessions, "/sessions", "the sessions of this directory"},
      {"model", SlashCommand::kModel, "/model NAME", "use model NAME from the next request"},
      {"allow", SlashCommand::kAllow, "/allow RULE",
       "record an allow rule, e.g. /allow bash(make *)"},
      {"mode", SlashCommand::kMode, "/mode ask|auto|edits|plan|yes|read-only",
       "how gated tools are decided; auto: sandboxed commands and edits run unasked"},
      {"trust", SlashCommand::kTrust, "/trust",
       "trust the allow rules of this project's .agent/settings.json, after asking"},
      {"mcp", SlashCommand::kMcp, "/mcp", "the MCP servers here: state, tools, errors"},
      {"last", SlashCommand::kLast, "/last", "the last tool output, whole (the trace clips it)"},
      {"detach", SlashCommand::kDetach, "/detach", "leave; the session goes on (also Ctrl-D)"},
      {"quit", SlashCommand::kDetach, "", ""},
      {"exit", SlashCommand::kDetach, "", ""},
  };
  return *c;
}

}  // namespace

std::optional<SlashCommand> ParseSlashCommand(const std::string& line) {
  std::string s(absl::StripAsciiWhitespace(line));
  if (s.size() < 2 || s[0] != '/' || s[1] == '/') return std::nullopt;
  size_t end = s.find_first_of(" \t");
  std::string word = s.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  if (word.find('/') != std::string::npos) return std::nullopt;
  std::string arg =
      end == std::string::npos ? "" : std::string(absl::StripAsciiWhitespace(s.substr(end)));
  std::string lower = absl::AsciiStrToLower(word);
  for (const Entry& e : Commands()) {
    if (lower == e.name) return SlashCommand{e.kind, arg, word};
  }
  return SlashCommand{SlashCommand::kUnknown, arg, word};
}

std::string MissingArgument(const SlashCommand& c) {
  if (!c.argument.empty()) return "";
  if (c.kind == SlashCommand::kModel) return "/model needs a model name, e.g. /model gpt-4.1";
  if (c.kind == SlashCommand::kAllow) return "/allow needs a rule, e.g. /allow bash(make *)";
  if (c.kind == SlashCommand::kMode)
    return "/mode needs a mode: ask, auto, edits, yes or read-only";
  return "";
}

std::vector<std::pair<std::string, std::string>> SlashCommandList() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Entry& e : Commands()) {
    if (e.usage[0] != '\0') out.emplace_back(e.name, e.what);
  }
  return out;
}

std::string SlashHelp() {
  std::string out;
  for (const Entry& e : Commands()) {
    if (e.usage[0] == '\0') continue;
    std::string usage = e.usage;
    usage.resize(std::max<size_t>(usage.size(), 13), ' ');
    out += "  " + usage + " " + e.what + "\n";
  }
  out +=
      "  Ctrl-C cancels a running turn; Ctrl-D at an empty prompt detaches.\n"
      "  While a turn runs, Enter steers it (the model reads the line at its next step);\n"
      "  Alt-Enter queues the line for when the turn ends.\n"
      "  Ctrl-O shows or hides what each running subagent is doing (its tool, its last line).\n"
      "  A line ending in \\ continues on the next; pasted newlines stay in the prompt.\n"
      "  Tab completes commands, @files of the project and paths; Ctrl-R searches the history.\n";
  return out;
}

}  // namespace agent::client
