#include "common/command_lookup.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace agent {

absl::StatusOr<std::string> FindCommandOnPath(const std::string& command,
                                              std::string_view search_path) {
  if (command.find('/') != std::string::npos) return command;
  if (command.empty() || command == "." || command == "..") {
    return absl::NotFoundError(absl::StrCat("command not found: \"", command, "\""));
  }
  for (absl::string_view dir :
       absl::StrSplit(absl::string_view(search_path.data(), search_path.size()), ':')) {
    // An empty or relative entry would mean the server's cwd: the repository.
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate = absl::StrCat(std::string(dir), "/", command);
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("command not found: ", command,
                   " is on no absolute directory of the daemon's PATH (a server's own \"env\" "
                   "PATH is not searched; give a path with a slash to run another program)"));
}

}  // namespace agent
