// The Renderer's approvals: what a gated call wants (with a compact diff for edits), the
// question, and who answered what. Split from renderer.cc; the same class.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "client/terminal/show_controls.h"
#include "client/terminal/terminal_text.h"
#include "client/view/renderer.h"
#include "client/view/renderer_text.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// Rules are recorded as they are: shown with every character that could act on the terminal
// written as an escape, so what the person agrees to is what gets recorded.
template <typename Rules>
std::string VisibleRules(const Rules& rules) {
  std::string out;
  for (const std::string& r : rules) absl::StrAppend(&out, out.empty() ? "" : ", ", Visible(r));
  return out;
}

// A command or path as the person must judge it: what a terminal would act on or hide
// (escapes, bidi overrides) shown, not applied and not dropped; lines kept, tabs as spaces.
std::string ShownText(const std::string& text) {
  return absl::StrReplaceAll(ShowControls(text), {{"\t", "    "}});
}

}  // namespace

std::string Renderer::ApprovalPrompt(const v1::PendingApproval& a) const {
  std::string out;
  if (a.has_question()) {
    // The model's question: its words and its choices, model text shown escaped.
    if (a.tool() == "present_plan") {  // plan mode's hand-over: the plan, then how to go on
      absl::StrAppend(&out,
                      Colored("1;36", absl::StrCat("? ", ChildApprovalMark(a),
                                                   "the agent's plan; how to go on?")),
                      "\n");
      for (absl::string_view line : absl::StrSplit(ShownText(a.question().text()), '\n')) {
        absl::StrAppend(&out, "  ", line, "\n");
      }
    } else {
      absl::StrAppend(&out,
                      Colored("1;36", absl::StrCat("? ", ChildApprovalMark(a), "the agent asks: ")),
                      ShownText(a.question().text()), "\n");
    }
    for (int i = 0; i < a.question().options_size(); ++i) {
      absl::StrAppend(&out, "  ", Colored("1", absl::StrCat(i + 1, ".")), " ",
                      ShownText(a.question().options(i)), "\n");
    }
    return out;
  }
  if (a.escalation()) {
    // Not one more question: the command would leave the sandbox, so it looks apart.
    absl::StrAppend(
        &out, Colored("1;41;97", absl::StrCat(" ! ", ChildApprovalMark(a), "OUTSIDE THE SANDBOX ")),
        " ",
        Colored("1;31",
                "bash wants to run, with all your access (files, "
                "network, secrets): "),
        ShownText(a.summary()), "\n", Colored("1", "  its reason: "),
        ShownText(a.justification().empty() ? "(none given)" : a.justification()), "\n");
    return out;
  }
  // Only the file tools change something for sure; an MCP tool may only read (readOnlyHint).
  const char* verb = a.tool() == "bash"                                    ? " wants to run: "
                     : a.tool() == "write_file" || a.tool() == "edit_file" ? " wants to change: "
                                                                           : " wants to call: ";
  absl::StrAppend(&out, Colored("1;33", absl::StrCat("? ", ChildApprovalMark(a), a.tool(), verb)),
                  ShownText(a.summary()), "\n");
  if (a.requires_person()) {
    absl::StrAppend(
        &out, Dim(absl::StrCat("  only a person may allow this: ", ShownText(a.person_reason()))),
        "\n");
  }
  std::string diff = a.diff();
  while (!diff.empty() && diff.back() == '\n') diff.pop_back();
  if (diff.empty()) return out;
  for (absl::string_view line : absl::StrSplit(diff, '\n')) {
    absl::StrAppend(&out, "  ", DiffLine(std::string(line)), "\n");
  }
  return out;
}

std::string Renderer::DiffLine(const std::string& line) const {
  std::string l = absl::StrReplaceAll(ShowControls(line), {{"\n", "\\n"}, {"\t", "    "}});
  if (l.rfind("+++", 0) == 0 || l.rfind("---", 0) == 0) return Colored("1", l);
  if (!l.empty() && l[0] == '+') return Colored("32", l);
  if (!l.empty() && l[0] == '-') return Colored("31", l);
  if (l.rfind("@@", 0) == 0) return Colored("36", l);
  return l;
}

std::string Renderer::EditSummary(const std::string& diff) const {
  constexpr int kMaxHunkLines = 12;
  std::string path;
  int added = 0, removed = 0, hunks = 0, shown = 0, hidden = 0;
  bool cut = false;
  std::string hunk;
  for (absl::string_view v : absl::StrSplit(diff, '\n')) {
    std::string line(v);
    if (line.rfind("+++ ", 0) == 0) {
      path = line.substr(line.rfind("+++ b/", 0) == 0 ? 6 : 4);
      continue;
    }
    if (line.rfind("--- ", 0) == 0) continue;
    if (line.rfind("\\ (diff cut)", 0) == 0) cut = true;
    if (line.rfind("@@", 0) == 0) ++hunks;
    if (!line.empty() && line[0] == '+') ++added;
    if (!line.empty() && line[0] == '-') ++removed;
    if (hunks != 1 || line.empty()) continue;  // the first hunk only
    if (shown < kMaxHunkLines) {
      absl::StrAppend(&hunk, "    ", DiffLine(line), "\n");
      ++shown;
    } else {
      ++hidden;
    }
  }
  if (hunks == 0) return "";
  std::string out = absl::StrCat("  ", Colored("1", OneLine(ShowControls(path), kMaxArgsChars)),
                                 " ", Colored("32", absl::StrCat("+", added)), " ",
                                 Colored("31", absl::StrCat("-", removed)), cut ? " or more" : "");
  out += "\n" + hunk;
  if (hidden > 0) absl::StrAppend(&out, Dim(absl::StrCat("    … ", hidden, " more lines")), "\n");
  if (hunks > 1) {
    absl::StrAppend(
        &out, Dim(absl::StrCat("    … ", hunks - 1, hunks == 2 ? " more hunk" : " more hunks")),
        "\n");
  }
  return out;
}

std::string Renderer::ApprovalQuestion(const v1::PendingApproval& a) const {
  if (a.has_question()) {
    const int n = a.question().options_size();
    std::string choose = n > 0 ? absl::StrCat("[1-", n, "] choose / ") : "";
    return absl::StrCat(Colored("1;36", "Answer?"), " ", Colored("1", choose),
                        Colored("1", "[t]ype an answer"), " / ", Colored("1", "[n]o answer"), " ");
  }
  std::string rules = VisibleRules(a.proposed_rules());
  std::string always = rules.empty() ? "[a]lways" : absl::StrCat("[a]lways: ", rules);
  // The prefix rule a person most likely means, and the exact command beside it.
  std::string exactly;
  if (std::string exact = VisibleRules(a.exact_rules()); !exact.empty()) {
    exactly = absl::StrCat(" / ", Colored("1", absl::StrCat("[e]xactly: ", exact)));
  }
  return absl::StrCat(Colored("1;33", "Allow?"), " ", Colored("1", "[y]es"), " / ",
                      Colored("1", "[n]o"), " / ", Colored("1", "[t]ell it instead"), " / ",
                      Colored("1", always), exactly, " ");
}

std::string Renderer::ApprovalOutcome(const v1::ApprovalResolved& r) const {
  std::string by;
  if (!r.client_name().empty()) {
    by = r.client_name() == options_.own_client ? " by you" : " by " + r.client_name();
  }
  if (r.decision() == v1::DECISION_DENY) {
    std::string why = r.reason().empty() ? "" : absl::StrCat(" (", r.reason(), ")");
    return Colored("31", absl::StrCat("✗ denied", by, why)) + "\n";
  }
  if (r.decision() == v1::DECISION_ALLOW_ALWAYS) {
    std::string rules = VisibleRules(r.rules());
    return Colored("32", absl::StrCat("✓ allowed always", by, rules.empty() ? "" : ": " + rules)) +
           "\n";
  }
  return Colored("32", absl::StrCat("✓ allowed", by)) + "\n";
}

std::string Renderer::QuestionOutcome(const v1::ApprovalResolved& r) const {
  std::string by;
  if (!r.client_name().empty()) {
    by = r.client_name() == options_.own_client ? " by you" : " by " + r.client_name();
  }
  if (r.decision() == v1::DECISION_DENY || r.reason().empty()) {
    std::string why = r.reason().empty() ? "" : absl::StrCat(" (", ShownText(r.reason()), ")");
    return Colored("33", absl::StrCat("· not answered", by, why)) + "\n";
  }
  return Colored("32", absl::StrCat("✓ answered", by, ": ")) + ShownText(r.reason()) + "\n";
}

std::string Renderer::ApprovalRequested(const v1::PendingApproval& a, absl::Time now,
                                        RenderState& st) const {
  constexpr size_t kMaxQueued = 64;
  if (st.pending_approval_.has_value() && st.pending_approval_->call_id() != a.call_id()) {
    auto& q = st.queued_approvals_;
    bool known = std::any_of(q.begin(), q.end(), [&](const v1::PendingApproval& x) {
      return x.call_id() == a.call_id();
    });
    if (!known && q.size() < kMaxQueued) q.push_back(a);
    return "";
  }
  st.pending_approval_ = a;
  st.SetPhase(Phase::kApproval, now, st.phase_what_);
  return EndLine(st) + ApprovalPrompt(a);
}

std::string Renderer::ApprovalResolved(const v1::ApprovalResolved& r, absl::Time now,
                                       RenderState& st) const {
  auto& q = st.queued_approvals_;
  auto queued = std::find_if(
      q.begin(), q.end(), [&](const v1::PendingApproval& x) { return x.call_id() == r.call_id(); });
  if (queued != q.end()) {  // answered elsewhere before it was shown here
    q.erase(queued);
    return "";
  }
  bool child = false;
  bool question = false;
  if (st.pending_approval_.has_value() && st.pending_approval_->call_id() == r.call_id()) {
    child = !st.pending_approval_->child_session_id().empty();
    question = st.pending_approval_->has_question();
    st.pending_approval_.reset();
  }
  // A child's denial ends nothing of the parent's: its `task` call still runs.
  if (r.decision() == v1::DECISION_DENY && !child) {
    st.SetPhase(Phase::kThinking, now);
  } else {
    st.SetPhase(Phase::kTool, now, st.phase_what_);
  }
  std::string out = EndLine(st) + (question ? QuestionOutcome(r) : ApprovalOutcome(r));
  if (!st.pending_approval_.has_value() && !q.empty()) {
    v1::PendingApproval next = std::move(q.front());
    q.pop_front();
    out += ApprovalRequested(next, now, st);
  }
  return out;
}

}  // namespace agent::client
