// Session::ExpandPrompt: a prompt's custom command and @mentions, for this session's project
// and its permission rules (prompt_expansion.h). Runs on one of the service's disk workers
// (AgentService::SendPrompt), without the session's mutex: it reads files, and only immutable
// members.
#include "daemon/prompt/custom_commands.h"
#include "daemon/session/session.h"

namespace agent::daemon {

PromptExpansion Session::ExpandPrompt(std::string_view text) const {
  ExpansionContext ctx;
  ctx.workdir = workdir();
  ctx.cwd = state_.cwd();  // @path resolves from where the session was started
  ctx.commands_dir = UserCommandsDir();
  ctx.rules = rules_->Rules();
  return agent::daemon::ExpandPrompt(ctx, text);
}

}  // namespace agent::daemon
