#include "client/view/allow_warnings.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace agent::client {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  absl::AsciiStrToLower(&out);
  return out;
}

}  // namespace

std::vector<std::string> AllowRuleWarnings(std::string_view rule_view) {
  const std::string rule(rule_view);
  std::vector<std::string> out;
  const size_t open = rule.find('(');
  const std::string tool = Lower(rule.substr(0, open));
  std::string pattern;
  if (open != std::string::npos && rule.size() > open + 1 && rule.back() == ')') {
    pattern = rule.substr(open + 1, rule.size() - open - 2);
  }
  const bool everything = pattern.empty() || pattern == "*" || pattern == "**";
  if (tool == "bash" && everything) {
    out.push_back(
        "bash(*) allows every command without asking: whatever the model (or a prompt "
        "injected into it) runs, as you. A prefix such as bash(make *) or bash(git status *) "
        "is what people usually mean");
    return out;
  }
  const bool path_tool = tool == "write_file" || tool == "edit_file";
  if (path_tool && (pattern.empty() || pattern == "**")) {
    out.push_back(absl::StrCat(tool,
                               " without a narrower path allows writing every file of "
                               "the project without asking"));
  } else if (path_tool && pattern.find('*') != std::string::npos &&
             pattern.find("**") == std::string::npos) {
    out.push_back(absl::StrCat(
        "`*` does not match `/`: ", rule, " matches only files directly in ",
        pattern.find('/') == std::string::npos ? "the project's top" : "that folder", "; say ",
        tool, "(**) for every file, or ", tool, "(src/**) for a folder and everything under it"));
  }
  return out;
}

}  // namespace agent::client
