#include "client/view/renderer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/terminal/terminal_text.h"
#include "client/text/session_table.h"
#include "client/view/renderer_text.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr const char* kSpinnerFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};

std::string Thousands(int64_t n) {
  if (n >= 10000) return absl::StrCat(n / 1000, "k");
  if (n >= 1000) return absl::StrCat(n / 1000, ".", (n % 1000) / 100, "k");
  return absl::StrCat(n);
}

}  // namespace

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

std::string Sanitized(const std::string& s) {
  // Most text is printable ASCII with nothing to remove (checked at a few cycles a byte,
  // before any copying); anything else, C1 controls and ill-formed bytes too, is cleaned.
  if (std::all_of(s.begin(), s.end(), [](char c) {
        unsigned char u = static_cast<unsigned char>(c);
        return (u >= 0x20 && u < 0x7F) || c == '\n';
      })) {
    return s;
  }
  std::string out;
  std::string stripped = StripAnsi(s);
  out.reserve(stripped.size());
  for (char c : stripped) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\t') {
      out += "    ";
    } else if (u >= 0x20 || c == '\n') {
      if (u != 0x7F) out += c;
    }
  }
  return out;
}

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

std::string FitToColumns(const std::string& s, int cols) {
  if (cols <= 0 || DisplayWidth(s) <= cols) return s;
  std::string out;
  int width = 0;
  bool styled = false;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      // Copy the whole escape so it is never cut in two.
      size_t j = i + 1;
      if (j < s.size() && s[j] == '[') {
        ++j;
        while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7E)) ++j;
      }
      j = std::min(j + 1, s.size());
      out.append(s, i, j - i);
      styled = true;
      i = j;
      continue;
    }
    size_t len = 1;
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b >= 0xF0) {
      len = 4;
    } else if (b >= 0xE0) {
      len = 3;
    } else if (b >= 0xC0) {
      len = 2;
    }
    len = std::min(len, s.size() - i);
    std::string cp = s.substr(i, len);
    int w = DisplayWidth(cp);
    if (width + w > cols - 1) break;
    out += cp;
    width += w;
    i += len;
  }
  out += "…";
  if (styled) out += "\x1b[0m";
  return out;
}

Renderer::Renderer(RenderOptions options) : options_(std::move(options)) {}

std::string Renderer::Dim(const std::string& s) const {
  return options_.color ? absl::StrCat("\x1b[2m", s, "\x1b[0m") : s;
}

std::string Renderer::Colored(const char* code, const std::string& s) const {
  return options_.color ? absl::StrCat("\x1b[", code, "m", s, "\x1b[0m") : s;
}

// The model's text, a prompt, a notice: on a terminal without its control characters (an
// escape sequence in an answer could retitle the window or write the clipboard); a pipe or a
// file gets it exactly as written.
std::string Renderer::ForTerminal(const std::string& s) const {
  return options_.live ? Sanitized(s) : s;
}

void RenderState::SetPhase(Phase p, absl::Time now, std::string what) {
  phase_ = p;
  phase_since_ = now;
  phase_what_ = std::move(what);
}

void RenderState::PromptSent(absl::Time now) {
  if (phase_ == Phase::kIdle) SetPhase(Phase::kThinking, now);
}

MarkdownMode Renderer::Mode() const {
  if (!options_.live) return MarkdownMode::kRaw;
  return options_.color ? MarkdownMode::kColor : MarkdownMode::kPlain;
}

// One column short of the width: a full row would leave some terminals' cursor on the next.
int Renderer::WrapColumns() const {
  int cols = options_.columns ? options_.columns() : 0;
  return cols > 1 ? cols - 1 : 0;
}

// The rows to commit for a complete line, each ending in '\n' (none while a table is held).
std::string Renderer::StyleLine(const std::string& line, TextKind kind, RenderState& st) const {
  if (kind == TextKind::kReasoning) return Colored("2;3", ForTerminal(line)) + "\n";
  st.markdown_.SetWidth(WrapColumns());
  return st.markdown_.Line(ForTerminal(line));
}

std::string Renderer::EndLine(RenderState& st) const {
  std::string out;
  if (options_.live) {
    if (!st.partial_.empty()) {
      out = StyleLine(st.partial_, st.partial_kind_, st);
      st.partial_.clear();
    }
    return out + st.markdown_.Flush();
  }
  if (st.in_reasoning_ && options_.color) out += "\x1b[0m";
  st.in_reasoning_ = false;
  if (st.mid_line_) out += "\n";
  st.mid_line_ = false;
  return out;
}

std::string Renderer::Text(const std::string& text, TextKind kind, RenderState& st) const {
  if (text.empty()) return "";
  if (!options_.live) {
    std::string out;
    if (kind == TextKind::kAnswer && st.in_reasoning_) out += EndLine(st);
    if (kind == TextKind::kReasoning && !st.in_reasoning_) {
      if (options_.color) out += "\x1b[2m";
      st.in_reasoning_ = true;
    }
    st.mid_line_ = text.back() != '\n';
    return out + text;
  }
  std::string out;
  if (kind != st.partial_kind_) {
    out += EndLine(st);
    st.partial_kind_ = kind;
  }
  st.partial_ += text;
  size_t nl;
  while ((nl = st.partial_.find('\n')) != std::string::npos) {
    std::string line = st.partial_.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out += StyleLine(line, kind, st);
    st.partial_.erase(0, nl + 1);
  }
  return out;
}

std::string Renderer::UserLine(const std::string& text, const std::string& from) const {
  std::string out;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(&out,
                    Colored("1", absl::StrCat(first ? "› " : "  ", ForTerminal(std::string(line)))),
                    "\n");
    first = false;
  }
  if (!from.empty()) {
    out.pop_back();
    absl::StrAppend(&out, Dim(absl::StrCat("  (from ", ForTerminal(from), ")")), "\n");
  }
  return out;
}

std::string Renderer::Notice(const std::string& text) const {
  return Dim(ForTerminal(text)) + "\n";
}

std::string Renderer::ErrorLine(const std::string& text) const {
  return Colored("31", "error: " + ForTerminal(text)) + "\n";
}

std::string Renderer::StatusLine(const StatusInfo& s) const {
  std::vector<std::string> parts;
  parts.push_back(s.session_id.substr(0, 8));
  if (!s.model.empty()) parts.push_back(s.model);
  if (s.prompt_tokens >= 0) {
    parts.push_back(absl::StrCat(Thousands(s.prompt_tokens), " in / ",
                                 Thousands(s.completion_tokens), " out tokens"));
  }
  if (!s.clients.empty()) {
    std::vector<std::string> names;
    for (const std::string& c : s.clients) names.push_back(c == s.own_client ? "you" : c);
    parts.push_back(absl::StrCat(s.clients.size(), s.clients.size() == 1 ? " client" : " clients",
                                 " (", absl::StrJoin(names, ", "), ")"));
  }
  if (s.read_only) parts.push_back("read-only");
  if (!s.mode.empty()) parts.push_back("mode " + s.mode);
  // The sandbox in a word or two: "sandbox workspace-write", "sandbox off", "sandbox unavailable".
  if (!s.sandbox.empty()) {
    parts.push_back("sandbox " +
                    PrintableLine(s.sandbox.substr(0, s.sandbox.find_first_of(",:( "))));
  }
  return Dim(absl::StrCat("── ", absl::StrJoin(parts, " · "), " ──")) + "\n";
}

std::string Renderer::Markdown(const std::string& text) const {
  std::string out;
  MarkdownStyler md(Mode());
  md.SetWidth(WrapColumns());
  std::vector<std::string> lines = absl::StrSplit(ForTerminal(text), '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (const std::string& l : lines) out += md.Line(l);
  return out + md.Flush();
}

std::string Renderer::RenderTranscript(const std::vector<HistoryMessage>& messages,
                                       RenderState& st) const {
  std::string out;
  for (const HistoryMessage& m : messages) {
    if (m.role == "user") {
      absl::StrAppend(&out, EndLine(st), UserLine(m.content, ""));
    } else if (m.role == "assistant") {
      out += EndLine(st);
      if (!m.content.empty()) out += Markdown(m.content);
      for (const HistoryCall& c : m.calls) out += CallLine(c.name, c.arguments);
    } else if (m.role == "tool") {
      out += Clipped(m.content);
    }
  }
  return out;
}

std::vector<std::string> Renderer::LiveLines(const RenderState& st, absl::Time now,
                                             int cols) const {
  std::vector<std::string> lines;
  if (!options_.live) return lines;
  if (st.partial_kind_ == TextKind::kReasoning) {
    if (!st.partial_.empty()) lines.push_back(Colored("2;3", Sanitized(st.partial_)));
  } else if (!st.partial_.empty() || st.markdown_.holding()) {
    MarkdownStyler md = st.markdown_;
    md.SetWidth(cols > 1 ? cols - 1 : 0);
    for (std::string& l : md.Pending(Sanitized(st.partial_))) lines.push_back(std::move(l));
  }
  if (st.phase_ == Phase::kTool) {
    std::vector<std::string> tail = st.tool_tail_;
    if (!st.tool_tail_open_.empty()) tail.push_back(st.tool_tail_open_);
    int hidden =
        st.tool_lines_seen_ + (st.tool_tail_open_.empty() ? 0 : 1) - static_cast<int>(tail.size());
    if (hidden > 0) lines.push_back(Dim(absl::StrCat("  … ", hidden, " earlier lines")));
    for (const std::string& t : tail) lines.push_back(Dim(FitToColumns("  " + t, cols - 1)));
  }
  for (ChildLine& c : st.children_.Lines(now, cols, st.child_detail_)) {
    lines.push_back(c.detail ? Dim(c.text) : std::move(c.text));
  }
  if (st.pending_approval_.has_value()) {
    lines.push_back(st.can_answer_ ? ApprovalQuestion(*st.pending_approval_)
                                   : Dim("waiting for another client to answer…"));
  } else if (Animating(st)) {
    int64_t ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(now - st.phase_since_));
    const char* frame = kSpinnerFrames[(ms / 100) % 10];
    std::string what = "thinking";
    if (st.phase_ == Phase::kPreparing)
      what = absl::StrCat("writing the ", st.phase_what_, " call");
    if (st.phase_ == Phase::kTool) what = absl::StrCat("running ", st.phase_what_);
    lines.push_back(FitToColumns(
        Colored("36", frame) + " " + Dim(absl::StrCat(what, " · ", ms / 1000, "s")), cols - 1));
  }
  return lines;
}

bool Renderer::Animating(const RenderState& st) const {
  if (!options_.live || !options_.spinner || st.pending_approval_.has_value()) return false;
  return st.phase_ == Phase::kThinking || st.phase_ == Phase::kPreparing ||
         st.phase_ == Phase::kTool;
}

std::string Renderer::Snapshot(const v1::Snapshot& s, absl::Time now, RenderState& st) const {
  auto history = ParseHistory(s.transcript_json());
  std::string out = history.ok() ? RenderTranscript(*history, st) : "";
  st.pending_approval_.reset();
  st.queued_approvals_.clear();
  st.children_.Clear();  // the next ChildProgress of each brings its line back
  st.ready_calls_.clear();
  st.last_call_shown_.clear();
  if (s.state() == v1::SESSION_STATE_IDLE) {
    st.SetPhase(Phase::kIdle, now);
  } else {
    st.SetPhase(Phase::kThinking, now);
    if (s.state() == v1::SESSION_STATE_WAITING_APPROVAL && s.has_pending_approval()) {
      out += EndLine(st) + ApprovalPrompt(s.pending_approval());
      st.pending_approval_ = s.pending_approval();
      st.SetPhase(Phase::kApproval, now);
    }
  }
  out += Text(s.partial_text(), TextKind::kAnswer, st);
  return out;
}

// A child's approval asked while another is shown waits its turn (children run at once).
std::string Renderer::ChildProgress(const v1::ChildProgress& p, absl::Time now,
                                    RenderState& st) const {
  if (!st.children_.Update(p, now)) return "";
  std::string line = ChildSummaryLine(p, WrapColumns());
  return EndLine(st) + Colored(p.outcome() == v1::TURN_OUTCOME_DONE ? "32" : "31", line) + "\n";
}

std::string Renderer::TurnEnded(const v1::TurnEnded& t, absl::Time now, RenderState& st) const {
  std::string out = EndLine(st);
  st.ready_calls_.clear();
  st.last_call_shown_.clear();
  st.pending_approval_.reset();
  st.queued_approvals_.clear();
  st.children_.Clear();
  st.SetPhase(Phase::kIdle, now);
  if (t.outcome() == v1::TURN_OUTCOME_CANCELLED) {
    std::string by;
    if (!t.cancelled_by().empty()) {
      by = t.cancelled_by() == options_.own_client ? " by you" : " by " + t.cancelled_by();
    }
    out += Dim("[cancelled" + by + "]") + "\n";
  }
  if (t.outcome() == v1::TURN_OUTCOME_MAX_STEPS) out += Dim("[stopped: step limit]") + "\n";
  if (t.outcome() == v1::TURN_OUTCOME_ERROR) out += ErrorLine(t.error());
  return out;
}

std::string Renderer::Render(const v1::Event& e, absl::Time now, RenderState& st) const {
  switch (e.kind_case()) {
    case v1::Event::kSnapshot:
      return Snapshot(e.snapshot(), now, st);
    case v1::Event::kTurnStarted: {
      std::string out = EndLine(st);
      st.markdown_.Reset();
      st.SetPhase(Phase::kThinking, now);
      return out;
    }
    case v1::Event::kUserMessage:
      if (!options_.echo_prompts) return "";
      return EndLine(st) + UserLine(e.user_message().text(), e.user_message().client_name());
    case v1::Event::kTextDelta:
      if (st.phase_ != Phase::kApproval) st.SetPhase(Phase::kStreaming, now);
      return Text(e.text_delta().text(), TextKind::kAnswer, st);
    case v1::Event::kReasoningDelta:
      if (st.phase_ != Phase::kApproval) st.SetPhase(Phase::kStreaming, now);
      return Text(e.reasoning_delta().text(), TextKind::kReasoning, st);
    case v1::Event::kToolCallStarted:
      st.SetPhase(Phase::kPreparing, now, e.tool_call_started().name());
      return EndLine(st);
    case v1::Event::kToolCallReady: {
      const v1::ToolCall& c = e.tool_call_ready().call();
      st.SetPhase(Phase::kTool, now, c.name());
      st.tool_tail_.clear();
      st.tool_tail_open_.clear();
      st.tool_lines_seen_ = 0;
      std::string line = CallLine(c.name(), c.arguments());
      if (st.ready_calls_.size() < 1024) st.ready_calls_[c.id()] = line;  // bounded anyway
      st.last_call_shown_ = c.id();
      return EndLine(st) + line;
    }
    case v1::Event::kToolOutput:
      return ToolOutput(e.tool_output().chunk(), st);
    case v1::Event::kToolResult:
      return ToolResult(e.tool_result(), now, st);
    case v1::Event::kApprovalRequested:
      return ApprovalRequested(e.approval_requested().approval(), now, st);
    case v1::Event::kChildProgress:
      return ChildProgress(e.child_progress(), now, st);
    case v1::Event::kApprovalResolved:
      return ApprovalResolved(e.approval_resolved(), now, st);
    case v1::Event::kRetrying: {
      const auto& r = e.retrying();
      return EndLine(st) +
             Colored("33",
                     absl::StrCat("[", r.reason(), " | retry ", r.attempt(), "/", r.max_attempts(),
                                  " in ", (r.delay_ms() + 500) / 1000, "s]")) +
             "\n";
    }
    case v1::Event::kCompacted:
      return EndLine(st) +
             Dim(absl::StrCat("[compacted: ", e.compacted().removed_messages(),
                              " earlier messages summarised]")) +
             "\n";
    case v1::Event::kTurnEnded:
      return TurnEnded(e.turn_ended(), now, st);
    case v1::Event::kError:
      return EndLine(st) + ErrorLine(e.error().message());
    default:
      return "";
  }
}

}  // namespace agent::client
