#include "daemon/hooks/hook_loader.h"

#include <fcntl.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/dir_fd.h"
#include "common/file_stamp.h"
#include "common/json.h"
#include "common/paths.h"
#include "daemon/hooks/hook_trust.h"

namespace agent::daemon::hooks {
namespace {

constexpr size_t kMaxSettingsBytes = 1 << 20;

// The settings object of a file, or null when the file is missing.
absl::StatusOr<Json> ReadSettings(absl::StatusOr<std::string> text, const std::string& path) {
  if (absl::IsNotFound(text.status())) return Json();
  if (!text.ok()) return text.status();
  absl::StatusOr<Json> j = ParseJson(*text);
  if (!j.ok() || !j->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  return *j;
}

absl::StatusOr<Json> ReadProjectSettings(const std::string& project) {
  const std::string path = ProjectSettingsPath(project);
  absl::StatusOr<DirFd> root = DirFd::Open(project, false);
  if (!root.ok()) return root.status();
  absl::StatusOr<DirFd> dir = root->OpenSubdir(".agent", false);
  if (absl::IsNotFound(dir.status())) return Json();
  if (!dir.ok()) return dir.status();
  // Repository content: bounded, so a huge file cannot stall every tool call.
  absl::StatusOr<int> fd = dir->OpenFile("settings.json", O_RDONLY);
  if (!fd.ok()) return ReadSettings(fd.status(), path);
  return ReadSettings(ReadBoundedFile(*fd, path, kMaxSettingsBytes), path);
}

absl::StatusOr<std::vector<HookCommand>> HooksOf(const absl::StatusOr<Json>& settings,
                                                 HookOrigin origin, const std::string& path) {
  if (!settings.ok()) return settings.status();
  if (!settings->is_object()) return std::vector<HookCommand>{};
  auto it = settings->find("hooks");
  if (it == settings->end()) return std::vector<HookCommand>{};
  return ParseHooks(*it, origin, path);
}

HookSet ReadHooks(const HookFiles& files) {
  HookSet set;
  absl::StatusOr<Json> user =
      files.user_config.empty()
          ? absl::StatusOr<Json>(Json())
          : ReadSettings(ReadFileToString(files.user_config), files.user_config);
  if (user.ok() && user->is_object()) {
    set.stop_limit = static_cast<int>(
        std::clamp<int64_t>(GetInt(*user, "hooks_stop_limit", kDefaultStopLimit), 0, 100));
  }
  auto mine = HooksOf(user, HookOrigin::kUser, files.user_config);
  if (mine.ok()) {
    set.commands = std::move(*mine);
  } else {
    set.problems.emplace_back(mine.status().message());
  }
  if (files.project.empty()) return set;
  auto theirs = ProjectHooks(files.project);
  if (!theirs.ok()) {
    set.problems.emplace_back(theirs.status().message());
    return set;
  }
  if (theirs->empty()) return set;
  const std::set<std::string> trusted = TrustedHookKeys(files.trust_store, files.project);
  for (HookCommand& c : *theirs) {
    (trusted.count(c.TrustKey()) ? set.commands : set.untrusted).push_back(std::move(c));
  }
  return set;
}

}  // namespace

HookFiles DefaultHookFiles(const std::string& project) {
  return {ConfigDir() + "/config.json", project, TrustedHooksPath()};
}

absl::StatusOr<std::vector<HookCommand>> ProjectHooks(const std::string& project) {
  return HooksOf(ReadProjectSettings(project), HookOrigin::kProject, ProjectSettingsPath(project));
}

// Asked before and after every tool call: the files are read again only when one changed.
HookSet LoadHooks(const HookFiles& files) {
  static auto* read = new ReadOnChangeByKey<HookSet>;  // outlives exit: threads may read
  std::vector<std::string> paths = {files.user_config};
  if (!files.project.empty()) {
    paths.push_back(ProjectSettingsPath(files.project));
    paths.push_back(files.trust_store);
  }
  return read->Get(absl::StrCat(files.user_config, "\n", files.project, "\n", files.trust_store),
                   paths, [&] { return ReadHooks(files); });
}

}  // namespace agent::daemon::hooks
