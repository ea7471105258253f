#include "daemon/prompt/mentions.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/json.h"
#include "common/utf8.h"
#include "daemon/policy/protected_paths.h"
#include "daemon/tools/core_tools.h"
#include "daemon/tools/file_io.h"
#include "daemon/tools/file_tracker.h"
#include "daemon/tools/path_resolver.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon {
namespace {

constexpr std::string_view kTrailing = ".,;:!?)]}'\"";
// Below this, a block is left out rather than cut to a stub.
constexpr size_t kMinUsefulBytes = 512;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A mention resolved to a path the model may be shown.
struct Target {
  std::string rel;  // relative to the workdir; "." for the workdir itself
  std::string abs;
  bool is_dir = false;
  uint64_t size = 0;
};

bool HasDotDot(std::string_view path) {
  for (absl::string_view seg : absl::StrSplit(tools::AbslView(path), '/')) {
    if (seg == "..") return true;
  }
  return false;
}

// The target of one spelling; nullopt when nothing exists there, an error (the warning) when
// something exists but may not be attached.
absl::StatusOr<std::optional<Target>> Resolve(const std::string& workdir, std::string_view typed,
                                              const absl::StatusOr<policy::RuleSet>& rules) {
  if (HasDotDot(typed)) return absl::InvalidArgumentError("`..` is not allowed in a mention");
  absl::StatusOr<std::string> abs = tools::ResolveInside(workdir, typed);
  if (!abs.ok()) {
    if (absl::IsPermissionDenied(abs.status())) {
      return absl::PermissionDeniedError("outside the project");
    }
    return abs.status();
  }
  struct stat st;
  if (::stat(abs->c_str(), &st) != 0) return std::nullopt;
  Target t{tools::RelativeToWorkdir(workdir, *abs), *abs, S_ISDIR(st.st_mode),
           static_cast<uint64_t>(st.st_size)};
  if (t.rel != ".") {
    if (auto why = policy::ProtectedPathReason(t.rel); why.has_value()) {
      return absl::PermissionDeniedError("files under .agent/ and .git/ are not attached");
    }
  }
  if (!rules.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the permission rules do not parse: ", rules.status().message()));
  }
  const std::string_view tool = t.is_dir ? "list_dir" : "read_file";
  const Json resolved_args = {{"path", t.rel}};
  const Json typed_args = {{"path", std::string(typed)}};
  if (policy::Evaluate(*rules, tool, resolved_args) == policy::Verdict::kDeny ||
      policy::Evaluate(*rules, tool, typed_args) == policy::Verdict::kDeny) {
    return absl::PermissionDeniedError("denied by a permission rule of this project");
  }
  return std::optional<Target>(std::move(t));
}

// Tries `typed`, then `typed` without its trailing punctuation, one character at a time.
absl::StatusOr<std::optional<Target>> ResolveMention(const std::string& workdir,
                                                     std::string_view typed,
                                                     const absl::StatusOr<policy::RuleSet>& rules) {
  std::string_view cand = typed;
  // Bounded by the mention's length: each pass drops a character.
  for (;;) {
    auto r = Resolve(workdir, cand, rules);
    if (!r.ok() || r->has_value()) return r;
    if (cand.empty() || kTrailing.find(cand.back()) == std::string_view::npos) return r;
    cand.remove_suffix(1);
  }
}

// What the tool shows for `t`, as the model would have seen it; read_file records the
// content it showed in `shown`.
tools::ToolOutcome RunTool(const std::string& workdir, const Target& t, tools::FileTracker* shown) {
  tools::ToolContext ctx;
  ctx.workdir = workdir;
  ctx.files = shown;
  std::unique_ptr<tools::Tool> tool = t.is_dir ? tools::NewListDirTool() : tools::NewReadFileTool();
  return tool->Run(Json{{"path", t.rel}}, ctx);
}

// The note read_file ends a partial listing with, or "" when it showed the whole file.
std::string PartialNote(const std::string& output) {
  if (output.find("; continue with offset=") == std::string::npos) return "";
  std::string_view v = output;
  while (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  const size_t nl = v.rfind('\n');
  return std::string(nl == std::string_view::npos ? v : v.substr(nl + 1));
}

// `text` cut at a line boundary to at most `max_bytes`.
std::string CutAtLine(std::string_view text, size_t max_bytes) {
  std::string_view kept = tools::Utf8Prefix(text, max_bytes);
  if (size_t nl = kept.rfind('\n'); nl != std::string_view::npos) kept = kept.substr(0, nl + 1);
  return std::string(kept);
}

// `from` relative to `workdir` ("sub/dir"), or "" when it is the root or not inside it.
std::string RelativeFrom(const std::string& workdir, const std::string& from) {
  if (from.size() <= workdir.size() + 1 || from.compare(0, workdir.size(), workdir) != 0 ||
      from[workdir.size()] != '/') {
    return "";
  }
  return from.substr(workdir.size() + 1);
}

class Expander {
 public:
  Expander(const std::string& workdir, const absl::StatusOr<policy::RuleSet>& rules,
           const MentionLimits& limits, const std::string& from)
      : workdir_(workdir), rules_(rules), limits_(limits), from_(RelativeFrom(workdir, from)) {}

  void Add(const std::string& typed) {
    const std::string label = "@" + typed;
    absl::StatusOr<std::optional<Target>> r = std::optional<Target>();
    if (!from_.empty() && !typed.empty() && typed.front() != '/') {
      r = ResolveMention(workdir_, absl::StrCat(from_, "/", typed), rules_);
    }
    if (r.ok() && !r->has_value()) r = ResolveMention(workdir_, typed, rules_);
    if (!r.ok()) return Warn(label, absl::StrCat("not attached: ", r.status().message()));
    if (!r->has_value()) return Warn(label, "no such file or directory in the project");
    const Target& t = **r;
    if (std::find(seen_.begin(), seen_.end(), t.rel) != seen_.end()) return;
    seen_.push_back(t.rel);
    if (seen_.size() > limits_.max_mentions) {
      return Warn(label,
                  absl::StrCat("not attached: at most ", limits_.max_mentions, " per prompt"));
    }
    Attach(label, t);
  }

  MentionExpansion Take() { return std::move(out_); }

 private:
  void Warn(const std::string& label, std::string_view why) {
    out_.warnings.push_back(ToValidUtf8(absl::StrCat(label, ": ", tools::AbslView(why))));
  }

  size_t Room() const {
    const size_t used = out_.attachments.size();
    return limits_.max_total_bytes > used ? limits_.max_total_bytes - used : 0;
  }

  std::string LimitText() const {
    return absl::StrCat("the attachments of one prompt are limited to ",
                        limits_.max_total_bytes >> 10, " KiB");
  }

  // What the model is shown for `t`: the tool's output, or why there is none.
  tools::ToolOutcome Show(const std::string& label, const Target& t) {
    if (!t.is_dir && t.size > limits_.max_file_bytes) {
      tools::ToolOutcome o{absl::StrCat(t.rel, " has ", t.size, " bytes, more than the ",
                                        limits_.max_file_bytes >> 10,
                                        " KiB a mention attaches; use search, or read_file with "
                                        "offset and limit"),
                           true};
      Warn(label, absl::StrCat("described, not attached: ", o.content));
      return o;
    }
    tools::ToolOutcome o = RunTool(workdir_, t, &shown_);
    if (limits_.after_show) limits_.after_show(t.abs);
    if (o.is_error) {
      Warn(label, absl::StrCat("described, not attached: ", o.content));
    } else if (std::string note = PartialNote(o.content); !note.empty()) {
      Warn(label, absl::StrCat("attached in part ", note));
    }
    return o;
  }

  void Attach(const std::string& label, const Target& t) {
    std::string head = absl::StrCat(tools::AbslView(kMentionBlockStart), DumpJson(Json(t.rel)),
                                    " tool=\"", t.is_dir ? "list_dir" : "read_file", "\">\n");
    constexpr std::string_view kTail = "</mention>";
    const std::string cut_note =
        absl::StrCat("[cut here: ", LimitText(), "; read the rest with read_file]\n");
    const size_t overhead = head.size() + kTail.size() + cut_note.size();
    // Nothing is read once the budget is spent.
    if (Room() < overhead + kMinUsefulBytes) {
      return Warn(label, absl::StrCat("not attached: ", LimitText()));
    }
    tools::ToolOutcome o = Show(label, t);
    std::string body = std::move(o.content);
    if (!body.empty() && body.back() != '\n') body.push_back('\n');
    if (head.size() + kTail.size() + body.size() > Room()) {
      body = CutAtLine(body, Room() - overhead) + cut_note;
      Warn(label, absl::StrCat("attached in part: ", LimitText()));
    }
    absl::StrAppend(&out_.attachments, head, body, tools::AbslView(kTail));
    if (!o.is_error && !t.is_dir) Track(t);
  }

  // The file as the model has now seen it, for the change check of later edits. Read again
  // (read_file keeps only a hash), and only when it is what read_file showed: a file changed
  // in between is not marked read, so an edit of it asks for a read first.
  void Track(const Target& t) {
    if (tracked_ + t.size > limits_.max_tracked_bytes) return;
    absl::StatusOr<std::string> content =
        tools::ReadRegularFile(t.abs, limits_.max_tracked_bytes - tracked_, t.rel);
    if (!content.ok() || !shown_.CheckKnown(t.abs, *content, /*must_have_read=*/true).ok()) return;
    tracked_ += content->size();
    out_.reads.push_back({t.abs, *std::move(content)});
  }

  const std::string& workdir_;
  const absl::StatusOr<policy::RuleSet>& rules_;
  const MentionLimits& limits_;
  const std::string from_;  // the session's directory relative to workdir_; "": the root
  std::vector<std::string> seen_;
  tools::FileTracker shown_;  // what read_file showed of each attached file
  size_t tracked_ = 0;
  MentionExpansion out_;
};

}  // namespace

std::vector<std::string> FindMentions(std::string_view text) {
  std::vector<std::string> out;
  bool fence = false;
  bool inline_code = false;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (line_start && text.substr(i, 3) == "```") {
      fence = !fence;
      i += 2;
      line_start = false;
      continue;
    }
    line_start = c == '\n';
    if (c == '\n') inline_code = false;
    if (fence) continue;
    if (c == '`') {
      inline_code = !inline_code;
      continue;
    }
    if (inline_code || c != '@') continue;
    const char before = i == 0 ? ' ' : text[i - 1];
    if (!IsSpace(before) && std::string_view("([\"'").find(before) == std::string_view::npos) {
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && !IsSpace(text[end])) ++end;
    if (end > i + 1 && text[i + 1] != '@') out.emplace_back(text.substr(i + 1, end - i - 1));
    i = end - 1;
  }
  return out;
}

MentionExpansion ExpandMentions(const std::string& workdir, std::string_view text,
                                const absl::StatusOr<policy::RuleSet>& rules,
                                const MentionLimits& limits, const std::string& from) {
  Expander e(workdir, rules, limits, from);
  for (const std::string& typed : FindMentions(text)) e.Add(typed);
  return e.Take();
}

}  // namespace agent::daemon
