#include "daemon/policy/rules.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/policy/bash_split.h"
#include "daemon/policy/command_analysis.h"
#include "daemon/policy/command_pattern.h"
#include "daemon/policy/command_prefix.h"
#include "daemon/policy/command_words.h"
#include "daemon/policy/path_glob.h"

namespace agent::daemon::policy {
namespace {

constexpr std::string_view kBash = "bash";

bool IsToolNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == ':';
}

// Tool names compare case-insensitively, so `Bash(git status)` written the Claude Code way
// works too (and, more importantly, `Bash` in a deny list still denies).
bool SameTool(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Debian's Abseil has its own string_view, so its string helpers do not take ours.
std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

struct ToolRules {
  std::vector<const Rule*> allow;
  std::vector<const Rule*> deny;
  bool allow_all = false;  // an allow rule without pattern
  bool deny_all = false;   // a deny rule without pattern
};

// MCP tools are `mcp__<server>__<tool>`; a rule `mcp__<server>__*` covers every tool of one
// server (server names hold no "__", see daemon/mcp/tool_shape.h).
bool IsMcpWildcard(std::string_view rule_tool) {
  return rule_tool.size() > 7 && SameTool(rule_tool.substr(0, 5), "mcp__") &&
         rule_tool.substr(rule_tool.size() - 3) == "__*";
}

bool IsMcpTool(std::string_view tool) {
  return tool.size() > 5 && SameTool(tool.substr(0, 5), "mcp__");
}

// The server part of `mcp__<server>__<tool>` (server names hold no "__" and do not end in "_",
// common/mcp_server_name.h, so the first "__" after the prefix ends it); empty when none.
std::string_view McpServerOf(std::string_view tool) {
  const size_t end = tool.find("__", 5);
  return end == std::string_view::npos ? std::string_view() : tool.substr(5, end - 5);
}

// Built-in tools match in any case (`Bash`); an MCP rule names one server exactly, in its
// case: `mcp__gh__*` covers neither `gh_`'s tools nor `GH`'s.
bool RuleCoversTool(std::string_view rule_tool, std::string_view tool) {
  if (!IsMcpTool(rule_tool) && !IsMcpTool(tool)) return SameTool(rule_tool, tool);
  if (!IsMcpTool(rule_tool) || !IsMcpTool(tool)) return false;
  if (!IsMcpWildcard(rule_tool)) return rule_tool.substr(5) == tool.substr(5);
  const std::string_view server = rule_tool.substr(5, rule_tool.size() - 8);
  return !server.empty() && McpServerOf(tool) == server && tool.size() > 5 + server.size() + 2;
}

ToolRules RulesFor(const RuleSet& rules, std::string_view tool) {
  ToolRules out;
  for (const Rule& r : rules.allow) {
    if (!RuleCoversTool(r.tool, tool)) continue;
    if (r.pattern.empty()) {
      out.allow_all = true;
    } else {
      out.allow.push_back(&r);
    }
  }
  for (const Rule& r : rules.deny) {
    if (!RuleCoversTool(r.tool, tool)) continue;
    if (r.pattern.empty()) {
      out.deny_all = true;
    } else {
      out.deny.push_back(&r);
    }
  }
  return out;
}

// The string argument a tool's patterns are matched against, or null when absent.
const std::string* PatternArgument(std::string_view tool, const Json& args) {
  if (!args.is_object()) return nullptr;
  auto it = args.find(SameTool(tool, kBash) ? "command" : "path");
  if (it == args.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

bool DenyMatchesCommand(const std::vector<CommandPattern>& deny, std::string_view command) {
  const std::string stripped = StripLeadingAssignments(command);
  for (const CommandPattern& p : deny) {
    if (MatchCommandPattern(p, command) || MatchCommandPattern(p, stripped)) return true;
  }
  return false;
}

// Shell strings within shell strings followed (`eval "bash -c '…'"`); deeper is opaque.
constexpr int kMaxShellStringDepth = 8;
// Simple commands analysed for one call's deny check; beyond it, opaque.
constexpr int kMaxDenyChecks = 1024;
// Hidden commands added to one call's parts; beyond it, opaque.
constexpr size_t kMaxHiddenParts = 256;

struct AnalyzedPart {
  std::string text;
  CommandAnalysis analysis;
};

// A bash call's simple commands (ParseBashCommand), then the commands hidden in quoted text
// bash evaluates as code (command_analysis.h): each must be allowed on its own.
struct BashCall {
  BashCommandParts split;
  std::vector<AnalyzedPart> parts;
};

BashCall AnalyzeBash(std::string_view command) {
  BashCall call;
  call.split = ParseBashCommand(command);
  for (const std::string& part : call.split.parts) call.parts.push_back({part, {}});
  size_t hidden = 0;
  for (size_t k = 0; k < call.parts.size(); ++k) {
    CommandAnalysis analysis = AnalyzeCommand(call.parts[k].text);
    size_t promoted = 0;
    for (std::string& h : analysis.hidden_commands) {
      if (++hidden > kMaxHiddenParts) {
        analysis.opaque = true;
        break;
      }
      call.parts.push_back({std::move(h), {}});
      ++promoted;
    }
    // A promoted command is checked as a part of its own; the moved-from strings go.
    auto& h = analysis.hidden_commands;
    h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(promoted));
    call.parts[k].analysis = std::move(analysis);
  }
  return call;
}

// Tries deny patterns on a simple command in every spelling it has and on everything it runs,
// recursively, noting whether something runs that the text does not show.
class DenyCheck {
 public:
  explicit DenyCheck(const std::vector<CommandPattern>* deny) : deny_(deny) {}

  bool Denied(std::string_view text, const CommandAnalysis& analysis, int depth) {
    if (DenyMatchesCommand(*deny_, text)) return true;
    if (--budget_ < 0) {
      opaque_ = true;
      return false;
    }
    for (const std::string& form : analysis.forms) {
      if (DenyMatchesCommand(*deny_, form)) return true;
    }
    if (analysis.opaque) opaque_ = true;
    for (const std::string& hidden : analysis.hidden_commands) {
      if (Denied(hidden, AnalyzeCommand(hidden), depth + 1)) return true;
    }
    for (const std::string& string : analysis.shell_strings) {
      if (depth >= kMaxShellStringDepth) {
        opaque_ = true;
        continue;
      }
      const BashCommandParts inner = ParseBashCommand(string);
      if (inner.exact_only) opaque_ = true;
      for (const std::vector<std::string>* list : {&inner.parts, &inner.fragments}) {
        for (const std::string& part : *list) {
          if (Denied(part, AnalyzeCommand(part), depth + 1)) return true;
        }
      }
    }
    return false;
  }

  bool opaque() const { return opaque_; }

 private:
  const std::vector<CommandPattern>* deny_;
  int budget_ = kMaxDenyChecks;
  bool opaque_ = false;
};

// Whether a deny pattern matches any part, fragment or what they run; *opaque when something
// runs that no deny pattern could be tried on.
bool DenyMatchesCall(const ToolRules& rules, const BashCall& call, bool* opaque) {
  std::vector<CommandPattern> deny;
  deny.reserve(rules.deny.size());
  for (const Rule* r : rules.deny) deny.push_back(CompileCommandPattern(r->pattern));
  DenyCheck check(&deny);
  bool denied = false;
  for (const AnalyzedPart& part : call.parts) {
    denied = denied || check.Denied(part.text, part.analysis, 0);
  }
  // Deny patterns also see what was recognised before a parse failure.
  for (const std::string& fragment : call.split.fragments) {
    denied = denied || check.Denied(fragment, AnalyzeCommand(fragment), 0);
  }
  // A command that could not be split may run more than its fragments show (`f() { rm x; }; f`).
  *opaque = check.opaque() || call.split.exact_only;
  return denied;
}

// Whether `part` writes through a redirection to a file that may be outside the project: a
// redirection is a write, and a rule allowing the command (`bash(git status *)`) does not
// allow writing `/tmp/out.txt` or `~/.bashrc` with it.
bool WritesOutsideProject(const AnalyzedPart& part) {
  for (const ShellWord& target : OutputRedirectionTargets(part.text)) {
    if (TargetMayLeaveProject(target)) return true;
  }
  return false;
}

bool PartAllowed(const std::vector<CommandPattern>& allow, const BashCall& call,
                 const AnalyzedPart& part) {
  // A command that could not be split, or runs a command or string it did not name, or whose
  // command is only known at run time, or writes outside the project through a redirection:
  // only an exact rule vouches for it.
  const bool exact_only = call.split.exact_only || part.analysis.runs_other ||
                          part.analysis.opaque || WritesOutsideProject(part);
  return std::any_of(allow.begin(), allow.end(), [&](const CommandPattern& p) {
    if (p.exact()) return p.pieces[0] == part.text;
    return !exact_only && MatchCommandPattern(p, part.text);
  });
}

Verdict EvaluateBash(const ToolRules& rules, const std::string& command) {
  const BashCall call = AnalyzeBash(command);
  bool opaque = false;
  if (!rules.deny.empty() && DenyMatchesCall(rules, call, &opaque)) return Verdict::kDeny;
  // With deny patterns present, a command they could not see through is asked about even
  // when the whole tool is allowed.
  if (rules.allow_all) return opaque ? Verdict::kAsk : Verdict::kAllow;
  if (call.parts.empty()) return Verdict::kAsk;  // nothing to approve: a person decides
  // What runs stops at a NUL byte, so no rule written for the text can vouch for it.
  if (command.find('\0') != std::string::npos) return Verdict::kAsk;

  std::vector<CommandPattern> allow;
  allow.reserve(rules.allow.size());
  for (const Rule* r : rules.allow) allow.push_back(CompileCommandPattern(r->pattern));
  for (const AnalyzedPart& part : call.parts) {
    if (!PartAllowed(allow, call, part)) return Verdict::kAsk;
  }
  return Verdict::kAllow;
}

Verdict EvaluatePath(const ToolRules& rules, const std::string& raw_path) {
  const NormalizedPath path = NormalizePath(raw_path);
  // Deny sees the path with `..` resolved, and absoluteness is ignored on both sides: a deny
  // that matches too much refuses a call, one that matches too little lets it through.
  const std::vector<std::string> resolved = ResolveDotDot(path.segments);
  // `/secrets/**` in a deny list may be meant as anchored at the workdir: it denies both.
  for (const Rule* r : rules.deny) {
    if (MatchPathGlob(r->pattern, resolved)) return Verdict::kDeny;
  }
  // Outside the workdir, not knowably inside it, or cut short at a NUL by the file system
  // call: never allowed by a rule.
  if (path.has_dotdot || path.absolute || raw_path.empty() ||
      raw_path.find('\0') != std::string::npos) {
    return Verdict::kAsk;
  }
  if (rules.allow_all) return Verdict::kAllow;
  for (const Rule* r : rules.allow) {
    if (!r->pattern.empty() && r->pattern.front() == '/') continue;
    if (MatchPathGlob(r->pattern, path.segments)) return Verdict::kAllow;
  }
  return Verdict::kAsk;
}

}  // namespace

absl::StatusOr<Rule> ParseRule(std::string_view text) {
  text = Trim(text);
  const std::string quoted(text);  // for messages
  const size_t open = text.find('(');
  const std::string_view tool = text.substr(0, open);
  if (tool.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("rule `", quoted, "`: no tool name"));
  }
  const std::string_view name = IsMcpWildcard(tool) ? tool.substr(0, tool.size() - 1) : tool;
  if (!std::all_of(name.begin(), name.end(), IsToolNameChar)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rule `", quoted, "`: tool name may hold only letters, digits and _-.:"));
  }
  Rule rule;
  rule.tool = std::string(tool);
  if (open == std::string_view::npos) return rule;
  if (text.back() != ')' || text.size() < open + 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("rule `", quoted, "`: unbalanced parentheses (expected `tool(pattern)`)"));
  }
  // Kept verbatim: bash patterns are whitespace-normalised when compiled (quote-aware, so the
  // exact rule for `echo 'a ` keeps its quoted trailing space), path patterns are literal.
  const std::string_view pattern = text.substr(open + 1, text.size() - open - 2);
  // Blank as bash splits words (space, tab, newline): a lone CR is a command of its own.
  if (pattern.find_first_not_of(" \t\n") == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("rule `", quoted, "`: empty pattern (write `",
                                                   rule.tool, "` to match every call)"));
  }
  rule.pattern = std::string(pattern);
  return rule;
}

std::string FormatRule(const Rule& rule) {
  if (rule.pattern.empty()) return rule.tool;
  return absl::StrCat(rule.tool, "(", rule.pattern, ")");
}

Verdict Evaluate(const RuleSet& rules, std::string_view tool, const Json& args) {
  const ToolRules mine = RulesFor(rules, tool);
  if (mine.deny_all) return Verdict::kDeny;
  const std::string* subject = PatternArgument(tool, args);
  if (subject == nullptr) {
    // Nothing to match patterns against: a deny pattern fails closed, an allow pattern never
    // matches.
    if (!mine.deny.empty()) return Verdict::kDeny;
    return mine.allow_all ? Verdict::kAllow : Verdict::kAsk;
  }
  if (SameTool(tool, kBash)) return EvaluateBash(mine, *subject);
  return EvaluatePath(mine, *subject);
}

std::vector<std::string> AllowingRules(const RuleSet& rules, std::string_view tool,
                                       const Json& args) {
  if (Evaluate(rules, tool, args) != Verdict::kAllow) return {};
  RuleSet one;
  one.deny = rules.deny;
  for (const Rule& r : rules.allow) {
    one.allow = {r};
    if (Evaluate(one, tool, args) == Verdict::kAllow) return {FormatRule(r)};
  }
  std::vector<std::string> needed;
  RuleSet without = rules;
  for (size_t i = 0; i < rules.allow.size(); ++i) {
    without.allow = rules.allow;
    without.allow.erase(without.allow.begin() + static_cast<std::ptrdiff_t>(i));
    if (Evaluate(without, tool, args) != Verdict::kAllow)
      needed.push_back(FormatRule(rules.allow[i]));
  }
  return needed;
}

namespace {

bool HasControlCharacter(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) return true;
    // C1 controls are U+0080-U+009F, in UTF-8 0xC2 0x80-0x9F.
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> ProposeRules(std::string_view tool, const Json& args) {
  // An MCP tool's arguments mean nothing to the rules: "always" allows the tool.
  if (tool.size() > 5 && SameTool(tool.substr(0, 5), "mcp__")) return {std::string(tool)};
  std::vector<std::string> out;
  const std::string* subject = PatternArgument(tool, args);
  if (subject == nullptr || subject->find('\0') != std::string::npos) return out;
  // A rule is shown to a person before it is recorded: none holds a character that could act on
  // their terminal (C0 but tab and newline, DEL, C1) and so show something other than what is
  // recorded. A newline (a heredoc's, in a part) is shown as an escape by the client.
  if (SameTool(tool, kBash)) {
    const std::vector<AnalyzedPart> parts = AnalyzeBash(*subject).parts;
    for (const AnalyzedPart& part : parts) {
      if (HasControlCharacter(part.text)) return {};
    }
    for (const AnalyzedPart& part : parts) {
      std::string rule = FormatRule(Rule{std::string(tool), EscapeCommandPattern(part.text)});
      if (std::find(out.begin(), out.end(), rule) == out.end()) out.push_back(std::move(rule));
    }
    return out;
  }
  const NormalizedPath path = NormalizePath(*subject);
  // A rule for such a path could never allow it (see EvaluatePath), so none is proposed.
  if (path.has_dotdot || path.absolute || path.segments.empty()) return out;
  if (HasControlCharacter(*subject)) return out;
  out.push_back(FormatRule(Rule{std::string(tool), EscapePathGlob(path.Joined())}));
  return out;
}

std::vector<std::string> ProposePrefixRules(std::string_view tool, const Json& args) {
  // An MCP tool: every tool of its server (`mcp__gh__*`), beside the tool alone.
  if (IsMcpTool(tool)) {
    const std::string_view server = McpServerOf(tool);
    if (server.empty()) return ProposeRules(tool, args);
    return {"mcp__" + std::string(server) + "__*"};
  }
  std::vector<std::string> exact = ProposeRules(tool, args);
  const std::string* subject = PatternArgument(tool, args);
  if (!SameTool(tool, kBash) || exact.empty() || subject == nullptr) return exact;
  std::vector<std::string> out;
  for (const AnalyzedPart& part : AnalyzeBash(*subject).parts) {
    std::optional<std::string> prefix = CommandPrefix(part.text);
    if (prefix.has_value()) {
      // A prefix rule that would not allow this very part (a redirection out of the project
      // needs what a write needs) is no proposal: the exact rule instead.
      RuleSet alone;
      alone.allow.push_back(Rule{std::string(tool), EscapeCommandPattern(*prefix) + " *"});
      if (Evaluate(alone, tool, Json{{"command", part.text}}) != Verdict::kAllow) prefix.reset();
    }
    std::string rule =
        FormatRule(Rule{std::string(tool), prefix.has_value() ? EscapeCommandPattern(*prefix) + " *"
                                                              : EscapeCommandPattern(part.text)});
    if (std::find(out.begin(), out.end(), rule) == out.end()) out.push_back(std::move(rule));
  }
  // The whole line as the rules see it (hidden substitutions, redirections of every part):
  // proposals that would not allow the very call asked about fall back to the exact ones.
  RuleSet proposed;
  for (const std::string& r : out) {
    absl::StatusOr<Rule> rule = ParseRule(r);
    if (!rule.ok()) return exact;
    proposed.allow.push_back(*std::move(rule));
  }
  if (Evaluate(proposed, tool, args) != Verdict::kAllow) return exact;
  return out;
}

std::vector<std::string> SplitCompoundCommand(std::string_view command) {
  return ParseBashCommand(command).parts;
}

}  // namespace agent::daemon::policy
