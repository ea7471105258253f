#include "daemon/sandbox/confined_command.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "daemon/sandbox/git_control.h"

namespace agent::daemon::sandbox {

absl::StatusOr<ConfinedCommand> PrepareConfined(const Sandbox& box, const std::string& workdir,
                                                const std::string& cwd, const std::string& command,
                                                bool network,
                                                std::function<void(const ProxyEvent&)> show,
                                                bool read_only) {
  auto git = std::make_shared<GitEntries>();
  const bool writes = box.policy().mode == SandboxMode::kWorkspaceWrite && !read_only;
  if (writes) *git = FindGitEntries(workdir);
  absl::StatusOr<std::unique_ptr<NetworkProxy>> started = box.StartProxy(network, std::move(show));
  if (!started.ok()) return started.status();
  std::shared_ptr<NetworkProxy> proxy = *std::move(started);
  SandboxTarget target{workdir, cwd};
  target.git = git.get();
  target.read_only = read_only;
  if (proxy != nullptr) target.proxy_dir = proxy->dir();
  ConfinedCommand out;
  out.argv = box.Wrap(target, command, network);
  out.after = [writes, git, proxy, workdir]() mutable {
    std::string note = writes ? SetAsideNote(SetAsideNewGitEntries(workdir, *git)) : "";
    if (proxy != nullptr) {
      std::string refused = RefusedConnectionsNote(proxy->Refused());
      if (proxy->Unreported() > 0) {
        absl::StrAppend(&refused, refused.empty() ? "" : "\n",
                        "[sandbox network: ", proxy->Unreported(), " more connections not listed]");
      }
      proxy.reset();
      if (!refused.empty()) absl::StrAppend(&note, note.empty() ? "" : "\n", refused);
    }
    return note;
  };
  return out;
}

}  // namespace agent::daemon::sandbox
