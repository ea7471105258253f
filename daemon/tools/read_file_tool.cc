// read_file {path, offset?, limit?}: a text file as numbered lines ("     1\tline"), like
// `cat -n`, so the model can cite lines and copy exact text for edit_file. Records the read
// in the FileTracker. Binary files (a NUL in the first 8 KiB) are refused. With an editor
// attached (ctx.editor_text), a file it holds with unsaved changes is shown as the editor has
// it, said in the first line; the tracker still records the disk's content, which is what
// edits apply to.
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/file_tracker.h"
#include "daemon/tools/path_resolver.h"
#include "daemon/tools/text_util.h"
#include "daemon/tools/tool_args.h"
#include "daemon/tools/tool_helpers.h"

namespace agent::daemon::tools {
namespace {

constexpr int64_t kDefaultLimit = 2000;
constexpr size_t kMaxLineBytes = 2000;
// What one call may put in the transcript.
constexpr size_t kMaxOutputBytes = 100 << 10;

bool IsDirectory(const std::string& abs) {
  struct stat st;
  return ::stat(abs.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class ReadFileTool : public TextTool {
 public:
  ReadFileTool()
      : TextTool(
            "read_file", /*gated=*/false,
            "Read a text file as numbered lines. For long files pass offset (first line, 1-based) "
            "and limit (default 2000).",
            {{"path", Property("string")},
             {"offset", Property("integer")},
             {"limit", Property("integer")}},
            {"path"}) {}

 private:
  absl::StatusOr<std::string> RunText(const Json& args, ToolContext& ctx) const override {
    ASSIGN_OR_RETURN(std::string path, RequireString(args, "path", Name()));
    ASSIGN_OR_RETURN(std::optional<int64_t> offset_arg, OptionalInt(args, "offset", Name()));
    ASSIGN_OR_RETURN(std::optional<int64_t> limit_arg, OptionalInt(args, "limit", Name()));
    const int64_t offset = std::max<int64_t>(1, offset_arg.value_or(1));
    const int64_t limit = limit_arg.has_value() && *limit_arg > 0
                              ? std::min(*limit_arg, kDefaultLimit)
                              : kDefaultLimit;
    ASSIGN_OR_RETURN(std::string abs, ResolveInside(ctx.workdir, path));
    const std::string display = RelativeToWorkdir(ctx.workdir, abs);
    if (IsDirectory(abs)) {
      return absl::FailedPreconditionError(
          absl::StrCat(display, " is a directory; use list_dir to see what is in it"));
    }
    absl::StatusOr<std::string> read = ReadRegularFile(abs, kMaxTextFileBytes, display);
    if (absl::IsResourceExhausted(read.status())) {
      return absl::ResourceExhaustedError(absl::StrCat(
          read.status().message(), "; use search, or bash with head/sed, to see parts of it"));
    }
    if (!read.ok()) return read.status();
    const std::string* content = &*read;
    if (LooksBinary(*content)) {
      return absl::FailedPreconditionError(absl::StrCat(display, " looks like a binary file (",
                                                        content->size(), " bytes); not shown"));
    }
    if (ctx.files != nullptr) ctx.files->RecordRead(abs, *content);
    std::optional<std::string> unsaved;
    if (ctx.editor_text) unsaved = ctx.editor_text(abs);
    std::string out;
    if (unsaved.has_value() && *unsaved != *content && unsaved->size() <= kMaxTextFileBytes &&
        !LooksBinary(*unsaved)) {
      content = &*unsaved;
      absl::StrAppend(&out, "(the editor's unsaved text of ", display,
                      "; the file on disk differs, and edits apply to the disk)\n");
    }
    const size_t total_lines = CountLines(*content);
    if (total_lines == 0) return absl::StrCat(out, "(", display, " is empty)");
    if (static_cast<size_t>(offset) > total_lines) {
      return absl::OutOfRangeError(absl::StrCat("offset ", offset, " is past the end of ", display,
                                                " (", total_lines, " lines)"));
    }

    std::string_view rest = *content;
    int64_t line_no = 0;
    int64_t last_shown = 0;
    bool cut_for_size = false;
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      ++line_no;
      if (line_no < offset) continue;
      if (line_no >= offset + limit) break;
      if (out.size() >= kMaxOutputBytes) {
        cut_for_size = true;
        break;
      }
      absl::StrAppend(&out, absl::StrFormat("%6d\t", line_no));
      if (line.size() > kMaxLineBytes) {
        std::string_view kept = Utf8Prefix(line, kMaxLineBytes);
        absl::StrAppend(&out, AbslView(kept), "… [line cut, ", line.size() - kept.size(),
                        " more bytes]\n");
      } else {
        absl::StrAppend(&out, AbslView(line), "\n");
      }
      last_shown = line_no;
    }
    if (static_cast<size_t>(last_shown) < total_lines) {
      absl::StrAppend(&out, "(", cut_for_size ? "output size limit reached; " : "",
                      "showing lines ", offset, "-", last_shown, " of ", total_lines,
                      "; continue with offset=", last_shown + 1, ")\n");
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> NewReadFileTool() { return std::make_unique<ReadFileTool>(); }

}  // namespace agent::daemon::tools
