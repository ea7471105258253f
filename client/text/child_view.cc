#include "client/text/child_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/terminal/terminal_text.h"
#include "client/text/session_table.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// A child summarised this long ago is forgotten: its late events are long past.
constexpr size_t kMaxFinishedRemembered = 256;
// Fields other than the title are cut to this many columns: the figures must stay in view.
constexpr int kFieldColumns = 24;

std::string Field(const std::string& s) { return FitColumns(PrintableLine(s), kFieldColumns); }

std::string Key(const v1::ChildProgress& p) {
  return p.child_id().empty() ? "call:" + p.call_id() : p.child_id();
}

// The tool's name: what comes before its summary ("bash: make" -> "bash").
std::string ToolName(const std::string& current_tool) {
  std::string t = PrintableLine(current_tool);
  size_t end = t.find_first_of(" :(");
  return Field(end == std::string::npos ? t : t.substr(0, end));
}

std::string Elapsed(absl::Duration d) {
  int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(d));
  if (s < 60) return absl::StrCat(s, "s");
  return absl::StrFormat("%dm%02ds", s / 60, s % 60);
}

std::string Figures(const v1::ChildProgress& p) {
  const int64_t tokens = p.usage().prompt_tokens() + p.usage().completion_tokens();
  return absl::StrCat(p.steps(), p.steps() == 1 ? " step" : " steps", " · ", ShortCount(tokens),
                      " tokens");
}

// head + title + tail in `cols` columns: the title gives way first, then the whole line.
std::string Fit(const std::string& head, const std::string& title, const std::string& tail,
                int cols) {
  std::string whole = head + title + tail;
  if (cols <= 0 || DisplayWidth(whole) <= cols) return whole;
  int room = cols - DisplayWidth(head) - DisplayWidth(tail);
  if (room >= 4) return head + FitColumns(title, room) + tail;
  return FitColumns(whole, cols);
}

std::string Title(const v1::ChildProgress& p) {
  std::string t = PrintableLine(p.title());
  return t.empty() ? "(untitled)" : t;
}

const char* OutcomeWord(v1::TurnOutcome o) {
  switch (o) {
    case v1::TURN_OUTCOME_DONE:
      return "done";
    case v1::TURN_OUTCOME_CANCELLED:
      return "cancelled";
    case v1::TURN_OUTCOME_MAX_STEPS:
      return "stopped at the step limit";
    case v1::TURN_OUTCOME_ERROR:
      return "failed";
    default:
      return "ended";
  }
}

}  // namespace

bool IsChildSession(const v1::Session& s) { return s.depth() > 0 || !s.agent().empty(); }

std::string ShortCount(int64_t n) {
  if (n < 1000) return absl::StrCat(n);
  if (n < 1000000) return absl::StrFormat("%.1fk", static_cast<double>(n) / 1e3);
  return absl::StrFormat("%.1fM", static_cast<double>(n) / 1e6);
}

std::string ChildRunningLine(const v1::ChildProgress& p, absl::Duration running, int cols) {
  std::string tail = " · " + Field(p.agent().empty() ? "general" : p.agent());
  std::string doing = p.current_tool().empty() ? "thinking" : ToolName(p.current_tool());
  if (p.state() == v1::SESSION_STATE_WAITING_APPROVAL) doing = "waiting for an answer";
  tail += " · " + doing;
  absl::StrAppend(&tail, " · ", Figures(p), " · ", Elapsed(running));
  return Fit("↳ ", Title(p), tail, cols);
}

std::string ChildSummaryLine(const v1::ChildProgress& p, int cols) {
  const bool ok = p.outcome() == v1::TURN_OUTCOME_DONE;
  std::string tail = " · " + Field(p.agent().empty() ? "general" : p.agent());
  absl::StrAppend(&tail, " · ", OutcomeWord(p.outcome()), " · ", Figures(p));
  if (!p.child_id().empty()) absl::StrAppend(&tail, " · child ", Field(p.child_id().substr(0, 8)));
  return Fit(ok ? "✓ " : "✗ ", Title(p), tail, cols);
}

std::string ChildApprovalMark(const v1::PendingApproval& a) {
  if (a.child_session_id().empty() && a.child_title().empty()) return "";
  std::string title = FitColumns(PrintableLine(a.child_title()), 48);
  if (title.empty()) title = PrintableLine(a.child_session_id().substr(0, 8));
  return "[child: " + title + "] ";
}

bool ChildBoard::Update(const v1::ChildProgress& p, absl::Time now) {
  const std::string key = Key(p);
  if (std::find(finished_.begin(), finished_.end(), key) != finished_.end()) return false;
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const Child& c) { return Key(c.last) == key; });
  if (p.finished()) {
    if (it != running_.end()) running_.erase(it);
    finished_.push_back(key);
    if (finished_.size() > kMaxFinishedRemembered) finished_.pop_front();
    return true;
  }
  if (it != running_.end()) {
    it->last = p;
  } else if (running_.size() < kMaxRunning) {
    running_.push_back(Child{p, now});
  }
  return false;
}

std::vector<ChildLine> ChildBoard::Lines(absl::Time now, int cols, bool detail) const {
  const int width = cols > 1 ? cols - 1 : 0;
  const int count = static_cast<int>(running_.size());
  const int shown = std::min(count, kMaxShown);
  // Details only while the whole area stays within kMaxLines: a live area taller than the
  // terminal could not be redrawn in place.
  int spare = kMaxLines - shown - (count > shown ? 1 : 0);
  std::vector<ChildLine> out;
  for (int i = 0; i < shown; ++i) {
    const Child& c = running_[static_cast<size_t>(i)];
    out.push_back({ChildRunningLine(c.last, now - c.since, width), false});
    if (!detail) continue;
    const std::string tool = PrintableLine(c.last.current_tool());
    if (!tool.empty() && spare > 0) {
      out.push_back({Fit("    tool: ", tool, "", width), true});
      --spare;
    }
    const std::string text = PrintableLine(c.last.last_text());
    if (!text.empty() && spare > 0) {
      out.push_back({Fit("    │ ", text, "", width), true});
      --spare;
    }
  }
  if (count > shown) {
    out.push_back({Fit("", absl::StrCat("  … ", count - shown, " more running"), "", width), true});
  }
  return out;
}

void ChildBoard::Clear() { running_.clear(); }

}  // namespace agent::client
