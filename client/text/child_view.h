// The child sessions (the `task` tool's subagents) of the attached session as its clients
// show them, built from ChildProgress events: one live line per running child, updated in
// place; when a child finishes its line becomes a one-line summary committed above the live
// area. With `detail` (Ctrl-O) each running child also shows its current tool in full and the
// last line of text it wrote.
//
// Everything here is the model's text (titles, tool summaries, the child's words): it is made
// printable (no escape or control character reaches the terminal) and cut to the width.
// Plain text only: the renderer adds the colour. Pure; a ChildBoard is not thread-safe (one
// per RenderState, like the rest of it).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/v1/agent.pb.h"

namespace agent::client {

// One line for the live area.
struct ChildLine {
  std::string text;     // plain, at most the columns asked for
  bool detail = false;  // a detail line under a child's line (drawn dim)
};

class ChildBoard {
 public:
  // At most this many running children get a line; the rest are counted on one more line.
  static constexpr int kMaxShown = 8;
  // With details, at most this many lines in all (details go first when they do not fit).
  static constexpr int kMaxLines = 16;

  // At most this many running children are kept (a bound: the daemon caps them far lower).
  static constexpr size_t kMaxRunning = 256;

  // Takes the child's latest state. True the first time the child is seen finished (its
  // live line is dropped; the caller commits ChildSummaryLine); false otherwise.
  bool Update(const agent::v1::ChildProgress& p, absl::Time now);
  // The live lines of the running children, in the order they started, each at most
  // `cols` - 1 columns (cols <= 1: not cut).
  std::vector<ChildLine> Lines(absl::Time now, int cols, bool detail) const;
  // The parent's turn ended or another session was attached: no child is live any more.
  void Clear();
  bool empty() const { return running_.empty(); }

 private:
  struct Child {
    agent::v1::ChildProgress last;
    absl::Time since;
  };
  std::vector<Child> running_;
  // Children already summarised (a late event must not bring their line back); bounded.
  std::deque<std::string> finished_;
};

// "⋯ title · agent · tool · 3 steps · 1.2k tokens · 12s": the line of a running child, the
// title cut first so that the figures stay visible in `cols` columns (<= 0: not cut).
std::string ChildRunningLine(const agent::v1::ChildProgress& p, absl::Duration running, int cols);

// "✓ title · agent · done · 5 steps · 1.2k tokens · child 1a2b3c4d", cut like the above.
std::string ChildSummaryLine(const agent::v1::ChildProgress& p, int cols);

// "[child: title] " for an approval a child asked for (PendingApproval.child_title), else "".
std::string ChildApprovalMark(const agent::v1::PendingApproval& approval);

// A session the `task` tool made (it has an agent and a depth below the person's own).
// `agent attach`/`agent -r` never pick one unless it is named.
bool IsChildSession(const agent::v1::Session& s);

// 850, 12.3k, 4.5M: a token count in a line.
std::string ShortCount(int64_t n);

}  // namespace agent::client
