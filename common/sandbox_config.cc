#include "common/sandbox_config.h"

#include <cstdlib>
#include <string_view>

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
    const absl::Status bad = absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": \"sandbox_network\" must be true, false, or {\"allow\": [domains], "
                     "\"deny\": [domains]}"));
    if (it->is_boolean()) {
      out->network = it->get<bool>();
    } else if (it->is_object()) {
      for (auto& [key, list] : it->items()) {
        if ((key != "allow" && key != "deny") || !list.is_array()) return bad;
        std::vector<std::string>& into = key == "allow" ? out->network_allow : out->network_deny;
        for (const Json& d : list) {
          if (!d.is_string()) return bad;
          into.push_back(d.get<std::string>());
        }
      }
    } else {
      return bad;
    }
  }
  for (const char* key : {"sandbox_hide", "sandbox_show"}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    const absl::Status bad = absl::InvalidArgumentError(
        absl::StrCat(path, ": \"", key, "\" must be a list of absolute or ~/ paths"));
    if (!it->is_array()) return bad;
    std::vector<std::string> paths;
    for (const Json& p : *it) {
      if (!p.is_string()) return bad;
      const std::string s = p.get<std::string>();
      if (!s.starts_with("/") && !s.starts_with("~/")) return bad;
      paths.push_back(s);
    }
    if (std::string_view(key) == "sandbox_hide") {
      out->hide = std::move(paths);
    } else {
      out->show = std::move(paths);
    }
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
