#include "client/acp/tool_calls.h"

#include <algorithm>

namespace agent::client::acp {
namespace {

// The longest title line an editor is sent (a bash command can be a script).
constexpr size_t kMaxTitle = 200;

std::string FirstLine(std::string_view s) {
  std::string line(s.substr(0, std::min(s.find('\n'), kMaxTitle)));
  if (line.size() < s.size()) line += "…";
  return line;
}

std::string Absolute(std::string_view path, std::string_view cwd) {
  if (!path.empty() && path.front() == '/') return std::string(path);
  return std::string(cwd) + (cwd.empty() || cwd.back() == '/' ? "" : "/") + std::string(path);
}

size_t LongestBacktickRun(std::string_view s) {
  size_t best = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

}  // namespace

std::string ToolKindOf(std::string_view tool) {
  if (tool == "read_file" || tool == "list_dir") return "read";
  if (tool == "write_file" || tool == "edit_file") return "edit";
  if (tool == "find_files" || tool == "search") return "search";
  if (tool == "bash") return "execute";
  if (tool == "update_plan") return "think";
  return "other";
}

Json ToolCallFields(std::string_view id, std::string_view tool, std::string_view arguments,
                    std::string_view cwd) {
  Json f = {{"toolCallId", std::string(id)}, {"kind", ToolKindOf(tool)}};
  absl::StatusOr<Json> args = ParseJson(arguments);
  std::string title(tool);
  if (!args.ok() || !args->is_object()) {
    f["title"] = title;
    return f;
  }
  f["rawInput"] = *args;
  for (const char* key : {"command", "path", "pattern", "description"}) {
    std::string v = GetString(*args, key);
    if (!v.empty()) {
      title = std::string(tool) + ": " + FirstLine(v);
      break;
    }
  }
  f["title"] = title;
  std::string path = GetString(*args, "path");
  if (!path.empty()) f["locations"] = Json::array({Json{{"path", Absolute(path, cwd)}}});
  if (tool == "edit_file" || tool == "write_file") {
    Json diff = {{"type", "diff"}, {"path", Absolute(path, cwd)}};
    if (tool == "edit_file") {
      diff["oldText"] = GetString(*args, "old_string");
      diff["newText"] = GetString(*args, "new_string");
    } else {
      diff["oldText"] = nullptr;  // the whole file is (re)written
      diff["newText"] = GetString(*args, "content");
    }
    if (!path.empty()) f["content"] = Json::array({diff});
  }
  return f;
}

Json TextContent(std::string_view text, bool code) {
  std::string body(text);
  if (code) {
    std::string fence(std::max<size_t>(3, LongestBacktickRun(text) + 1), '`');
    body = fence + "\n" + std::string(text) + (text.empty() || text.back() == '\n' ? "" : "\n") +
           fence;
  }
  return Json::array(
      {Json{{"type", "content"}, {"content", Json{{"type", "text"}, {"text", body}}}}});
}

}  // namespace agent::client::acp
