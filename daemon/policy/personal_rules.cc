#include "daemon/policy/personal_rules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "daemon/policy/rules.h"

namespace agent::daemon::policy {
namespace {

constexpr char kIgnoreLine[] = "/settings.local.json";

// `.agent/` is repository content: opened without following a symlink, like the file in it.
absl::Status IgnoreLocalSettings(const std::string& project) {
  absl::StatusOr<DirFd> root = DirFd::Open(project, /*create=*/false);
  if (!root.ok()) return root.status();
  absl::StatusOr<DirFd> dir = root->OpenSubdir(".agent", /*create=*/true);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<std::string> text = ReadFileToString(*dir, ".gitignore");
  if (!text.ok() && !absl::IsNotFound(text.status())) return text.status();
  std::string content = text.ok() ? *text : "";
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    if (line == kIgnoreLine || line == "settings.local.json") return absl::OkStatus();
  }
  if (!content.empty() && content.back() != '\n') content += '\n';
  absl::StrAppend(&content, kIgnoreLine, "\n");
  return WriteFileAtomically(*dir, ".gitignore", content);
}

}  // namespace

std::string ProjectLocalSettingsPath(const std::string& project) {
  return project + "/.agent/settings.local.json";
}

absl::Status RecordPersonalAllowRules(const std::string& project,
                                      const std::vector<std::string>& rules) {
  if (absl::Status s = AppendAllowRules(ProjectLocalSettingsPath(project), rules); !s.ok()) {
    return s;
  }
  return IgnoreLocalSettings(project);
}

}  // namespace agent::daemon::policy
