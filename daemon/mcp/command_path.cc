#include "daemon/mcp/command_path.h"

#include <cstdlib>

#include "common/command_lookup.h"

namespace agent::daemon::mcp {

std::string DaemonSearchPath() {
  const char* path = std::getenv("PATH");
  return path != nullptr && path[0] != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
}

absl::StatusOr<std::string> FindCommand(const std::string& command, std::string_view search_path) {
  return FindCommandOnPath(command, search_path);  // common/: `agent mcp add` checks the same
}

}  // namespace agent::daemon::mcp
