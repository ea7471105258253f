#include "daemon/tools/file_change.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/file_tracker.h"
#include "daemon/tools/path_resolver.h"
#include "daemon/tools/text_util.h"
#include "daemon/tools/tool_args.h"

namespace agent::daemon::tools {
namespace {

// Resolves the path and loads what is there now; checks it is a file the agent knows.
absl::StatusOr<PlannedChange> LoadTarget(std::string_view path, const ToolContext& ctx,
                                         bool must_exist) {
  PlannedChange change;
  ASSIGN_OR_RETURN(change.abs_path, ResolveInside(ctx.workdir, path));
  change.display = RelativeToWorkdir(ctx.workdir, change.abs_path);
  struct stat st;
  if (::stat(change.abs_path.c_str(), &st) != 0) {
    if (must_exist) {
      return absl::NotFoundError(
          absl::StrCat(change.display, " does not exist (write_file creates files)"));
    }
    return change;
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(change.display, " is a directory"));
  }
  ASSIGN_OR_RETURN(change.old_content,
                   ReadRegularFile(change.abs_path, kMaxTextFileBytes, change.display));
  change.exists = true;
  if (ctx.files != nullptr) {
    RETURN_IF_ERROR(ctx.files->CheckKnown(change.abs_path, change.old_content,
                                          /*must_have_read=*/true, change.display));
  }
  return change;
}

size_t CountOccurrences(std::string_view haystack, std::string_view needle) {
  size_t count = 0;
  for (size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit = text.find(from); hit != std::string_view::npos; hit = text.find(from, pos)) {
    out.append(text.substr(pos, hit - pos)).append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

absl::StatusOr<PlannedChange> PlanWriteFile(const Json& args, const ToolContext& ctx) {
  ASSIGN_OR_RETURN(std::string path, RequireString(args, "path", "write_file"));
  ASSIGN_OR_RETURN(std::string content, RequireString(args, "content", "write_file"));
  ASSIGN_OR_RETURN(PlannedChange change, LoadTarget(path, ctx, /*must_exist=*/false));
  if (change.abs_path == ctx.workdir || change.display == ".") {
    return absl::InvalidArgumentError("write_file: path names the project directory itself");
  }
  change.new_content = std::move(content);
  return change;
}

absl::StatusOr<PlannedChange> PlanEditFile(const Json& args, const ToolContext& ctx) {
  ASSIGN_OR_RETURN(std::string path, RequireString(args, "path", "edit_file"));
  ASSIGN_OR_RETURN(std::string old_string, RequireString(args, "old_string", "edit_file"));
  ASSIGN_OR_RETURN(std::string new_string, RequireString(args, "new_string", "edit_file"));
  ASSIGN_OR_RETURN(std::optional<bool> replace_all, OptionalBool(args, "replace_all", "edit_file"));
  if (old_string.empty()) {
    return absl::InvalidArgumentError(
        "edit_file: old_string is empty; use write_file to create or overwrite a whole file");
  }
  if (old_string == new_string) {
    return absl::InvalidArgumentError(
        "edit_file: old_string and new_string are the same; nothing would change");
  }
  ASSIGN_OR_RETURN(PlannedChange change, LoadTarget(path, ctx, /*must_exist=*/true));
  size_t count = CountOccurrences(change.old_content, old_string);
  if (count == 0) {
    std::string hint;
    if (change.old_content.find("\r\n") != std::string::npos &&
        old_string.find('\n') != std::string::npos &&
        old_string.find("\r\n") == std::string::npos) {
      hint = " (the file has CRLF line endings)";
    }
    return absl::NotFoundError(absl::StrCat("old_string was not found in ", change.display, hint,
                                            "; read the file again and copy the text exactly"));
  }
  if (count > 1 && !replace_all.value_or(false)) {
    return absl::FailedPreconditionError(
        absl::StrCat("old_string occurs ", count, " times in ", change.display,
                     "; include more surrounding lines to make it unique, or set replace_all"));
  }
  change.new_content = ReplaceAll(change.old_content, old_string, new_string);
  change.replacements = static_cast<int>(count);
  return change;
}

absl::Status CommitChange(const PlannedChange& change, const ToolContext& ctx) {
  RETURN_IF_ERROR(ReplaceFileContent(ctx.workdir, change.abs_path, change.new_content));
  if (ctx.files != nullptr) ctx.files->RecordWrite(change.abs_path, change.new_content);
  return absl::OkStatus();
}

}  // namespace agent::daemon::tools
