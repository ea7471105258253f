#include "client/renderer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr size_t kMaxArgsChars = 100;

std::string OneLine(std::string s, size_t max) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    s = s.substr(0, cut) + "…";
  }
  return s;
}

}  // namespace

std::string ArgsSummary(const std::string& name, const std::string& arguments) {
  auto j = ParseJson(arguments);
  if (!j.ok() || !j->is_object()) return OneLine(arguments, kMaxArgsChars);
  for (const char* key : {"command", "path", "pattern"}) {
    if (j->contains(key) && (*j)[key].is_string()) {
      return OneLine((*j)[key].get<std::string>(), kMaxArgsChars);
    }
  }
  if (j->empty()) return "";
  return OneLine(DumpJson(*j), kMaxArgsChars);
}

std::string Renderer::Dim(const std::string& s) const {
  return options_.color ? absl::StrCat("\x1b[2m", s, "\x1b[0m") : s;
}

std::string Renderer::Colored(const char* code, const std::string& s) const {
  return options_.color ? absl::StrCat("\x1b[", code, "m", s, "\x1b[0m") : s;
}

std::string Renderer::EndLine() {
  std::string out;
  if (in_reasoning_ && options_.color) out += "\x1b[0m";
  in_reasoning_ = false;
  if (mid_line_) out += "\n";
  mid_line_ = false;
  return out;
}

std::string Renderer::Text(const std::string& text) {
  if (text.empty()) return "";
  mid_line_ = text.back() != '\n';
  return text;
}

std::string Renderer::CallLine(const std::string& name, const std::string& arguments) {
  return Colored("36", absl::StrCat("→ ", name, "(", ArgsSummary(name, arguments), ")")) + "\n";
}

std::string Renderer::Clipped(const std::string& text) const {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  size_t shown = std::min<size_t>(lines.size(), static_cast<size_t>(options_.tool_output_lines));
  for (size_t i = 0; i < shown; ++i) absl::StrAppend(&out, "  ", OneLine(lines[i], 200), "\n");
  if (lines.size() > shown) absl::StrAppend(&out, "  … ", lines.size() - shown, " more lines\n");
  return Dim(out);
}

std::string Renderer::ApprovalPrompt(const v1::PendingApproval& a) {
  std::string out = EndLine();
  absl::StrAppend(&out, Colored("33", absl::StrCat("? ", a.tool(), " wants to run: ")),
                  a.summary(), "\n");
  if (!a.diff().empty()) {
    for (absl::string_view line : absl::StrSplit(a.diff(), '\n')) {
      std::string l(line);
      if (!l.empty() && l[0] == '+' && l.rfind("+++", 0) != 0) {
        l = Colored("32", l);
      } else if (!l.empty() && l[0] == '-' && l.rfind("---", 0) != 0) {
        l = Colored("31", l);
      } else if (l.rfind("@@", 0) == 0) {
        l = Colored("36", l);
      }
      absl::StrAppend(&out, l, "\n");
    }
  }
  return out;
}

std::string Renderer::RenderTranscript(const Json& messages) {
  std::string out;
  if (!messages.is_array()) return out;
  for (const Json& m : messages) {
    std::string role = GetString(m, "role");
    std::string content = GetString(m, "content");
    if (role == "user") {
      absl::StrAppend(&out, EndLine(), Colored("1", "> " + content), "\n");
    } else if (role == "assistant") {
      out += EndLine();
      if (!content.empty()) absl::StrAppend(&out, content, content.back() == '\n' ? "" : "\n");
      if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
        for (const Json& c : m["tool_calls"]) {
          Json fn = c.value("function", Json::object());
          out += CallLine(GetString(fn, "name"), GetString(fn, "arguments"));
        }
      }
    } else if (role == "tool") {
      out += Clipped(content);
    }
  }
  return out;
}

std::string Renderer::Render(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kSnapshot: {
      auto j = ParseJson(e.snapshot().transcript_json());
      std::string out = j.ok() ? RenderTranscript(*j) : "";
      out += Text(e.snapshot().partial_text());
      return out;
    }
    case v1::Event::kTextDelta: {
      std::string out;
      if (in_reasoning_) {
        out += EndLine();
      }
      return out + Text(e.text_delta().text());
    }
    case v1::Event::kReasoningDelta: {
      std::string out;
      if (!in_reasoning_ && options_.color) out += "\x1b[2m";
      in_reasoning_ = true;
      return out + Text(e.reasoning_delta().text());
    }
    case v1::Event::kToolCallReady:
      return EndLine() + CallLine(e.tool_call_ready().call().name(),
                                  e.tool_call_ready().call().arguments());
    case v1::Event::kToolResult:
      return EndLine() + Clipped(e.tool_result().content());
    case v1::Event::kRetrying: {
      const auto& r = e.retrying();
      return EndLine() + Colored("33", absl::StrCat("[", r.reason(), " | retry ", r.attempt(), "/",
                                                    r.max_attempts(), " in ",
                                                    (r.delay_ms() + 500) / 1000, "s]")) +
             "\n";
    }
    case v1::Event::kCompacted:
      return EndLine() + Dim(absl::StrCat("[compacted: ", e.compacted().removed_messages(),
                                          " earlier messages summarised]")) +
             "\n";
    case v1::Event::kApprovalResolved: {
      const auto& r = e.approval_resolved();
      const char* what = r.decision() == v1::DECISION_DENY ? "denied" : "allowed";
      std::string by = r.client_name().empty() ? "" : " by " + r.client_name();
      return EndLine() + Dim(absl::StrCat("[", what, by, "]")) + "\n";
    }
    case v1::Event::kTurnEnded: {
      std::string out = EndLine();
      const auto& t = e.turn_ended();
      if (t.outcome() == v1::TURN_OUTCOME_CANCELLED) out += Dim("[cancelled]") + "\n";
      if (t.outcome() == v1::TURN_OUTCOME_MAX_STEPS) out += Dim("[stopped: step limit]") + "\n";
      if (t.outcome() == v1::TURN_OUTCOME_ERROR) out += Colored("31", "error: " + t.error()) + "\n";
      return out;
    }
    case v1::Event::kError:
      return EndLine() + Colored("31", "error: " + e.error().message()) + "\n";
    default:
      return "";
  }
}

}  // namespace agent::client
