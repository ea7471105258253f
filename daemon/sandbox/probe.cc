#include "daemon/sandbox/probe.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "daemon/sandbox/bwrap_argv.h"

namespace agent::daemon::sandbox {
namespace {

constexpr auto kProbeLimit = std::chrono::seconds(5);

std::string ReadSysctl(const char* path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v)) return "";
  return v;
}

// What to do about a bwrap that could not create its namespaces, from the machine's settings.
std::string NamespaceFix() {
  if (ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1") {
    return "AppArmor restricts unprivileged user namespaces: allow bwrap with an AppArmor "
           "profile (Ubuntu 24.04: the bwrap-userns-restrict profile of apparmor-profiles), or "
           "run `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`";
  }
  if (ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0") {
    return "user namespaces are off: run `sudo sysctl kernel.unprivileged_userns_clone=1` (and "
           "add it to /etc/sysctl.d/ to keep it)";
  }
  if (ReadSysctl("/proc/sys/user/max_user_namespaces") == "0") {
    return "user namespaces are off: run `sudo sysctl user.max_user_namespaces=15000`";
  }
  return "in a container, start it with user namespaces allowed (docker: `--security-opt "
         "seccomp=unconfined --security-opt apparmor=unconfined`, or `--privileged`); or set "
         "\"sandbox\": \"off\" in config.json to run commands unconfined, asked about";
}

}  // namespace

ProbeResult Probe(const SandboxPolicy& policy, const ProcessRunner& runner) {
  ProbeResult out;
  if (::access(policy.bwrap.c_str(), X_OK) != 0) {
    out.reason = absl::StrCat("bubblewrap is not installed (", policy.bwrap, ": ",
                              std::strerror(errno), ")");
    out.fix =
        "install it: `sudo apt-get install bubblewrap` (Debian/Ubuntu), `sudo dnf install "
        "bubblewrap` (Fedora)";
    return out;
  }
  ProcessSpec spec;
  spec.program = policy.bwrap;
  spec.argv = BwrapOptions(policy, SandboxTarget{"", "/"});
  spec.argv.insert(spec.argv.end(), {"--", "/bin/true"});
  spec.cwd = "/";
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.timeout = kProbeLimit;
  spec.max_output = 4096;
  absl::StatusOr<ProcessResult> r = runner.Run(spec);
  if (r.ok() && r->exited && r->exit_code == 0) {
    out.available = true;
    return out;
  }
  std::string said = !r.ok()        ? std::string(r.status().message())
                     : r->timed_out ? "no answer within 5 s"
                                    : std::string(absl::StripAsciiWhitespace(r->err));
  if (size_t nl = said.find('\n'); nl != std::string::npos) said.resize(nl);
  out.reason = absl::StrCat("bubblewrap cannot create a sandbox here: ",
                            said.empty() ? "it failed without a message" : said);
  out.fix = NamespaceFix();
  return out;
}

}  // namespace agent::daemon::sandbox
