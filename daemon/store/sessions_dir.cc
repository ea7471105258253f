#include "daemon/store/sessions_dir.h"

#include <openssl/evp.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "common/status_macros.h"

namespace agent::daemon {
namespace {

constexpr size_t kMaxBaseChars = 40;
constexpr size_t kHashHexDigits = 16;

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    size = 0;  // cannot happen with a built-in digest; an empty hash still names a directory
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), static_cast<size_t>(size)));
}

}  // namespace

std::string ProjectKey(const std::string& workdir) {
  std::string base = workdir.substr(workdir.find_last_of('/') + 1);
  // Only characters that read the same in every shell and file manager.
  base.erase(std::remove_if(base.begin(), base.end(),
                            [](char c) {
                              return !absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-';
                            }),
             base.end());
  if (base.size() > kMaxBaseChars) base.resize(kMaxBaseChars);
  if (base.empty() || base[0] == '.') base.insert(0, "p");  // "/" or ".hidden": not hidden here
  return absl::StrCat(base, "-", Sha256Hex(workdir).substr(0, kHashHexDigits));
}

std::string ProjectSessionsDir(const std::string& workdir) {
  return absl::StrCat(StateDir(), "/projects/", ProjectKey(workdir), "/sessions");
}

absl::StatusOr<DirFd> OpenProjectStateDir(const std::string& workdir, bool create) {
  // The state directory is the user's choice and may be reached through a link; below it
  // every component is ours and opened without following one.
  ASSIGN_OR_RETURN(DirFd state, DirFd::Open(StateDir(), create));
  ASSIGN_OR_RETURN(DirFd projects, state.OpenSubdir("projects", create));
  return projects.OpenSubdir(ProjectKey(workdir), create);
}

absl::StatusOr<DirFd> OpenProjectSessionsDir(const std::string& workdir, bool create) {
  ASSIGN_OR_RETURN(DirFd project, OpenProjectStateDir(workdir, create));
  return project.OpenSubdir("sessions", create);
}

}  // namespace agent::daemon
