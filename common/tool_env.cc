#include "common/tool_env.h"

#include <fnmatch.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <unordered_set>

extern char** environ;

namespace agent {
namespace {

// Name fragments that mark a secret (matched case-insensitively anywhere in the name).
constexpr std::string_view kSecretWords[] = {"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD"};

bool ContainsIgnoringCase(std::string_view haystack, std::string_view upper_needle) {
  auto it =
      std::search(haystack.begin(), haystack.end(), upper_needle.begin(), upper_needle.end(),
                  [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
  return it != haystack.end();
}

bool AnyGlobMatches(const std::vector<std::string>& globs, const std::string& name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return ::fnmatch(g.c_str(), name.c_str(), 0) == 0;
  });
}

bool BuiltInAllows(std::string_view name) {
  if (name.substr(0, 6) == "AGENT_" || NameLooksSecret(name)) return false;
  return AnyGlobMatches(ToolEnvAllowed(), std::string(name));
}

std::string HomeDir() {
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
  passwd pw;
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    return found->pw_dir;
  }
  return "/";
}

}  // namespace

bool NameLooksSecret(std::string_view name) {
  return std::any_of(std::begin(kSecretWords), std::end(kSecretWords),
                     [&](std::string_view w) { return ContainsIgnoringCase(name, w); });
}

const std::vector<std::string>& ToolEnvAllowed() {
  // What a build, a test run or a shell needs; nothing that names a socket of another agent
  // (SSH_AUTH_SOCK, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR, DISPLAY) or
  // may carry a credential (URLs, proxies, registries' configs).
  static const auto* kAllowed = new std::vector<std::string>{
      // the shell and the terminal
      "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "HOSTNAME", "TERM", "COLORTERM",
      "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "COLUMNS", "LINES", "EDITOR", "VISUAL", "PAGER",
      "LESS", "MANPATH", "INFOPATH", "TZ", "TMPDIR", "TEMP", "TMP",
      // locale
      "LANG", "LANGUAGE", "LC_*",
      // the user's directories (not XDG_RUNTIME_DIR: the agent's socket and other agents')
      "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS",
      "XDG_DATA_DIRS",
      // C and C++ builds
      "CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS",
      "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
      "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH", "CMAKE_GENERATOR", "CMAKE_BUILD_PARALLEL_LEVEL",
      "CCACHE_DIR", "CCACHE_BASEDIR", "CCACHE_NOHASHDIR",
      // language toolchains
      "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
      "PYTHONUNBUFFERED", "GOPATH", "GOROOT", "GOBIN", "GOFLAGS", "GOCACHE", "GOMODCACHE",
      "CARGO_HOME", "RUSTUP_HOME", "RUSTFLAGS", "JAVA_HOME", "GRADLE_USER_HOME", "NODE_PATH",
      "NODE_ENV", "NVM_DIR", "NVM_BIN",
      // git's identity and tools, certificates, CI markers
      "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
      "GIT_EDITOR", "GIT_PAGER", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
      "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CI", "DEBIAN_FRONTEND", "SOURCE_DATE_EPOCH"};
  return *kAllowed;
}

bool ToolEnvDrops(std::string_view name, const ToolEnvPolicy& policy) {
  const std::string n(name);
  if (AnyGlobMatches(policy.drop, n)) return true;
  if (AnyGlobMatches(policy.keep, n)) return false;
  return !BuiltInAllows(name);
}

std::vector<std::string> BuildToolEnvironment(const std::vector<std::string>& env,
                                              const ToolEnvPolicy& policy) {
  std::vector<std::string> out;
  out.reserve(env.size());
  std::unordered_set<std::string_view> seen;
  for (const std::string& entry : env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string_view name = std::string_view(entry).substr(0, eq);
    if (!seen.insert(name).second) continue;
    if (ToolEnvDrops(name, policy)) continue;
    out.push_back(entry);
  }
  return out;
}

void DropEntriesWithValue(std::vector<std::string>* env, std::string_view value) {
  if (value.empty()) return;
  env->erase(std::remove_if(env->begin(), env->end(),
                            [&](const std::string& e) {
                              const size_t eq = e.find('=');
                              return eq != std::string::npos &&
                                     std::string_view(e).substr(eq + 1) == value;
                            }),
             env->end());
}

ToolEnvPolicy MergeToolEnvPolicy(const ToolEnvPolicy& primary, const ToolEnvPolicy& fallback) {
  ToolEnvPolicy p;
  p.keep = primary.keep.empty() ? fallback.keep : primary.keep;
  p.drop = primary.drop.empty() ? fallback.drop : primary.drop;
  return p;
}

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

std::vector<std::string> MinimalToolEnvironment() {
  const char* lang = std::getenv("LANG");
  return {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + HomeDir(),
          std::string("LANG=") + (lang != nullptr && *lang != '\0' ? lang : "C.UTF-8")};
}

}  // namespace agent
