#include "daemon/checkpoints/git_runner.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace agent::daemon::checkpoints {
namespace {

// What makes git run a program or read configuration the project controls.
const char* const kSafeConfig[] = {"core.hooksPath=/dev/null",
                                   "core.fsmonitor=false",
                                   "core.autocrlf=false",
                                   "core.safecrlf=false",
                                   "core.symlinks=true",
                                   "core.filemode=true",
                                   "core.quotepath=false",
                                   "core.untrackedCache=true",
                                   "gc.auto=0",
                                   "safe.directory=*",
                                   "diff.external=",
                                   "core.pager=cat",
                                   "core.askPass=",
                                   "index.threads=1",
                                   "advice.addEmbeddedRepo=false",
                                   "core.bigFileThreshold=16m"};

}  // namespace

std::vector<std::string> GitEnvironment(const std::string& git_dir, const std::string& work_tree) {
  return {"GIT_DIR=" + git_dir,
          "GIT_WORK_TREE=" + work_tree,
          "GIT_INDEX_FILE=" + git_dir + "/index",
          "GIT_CONFIG_NOSYSTEM=1",
          "GIT_CONFIG_GLOBAL=/dev/null",
          "GIT_ATTR_NOSYSTEM=1",
          "GIT_NO_REPLACE_OBJECTS=1",
          "GIT_TERMINAL_PROMPT=0",
          "GIT_OPTIONAL_LOCKS=0",
          "HOME=" + git_dir,
          "PATH=/usr/local/bin:/usr/bin:/bin",
          "LC_ALL=C"};
}

static const std::string& GitPath() {
  // Never a search of the daemon's PATH: the child runs in the project, so an empty or
  // relative entry there would run the repository's own `git`.
  static const std::string path = [] {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
      std::string candidate = std::string(dir) + "/git";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::string();
  }();
  return path;
}

absl::StatusOr<std::string> RunGit(const GitCall& call, const ProcessRunner& runner) {
  ProcessSpec spec;
  spec.program = GitPath();
  if (spec.program.empty()) return absl::NotFoundError("git is not installed");
  spec.argv = {"git"};
  for (const char* c : kSafeConfig) {
    spec.argv.push_back("-c");
    spec.argv.push_back(c);
  }
  spec.argv.insert(spec.argv.end(), call.args.begin(), call.args.end());
  spec.cwd = call.work_tree;
  spec.env = GitEnvironment(call.git_dir, call.work_tree);
  spec.input = call.input;
  absl::StatusOr<ProcessResult> r = runner.Run(spec);
  if (!r.ok()) {
    return absl::IsNotFound(r.status()) ? absl::NotFoundError("git is not installed") : r.status();
  }
  if (r->exited && r->exit_code == 0) return std::move(r->out);
  std::string err = std::move(r->err);
  if (err.size() > 2000) err.resize(2000);
  return absl::InternalError(absl::StrCat("git ", absl::StrJoin(call.args, " "), " failed: ", err));
}

}  // namespace agent::daemon::checkpoints
