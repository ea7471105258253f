#include "common/sandbox_config.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace agent {

bool IsSandboxMode(const std::string& mode) {
  return mode == "workspace-write" || mode == "read-only" || mode == "off";
}

absl::Status SandboxConfigFromJson(const Json& j, const std::string& path, SandboxConfig* out) {
  if (auto it = j.find("sandbox"); it != j.end()) {
    if (!it->is_string() || !IsSandboxMode(it->get<std::string>())) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": \"sandbox\" must be \"workspace-write\", \"read-only\" or \"off\""));
    }
    out->mode = it->get<std::string>();
  }
  if (auto it = j.find("sandbox_network"); it != j.end()) {
    if (!it->is_boolean()) {
      return absl::InvalidArgumentError(absl::StrCat(path,
                                                     ": \"sandbox_network\" must be true "
                                                     "or false"));
    }
    out->network = it->get<bool>();
  }
  if (auto it = j.find("sandbox_hide"); it != j.end()) {
    const absl::Status bad = absl::InvalidArgumentError(
        absl::StrCat(path, ": \"sandbox_hide\" must be a list of absolute or ~/ paths"));
    if (!it->is_array()) return bad;
    std::vector<std::string> hide;
    for (const Json& p : *it) {
      if (!p.is_string()) return bad;
      const std::string s = p.get<std::string>();
      if (!s.starts_with("/") && !s.starts_with("~/")) return bad;
      hide.push_back(s);
    }
    out->hide = std::move(hide);
  }
  return absl::OkStatus();
}

absl::Status SandboxConfigFromEnv(SandboxConfig* out) {
  const char* mode = std::getenv("AGENT_SANDBOX");
  if (mode == nullptr || *mode == '\0') return absl::OkStatus();
  if (!IsSandboxMode(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("AGENT_SANDBOX=", mode, ": must be workspace-write, read-only or off"));
  }
  out->mode = mode;
  return absl::OkStatus();
}

}  // namespace agent
