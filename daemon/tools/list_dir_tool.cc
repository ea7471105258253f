// list_dir {path?}: one directory's entries, sorted bytewise, directories with a trailing
// '/', symlinks as "name -> target". `.git` and `.agent` are left out; .gitignore is not
// applied here (the model may want to see build/ exists).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/path_resolver.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_helpers.h"
#include "daemon/tools/tree_walker.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kMaxEntries = 1000;

class ListDirTool : public TextTool {
 public:
  ListDirTool()
      : TextTool("list_dir", /*gated=*/false,
                 "List a directory (default: the project root). Directories end with '/'.",
                 {{"path", Property("string")}}, {}) {}

 private:
  absl::StatusOr<std::string> RunText(const Json& args, ToolContext& ctx) const override {
    ASSIGN_OR_RETURN(std::optional<std::string> path, OptionalString(args, "path", Name()));
    ASSIGN_OR_RETURN(std::string abs, ResolveInside(ctx.workdir, path.value_or(".")));
    const std::string display = RelativeToWorkdir(ctx.workdir, abs);
    DIR* dir = ::opendir(abs.c_str());
    if (dir == nullptr) {
      int err = errno;
      if (err == ENOENT) return absl::NotFoundError(absl::StrCat(display, " does not exist"));
      if (err == ENOTDIR) {
        return absl::FailedPreconditionError(absl::StrCat(display, " is not a directory"));
      }
      return absl::PermissionDeniedError(
          absl::StrCat("cannot list ", display, ": ", std::strerror(err)));
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (IsSkippedDirName(e->d_name)) continue;
      names.emplace_back(e->d_name);
    }
    ::closedir(dir);
    if (names.empty()) return std::string("(empty directory)\n");
    std::sort(names.begin(), names.end());

    std::string out;
    size_t shown = std::min(names.size(), kMaxEntries);
    for (size_t i = 0; i < shown; ++i) {
      const std::string full = abs + "/" + names[i];
      struct stat st;
      if (::lstat(full.c_str(), &st) != 0) continue;  // gone since readdir
      if (S_ISDIR(st.st_mode)) {
        absl::StrAppend(&out, names[i], "/\n");
      } else if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = ::readlink(full.c_str(), target, sizeof(target) - 1);
        std::string_view t(target, n > 0 ? static_cast<size_t>(n) : 0);
        absl::StrAppend(&out, names[i], " -> ", absl::string_view(t.data(), t.size()), "\n");
      } else {
        absl::StrAppend(&out, names[i], "\n");
      }
    }
    if (names.size() > shown) {
      absl::StrAppend(&out, "… and ", names.size() - shown, " more entries\n");
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> NewListDirTool() { return std::make_unique<ListDirTool>(); }

}  // namespace agent::daemon::tools
