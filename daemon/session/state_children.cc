// SessionState (session_state.h): what subagents (daemon/subagents/) change of a parent
// session: the settings a child inherits, a child's approvals shown to the parent's clients,
// its usage, the running children a change of mode reaches.
#include <algorithm>

#include "daemon/session/deferred_writes.h"
#include "daemon/session/session.h"
#include "daemon/session/session_state.h"

namespace agent::daemon {
namespace v1 = agent::v1;

SessionSettings SessionState::Inherited() const {
  SessionMutexLock l(&mu_);
  SessionSettings s = settings_;
  s.cwd = meta_.cwd.empty() ? workdir_ : meta_.cwd;
  s.child.reset();
  return s;
}

void SessionState::ForwardChildApproval(const v1::PendingApproval& approval) {
  SessionMutexLock l(&mu_);
  child_approvals_.push_back(approval);
  Emit(events::ApprovalRequested(approval));
}

void SessionState::ChildApprovalResolved(const std::string& child_id, const std::string& call_id,
                                         std::optional<v1::Event> resolved) {
  SessionMutexLock l(&mu_);
  auto it = std::find_if(child_approvals_.begin(), child_approvals_.end(),
                         [&](const v1::PendingApproval& a) {
                           return a.child_session_id() == child_id && a.call_id() == call_id;
                         });
  if (it == child_approvals_.end()) return;
  child_approvals_.erase(it);
  if (resolved.has_value()) Emit(*std::move(resolved));
}

std::string SessionState::ChildApprovalOwner(const std::string& call_id) const {
  SessionMutexLock l(&mu_);
  for (const v1::PendingApproval& a : child_approvals_) {
    if (a.call_id() == call_id) return a.child_session_id();
  }
  return "";
}

void SessionState::AddChildUsage(const v1::Usage& usage) {
  {
    SessionMutexLock l(&mu_);
    ctx_.usage.AddOther(usage);
    SaveLocked(Save::kMetaOnly);
  }
  WriteSaves();
}

v1::PolicyMode SessionState::AddRunningChild(const std::shared_ptr<Session>& child) {
  SessionMutexLock l(&mu_);
  running_children_.push_back(child);
  return settings_.policy;
}

void SessionState::RemoveRunningChild(const Session* child) {
  SessionMutexLock l(&mu_);
  std::erase_if(running_children_, [child](const std::weak_ptr<Session>& w) {
    std::shared_ptr<Session> c = w.lock();
    return c == nullptr || c.get() == child;
  });
}

}  // namespace agent::daemon
