// ChildRunner: runs one turn of a child session for a parent's `task` call and shows it in
// the parent: ChildProgress when the child's turn starts (its prompt saved in its transcript),
// on each step, tool start and end, and the finish; the child's approval requests forwarded
// to the parent's clients (and their resolution); the child's usage added to the parent's
// totals at the end. A cancel of the parent's turn cancels the child's. It watches the child
// as an observer (Session::AddObserver), so the child's transcript never enters the parent.
//
// Thread-safety: Run is called once, from the parent's tool thread; Deliver from the child's
// threads under the child's mutex (it only queues, under the runner's own leaf mutex).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "agent/v1/agent.pb.h"
#include "common/mutex.h"
#include "daemon/session/event_log.h"
#include "daemon/session/session.h"
#include "daemon/subagents/task_result.h"

namespace agent::daemon::subagents {

struct ChildTask {
  std::shared_ptr<Session> parent;
  std::shared_ptr<Session> child;
  std::string call_id;  // the parent's task call
  std::string title;    // its description
  std::string agent;
  std::string prompt;
  const std::atomic<bool>* cancelled = nullptr;  // the parent's turn's
};

class ChildRunner : public Subscriber {
 public:
  explicit ChildRunner(ChildTask task);
  ~ChildRunner() override;

  // Sends the prompt and waits for the child's turn to end (bounded: a cancel is passed on
  // and the child's turn ends with it).
  ChildEnd Run();

  void Deliver(const EventPtr& event) override;

 private:
  EventPtr Next();
  void Handle(const agent::v1::Event& e);
  void Publish();

  ChildTask task_;
  agent::Mutex mu_;
  agent::CondVar cv_;
  std::deque<EventPtr> queue_ ABSL_GUARDED_BY(mu_);
  bool observing_ = false;
  // The rest is the Run thread's own.
  agent::v1::ChildProgress progress_;
  std::string open_approval_;  // the child's call waiting for an answer
  std::string answer_;
  std::optional<agent::v1::TurnEnded> ended_;
};

}  // namespace agent::daemon::subagents
