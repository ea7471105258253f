#include "daemon/context/git_changes.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <set>
#include <string_view>

#include "common/tool_env.h"

namespace agent::daemon::context {
namespace {

constexpr size_t kMaxIndexBytes = 64 << 20;

// Each command prints NUL-terminated names; stderr would mix into them.
constexpr char kCountScript[] = R"(exec 2>/dev/null
g() { git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.untrackedCache=false \
  --no-optional-locks "$@"; }
if g rev-parse -q --verify HEAD >/dev/null; then
  g diff-index -z --cached --name-only --ignore-submodules=all HEAD
else
  g ls-files -z --cached
fi || exit 1
g diff-files -z --name-only --ignore-submodules=all || exit 1
g ls-files -z --others --exclude-standard --directory --no-empty-directory || exit 1
)";

// A private directory removed with everything in it when this goes.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    std::string templ = (ec || base.empty() ? std::string("/tmp") : base) + "/agentd-git-XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies `git_dir`/index (when it exists) to `to` and dates the copy 1970-01-01 00:00:00.
// Git reads a file's content, through the repository's clean filter, when the file's stat data
// matches an index entry that is not older than the index file ("racily clean", as after any
// `git add` of a file changed in the same second); an index timestamp of zero turns that check
// off, so diff-files compares stat data only. No file at `to` when there is no index.
bool CopyIndexUndated(const std::string& git_dir, const std::string& to) {
  int in = ::open((git_dir + "/index").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (in < 0) return errno == ENOENT;
  struct stat st;
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<size_t>(st.st_size) > kMaxIndexBytes) {
    ::close(in);
    return false;
  }
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = out >= 0;
  size_t total = 0;
  char buf[64 << 10];
  ssize_t n = 0;
  while (ok && (n = ::read(in, buf, sizeof(buf))) > 0) {
    total += static_cast<size_t>(n);
    ok = total <= kMaxIndexBytes && ::write(out, buf, static_cast<size_t>(n)) == n;
  }
  ok = ok && n == 0;
  const struct timespec epoch[2] = {{0, 0}, {0, 0}};
  if (ok) ok = ::futimens(out, epoch) == 0;
  if (out >= 0) ok = ::close(out) == 0 && ok;
  ::close(in);
  return ok;
}

}  // namespace

int CountChangedFiles(const std::string& top, const std::string& git_dir,
                      const ProcessRunner& runner) {
  TempDir tmp;
  if (tmp.path().empty()) return -1;
  const std::string index = tmp.path() + "/index";
  if (!CopyIndexUndated(git_dir, index)) return -1;
  ProcessSpec spec;
  spec.program = "/bin/bash";
  spec.argv = {"bash", "-c", kCountScript};
  spec.cwd = top;
  spec.env = MinimalToolEnvironment();
  spec.env.push_back("GIT_CONFIG_NOSYSTEM=1");
  spec.env.push_back("GIT_CONFIG_GLOBAL=/dev/null");
  spec.env.push_back("GIT_TERMINAL_PROMPT=0");
  spec.env.push_back("GIT_PAGER=cat");
  spec.env.push_back("GIT_INDEX_FILE=" + index);
  spec.timeout = std::chrono::milliseconds(2000);
  spec.max_output = 256 << 10;
  absl::StatusOr<ProcessResult> r = runner.Run(spec);
  if (!r.ok() || !r->exited || r->exit_code != 0 || r->out_cut) return -1;
  // A path both staged and changed again is one changed file, as `git status` counts it.
  std::set<std::string_view> names;
  std::string_view rest = r->out;
  for (size_t end; (end = rest.find('\0')) != std::string_view::npos; rest.remove_prefix(end + 1)) {
    names.insert(rest.substr(0, end));
  }
  return static_cast<int>(names.size());
}

}  // namespace agent::daemon::context
