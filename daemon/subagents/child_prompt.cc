#include "daemon/subagents/child_prompt.h"

#include "absl/strings/str_cat.h"
#include "daemon/context/environment.h"

namespace agent::daemon::subagents {
namespace {

constexpr char kSubagentNote[] =
    "# Working as a subagent\n"
    "Another agent gave you the task in the user message. It receives only your final reply "
    "(not your tool calls) as the result, and nobody can answer questions: work on your own, "
    "then end with a complete, self-contained answer.";

}  // namespace

BuiltSystemPrompt ChildSystemPrompt(const AgentDefinition& def, const std::string& workdir,
                                    const std::string& cwd, absl::Time now) {
  BuiltSystemPrompt usual = BuildSystemPromptFor(workdir, cwd, now);
  const std::string instructions = usual.text.substr(usual.base_chars);
  std::string base;
  if (def.prompt.empty()) {
    base = usual.text.substr(0, usual.base_chars);
    // The usual prompt's line on `task`: a child is not offered the tool unless its
    // definition lists it (and the built-in one does not).
    if (size_t at = base.find("\n- task "); at != std::string::npos) {
      size_t end = base.find('\n', at + 1);
      base.erase(at, end == std::string::npos ? std::string::npos : end - at);
    }
  } else {
    const std::string env = context::RenderEnvironment(
        context::CollectEnvironment(workdir, cwd.empty() ? workdir : cwd, now));
    base = absl::StrCat(def.prompt, "\n\n# Environment\n", env);
  }
  absl::StrAppend(&base, "\n\n", kSubagentNote);
  BuiltSystemPrompt out = std::move(usual);
  out.base_chars = base.size();
  out.text = base + instructions;
  return out;
}

}  // namespace agent::daemon::subagents
