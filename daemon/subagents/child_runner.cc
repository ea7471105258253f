#include "daemon/subagents/child_runner.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "daemon/context/usage.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::subagents {
namespace {

namespace v1 = agent::v1;

constexpr absl::Duration kPoll = absl::Milliseconds(50);
// After a cancel the child's turn ends as soon as its model request or tool stops; this only
// bounds a child that does not.
constexpr absl::Duration kCancelGrace = absl::Seconds(30);
constexpr size_t kMaxLine = 200;

// The last non-empty line of `text`, bounded.
std::string LastLine(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (size_t nl = text.rfind('\n'); nl != std::string_view::npos) text = text.substr(nl + 1);
  return std::string(tools::Utf8Prefix(text, kMaxLine));
}

// "bash: make test": the tool and the start of its first string argument.
std::string ToolLine(const v1::ToolCall& call) {
  std::string line = call.name();
  if (auto args = ParseJson(call.arguments()); args.ok() && args->is_object()) {
    for (const auto& [key, value] : args->items()) {
      if (!value.is_string()) continue;
      absl::StrAppend(&line, ": ", LastLine(value.get<std::string>()));
      break;
    }
  }
  return std::string(tools::Utf8Prefix(line, kMaxLine));
}

bool Wanted(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kTurnStarted:
    case v1::Event::kAssistantMessage:
    case v1::Event::kToolCallReady:
    case v1::Event::kToolResult:
    case v1::Event::kApprovalRequested:
    case v1::Event::kApprovalResolved:
    case v1::Event::kUsage:
    case v1::Event::kTurnEnded:
      return true;
    default:
      return false;  // text deltas and tool output: the child's own clients see those
  }
}

}  // namespace

ChildRunner::ChildRunner(ChildTask task) : task_(std::move(task)) {
  progress_.set_child_id(task_.child->id());
  progress_.set_call_id(task_.call_id);
  progress_.set_title(task_.title);
  progress_.set_agent(task_.agent);
  progress_.set_state(v1::SESSION_STATE_RUNNING);
}

ChildRunner::~ChildRunner() {
  if (observing_) task_.child->RemoveObserver(this);
  task_.parent->RemoveRunningChild(task_.child.get());  // also after an early return of Run
}

void ChildRunner::Deliver(const EventPtr& event) {
  if (!Wanted(*event)) return;
  agent::MutexLock l(&mu_);
  queue_.push_back(event);
  cv_.Signal();
}

EventPtr ChildRunner::Next() {
  agent::MutexLock l(&mu_);
  if (queue_.empty()) cv_.WaitWithTimeout(&mu_, kPoll);
  if (queue_.empty()) return nullptr;
  EventPtr e = std::move(queue_.front());
  queue_.pop_front();
  return e;
}

void ChildRunner::Publish() {
  v1::Event e;
  *e.mutable_child_progress() = progress_;
  task_.parent->PublishChildEvent(std::move(e));
}

void ChildRunner::Handle(const v1::Event& e) {
  switch (e.kind_case()) {
    case v1::Event::kTurnStarted:
      break;  // the first progress: the prompt is in the child's transcript, saved
    case v1::Event::kAssistantMessage:
      progress_.set_steps(progress_.steps() + 1);
      if (!e.assistant_message().text().empty()) {
        answer_ = e.assistant_message().text();
        progress_.set_last_text(LastLine(answer_));
      }
      break;
    case v1::Event::kToolCallReady:
      progress_.set_current_tool(ToolLine(e.tool_call_ready().call()));
      break;
    case v1::Event::kToolResult:
      progress_.set_current_tool("");
      break;
    case v1::Event::kUsage:
      context::Add(progress_.mutable_usage(), e.usage());
      return;  // shown with the next step
    case v1::Event::kApprovalRequested: {
      v1::PendingApproval a = e.approval_requested().approval();
      a.set_child_session_id(task_.child->id());
      a.set_child_title(task_.title);
      open_approval_ = a.call_id();
      progress_.set_state(v1::SESSION_STATE_WAITING_APPROVAL);
      task_.parent->ForwardChildApproval(a);
      break;
    }
    case v1::Event::kApprovalResolved: {
      const std::string call_id = e.approval_resolved().call_id();
      v1::Event resolved;
      *resolved.mutable_approval_resolved() = e.approval_resolved();
      task_.parent->ChildApprovalResolved(task_.child->id(), call_id, std::move(resolved));
      if (call_id == open_approval_) open_approval_.clear();
      progress_.set_state(v1::SESSION_STATE_RUNNING);
      break;
    }
    case v1::Event::kTurnEnded:
      ended_ = e.turn_ended();
      return;  // Run publishes the finish
    default:
      return;
  }
  Publish();
}

ChildEnd ChildRunner::Run() {
  ChildEnd end;
  end.child_id = task_.child->id();
  end.agent = task_.agent;
  task_.child->AddObserver(this);
  observing_ = true;
  task_.parent->AddRunningChild(task_.child);
  absl::StatusOr<int> sent = task_.child->SendPrompt(task_.prompt, "task");
  if (!sent.ok()) {
    end.outcome = v1::TURN_OUTCOME_ERROR;
    end.error = std::string(sent.status().message());
    return end;
  }
  std::optional<absl::Time> cancel_since;
  // Bounded: the child's turn ends (max steps, its own timeouts), and after a cancel the wait
  // is at most kCancelGrace.
  while (!ended_.has_value()) {
    if (*task_.cancelled) {
      if (!cancel_since.has_value()) cancel_since = MonotonicNow();
      // Again on each poll: a cancel that came before the child's turn began is not lost.
      (void)task_.child->Cancel("task");
      if (MonotonicNow() - *cancel_since > kCancelGrace) break;
    }
    if (EventPtr e = Next(); e != nullptr) Handle(*e);
  }
  task_.child->RemoveObserver(this);
  observing_ = false;
  task_.parent->RemoveRunningChild(task_.child.get());
  if (!open_approval_.empty()) {
    task_.parent->ChildApprovalResolved(task_.child->id(), open_approval_, std::nullopt);
  }
  end.outcome = ended_.has_value() ? ended_->outcome() : v1::TURN_OUTCOME_CANCELLED;
  if (ended_.has_value()) {
    end.error = ended_->error();
    task_.parent->AddChildUsage(ended_->usage());
    *progress_.mutable_usage() = ended_->usage();
  }
  end.answer = answer_;
  progress_.set_state(v1::SESSION_STATE_IDLE);
  progress_.set_current_tool("");
  progress_.set_finished(true);
  progress_.set_outcome(end.outcome);
  Publish();
  return end;
}

}  // namespace agent::daemon::subagents
