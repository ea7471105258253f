// SessionView and the questions a turn asks: an approval or the model's own question shown
// (asked at this terminal, answered for a run without one, or watched), its answer, and the
// notices held while it is shown so that none lands between the question and its answer line.
#include <memory>
#include <string>
#include <utility>

#include "client/view/session_view.h"

namespace agent::client {

namespace v1 = agent::v1;

void SessionView::EmitNotice(const std::string& rendered) {
  constexpr size_t kMaxHeld = 64 << 10;  // a flood of notices is cut, not held without bound
  if (Asking()) {
    if (held_notices_.size() < kMaxHeld) held_notices_ += rendered;
    return;
  }
  Emit(rendered);
}

void SessionView::FlushHeldNotices() { Emit(std::exchange(held_notices_, "")); }

void SessionView::OnApprovalRequested(const v1::Event& e, absl::Time now) {
  if (!o_.json) Trace(renderer_->Render(e, now, screen_));
  const v1::PendingApproval& a = e.approval_requested().approval();
  if (interactive_) {
    WriteOut(attention_.Alert(a.has_question() ? "has a question for you"
                                               : "needs your approval: " + a.tool()));
  }
  if (o_.read_only) {
    if (o_.json) renderer_->Render(e, now, screen_);
    screen_.SetApprovalLine(false);
  } else if (ask_) {
    if (o_.json) renderer_->Render(e, now, screen_);
    screen_.SetApprovalLine(true);
    if (!live_) Trace(renderer_->ApprovalQuestion(a) + "\n");
    if (!editor_ && !cbreak_) cbreak_ = std::make_unique<CbreakMode>();
  } else {
    // No terminal to ask on: --yes allows, otherwise the call is denied with a reason. A call
    // that needs a person's answer is never allowed here, and the model's question gets no
    // answer (it decides itself). FAILED_PRECONDITION: another client was first.
    if (a.has_question()) {
      const std::string& on =
          a.child_session_id().empty() ? turn_.session_id : a.child_session_id();
      (void)commands_->Approve(on, a.call_id(), v1::DECISION_DENY,
                               "nobody can answer: agent runs without a terminal");
      return;
    }
    const bool allow = o_.yes && !a.requires_person();
    std::string reason;
    if (!o_.yes) reason = "not approved: the user ran agent without --yes";
    if (o_.yes && !allow) {
      reason = "not approved: only a person may allow this call (" + a.person_reason() +
               "), and nobody was asked";
    }
    // A child's call is answered on the child (the daemon takes either session).
    const std::string& on = a.child_session_id().empty() ? turn_.session_id : a.child_session_id();
    if (!allow) ++unasked_denials_;  // a denial nobody chose: the exit code says so (4)
    (void)commands_->Approve(on, a.call_id(), allow ? v1::DECISION_ALLOW_ONCE : v1::DECISION_DENY,
                             reason);
  }
}

void SessionView::OnApprovalResolved(const v1::Event& e, absl::Time now) {
  deny_message_.Stop();  // answered, here or by another client
  std::string text = renderer_->Render(e, now, screen_);
  if (!o_.json) Trace(text);
  turn_.answered_call.clear();
  if (!Asking()) FlushHeldNotices();  // what came while the question was shown
  if (screen_.pending_approval().has_value()) {
    // Another child's question, held back while this one was shown, is asked now.
    if (ask_ && !o_.read_only && !live_) {
      Trace(renderer_->ApprovalQuestion(*screen_.pending_approval()) + "\n");
    }
    return;
  }
  if (!editor_ && !o_.read_only) cbreak_.reset();  // one-shot: the question is over
}

}  // namespace agent::client
