#include "common/mcp_server_name.h"

#include "absl/strings/ascii.h"

namespace agent {

bool ValidMcpServerName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return name.find("__") == std::string_view::npos && name.back() != '_';
}

std::string McpServerNameKey(std::string_view name) {
  while (!name.empty() && (name.back() == '_' || name.back() == '-')) name.remove_suffix(1);
  std::string key(name);
  absl::AsciiStrToLower(&key);
  return key;
}

bool ValidMcpServerUrl(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.size() > scheme.size() && url.substr(0, scheme.size()) == scheme) return true;
  }
  return false;
}

}  // namespace agent
