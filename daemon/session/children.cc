// Session's hooks for subagents (daemon/subagents/): what a child inherits, observing a
// child's events, a child's approvals and usage shown in its parent. The session itself
// never starts or finds a child; the `task` tool does, through these.
#include <algorithm>

#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/session.h"

namespace agent::daemon {

namespace v1 = agent::v1;

SessionSettings Session::InheritedSettings() const {
  SessionMutexLock l(&mu_);
  SessionSettings s = settings_;
  s.cwd = meta_.cwd.empty() ? workdir_ : meta_.cwd;
  s.child.reset();
  return s;
}

void Session::AddObserver(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  audience_.AddObserver(sub);
}

void Session::RemoveObserver(Subscriber* sub) {
  SessionMutexLock l(&mu_);
  audience_.RemoveObserver(sub);
}

void Session::PublishChildEvent(v1::Event event) {
  SessionMutexLock l(&mu_);
  Emit(std::move(event));
}

void Session::ForwardChildApproval(const v1::PendingApproval& approval) {
  SessionMutexLock l(&mu_);
  child_approvals_.push_back(approval);
  Emit(events::ApprovalRequested(approval));
}

void Session::ChildApprovalResolved(const std::string& child_id, const std::string& call_id,
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

std::string Session::ChildApprovalOwner(const std::string& call_id) const {
  SessionMutexLock l(&mu_);
  for (const v1::PendingApproval& a : child_approvals_) {
    if (a.call_id() == call_id) return a.child_session_id();
  }
  return "";
}

void Session::AddChildUsage(const v1::Usage& usage) {
  SessionMutexLock l(&mu_);
  ctx_.usage.AddOther(usage);
  SaveLocked(Save::kMetaOnly);
}

void Session::AddRunningChild(const std::shared_ptr<Session>& child) {
  agent::MutexLock policy(&policy_mu_);  // a SetPolicy here waits, then reaches the child too
  v1::PolicyMode mode;
  {
    SessionMutexLock l(&mu_);
    running_children_.push_back(child);
    mode = settings_.policy;
  }
  (void)child->SetPolicy(mode, {});
}

void Session::RemoveRunningChild(const Session* child) {
  SessionMutexLock l(&mu_);
  std::erase_if(running_children_, [child](const std::weak_ptr<Session>& w) {
    std::shared_ptr<Session> c = w.lock();
    return c == nullptr || c.get() == child;
  });
}

}  // namespace agent::daemon
