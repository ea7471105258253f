// FakeModelClient: a ModelClient that plays back scripted replies, streaming their text to
// the sink, for tests of the session and turn loop without a network. Thread-safe: the
// script is shared with the test, which may add replies while a session runs.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/mutex.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/request_cache.h"

namespace agent::testing {

struct FakeScript {
  agent::Mutex mu;
  std::deque<absl::StatusOr<daemon::llm::ModelReply>> replies ABSL_GUARDED_BY(mu);
  std::vector<Json> requests ABSL_GUARDED_BY(mu);  // the messages of every request
  // Unset: `requests` stays empty (benches: a request's messages cost as much as the
  // transcript, which would be the fake's cost, not the session's).
  bool record_requests ABSL_GUARDED_BY(mu) = true;
  // Every request's transport settings: {connect_timeout_ms, idle_timeout_ms, max_attempts}.
  std::vector<std::vector<int>> transport ABSL_GUARDED_BY(mu);
  // While set, Complete waits (for cancel tests) until cleared or cancelled.
  bool hold ABSL_GUARDED_BY(mu) = false;
  bool holding ABSL_GUARDED_BY(mu) = false;  // a request is waiting on `hold`

  agent::CondVar cv;  // signalled whenever `hold` or `holding` changes

  void Add(absl::StatusOr<daemon::llm::ModelReply> r) {
    agent::MutexLock l(&mu);
    replies.push_back(std::move(r));
  }
  void SetHold(bool on) {
    agent::MutexLock l(&mu);
    hold = on;
    cv.SignalAll();
  }
  // Waits (bounded) until a request is held; false on timeout.
  bool WaitHolding(absl::Duration timeout) {
    agent::MutexLock l(&mu);
    absl::Time deadline = absl::Now() + timeout;
    while (!holding && absl::Now() < deadline) cv.WaitWithTimeout(&mu, deadline - absl::Now());
    return holding;
  }
};

inline daemon::llm::ModelReply TextReply(std::string text) {
  daemon::llm::ModelReply r;
  r.content = std::move(text);
  r.finish_reason = "stop";
  return r;
}

inline daemon::llm::ModelReply CallsReply(
    std::vector<std::pair<std::string, std::string>> name_and_args, const std::string& id_prefix) {
  daemon::llm::ModelReply r;
  r.finish_reason = "tool_calls";
  int i = 0;
  for (auto& [name, args] : name_and_args) {
    daemon::llm::ToolCall c;
    c.id = id_prefix + std::to_string(i++);
    c.name = name;
    c.arguments = args;
    r.tool_calls.push_back(std::move(c));
  }
  return r;
}

class FakeModelClient : public daemon::llm::ModelClient {
 public:
  explicit FakeModelClient(std::shared_ptr<FakeScript> script) : script_(std::move(script)) {}

  absl::StatusOr<daemon::llm::ModelReply> Complete(const daemon::llm::ModelRequest& request,
                                                   daemon::llm::StreamSink* sink,
                                                   const std::atomic<bool>* cancelled) override {
    absl::StatusOr<daemon::llm::ModelReply> reply;
    {
      agent::MutexLock l(&script_->mu);
      if (script_->record_requests) {
        script_->requests.push_back(daemon::llm::RequestMessages(request));
      }
      script_->transport.push_back(
          {request.connect_timeout_ms, request.idle_timeout_ms, request.max_attempts});
      script_->holding = true;
      script_->cv.SignalAll();
      // The cancel flag changes without the mutex, so look at it every few ms; bounded so a
      // test that forgets to release fails instead of hanging.
      for (int i = 0; i < 3000 && script_->hold && !(cancelled != nullptr && *cancelled); ++i) {
        script_->cv.WaitWithTimeout(&script_->mu, absl::Milliseconds(10));
      }
      script_->holding = false;
      if (cancelled != nullptr && cancelled->load()) return absl::CancelledError("cancelled");
      if (script_->replies.empty()) return TextReply("(no more fake replies)");
      reply = std::move(script_->replies.front());
      script_->replies.pop_front();
    }
    if (reply.ok() && sink != nullptr && !reply->content.empty()) {
      // Two deltas, so tests can see streaming.
      size_t half = reply->content.size() / 2;
      sink->OnText(reply->content.substr(0, half));
      sink->OnText(reply->content.substr(half));
    }
    return reply;
  }

 private:
  std::shared_ptr<FakeScript> script_;
};

}  // namespace agent::testing
