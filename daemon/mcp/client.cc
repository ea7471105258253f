#include "daemon/mcp/client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "common/version.h"
#include "daemon/mcp/json_rpc.h"

namespace agent::daemon::mcp {
namespace {

// A copy of `s` that shares no reference-counted state with it. Why the connection ended is
// handed to callers on other threads; Debian's Abseil is not built for ThreadSanitizer, so the
// count of a shared Status is invisible to it and a copy that outlives the client is reported
// as a race. A fresh Status has nothing to share.
absl::Status Unshared(const absl::Status& s) {
  return s.ok() ? absl::OkStatus() : absl::Status(s.code(), s.message());
}

// A cancel flag is looked at this often while a request waits.
constexpr absl::Duration kCancelPoll = absl::Milliseconds(50);
// Progress notifications of one call forwarded at most this often, and this many in all: a
// server that floods them cannot flood the session's event log.
constexpr absl::Duration kProgressInterval = absl::Milliseconds(100);
constexpr int kMaxProgressPerCall = 500;

}  // namespace

Client::Client(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {}

Client::~Client() { Close(); }

void Client::Close() {
  if (transport_) transport_->Close();
  OnClosed(absl::UnavailableError("closed by the daemon"));
}

absl::Status Client::closed() const {
  MutexLock l(&mu_);
  return Unshared(closed_);
}

std::string Client::protocol_version() const {
  MutexLock l(&mu_);
  return protocol_version_;
}

absl::Status Client::Initialize(absl::Duration timeout) {
  {
    MutexLock l(&mu_);
    if (started_) return absl::FailedPreconditionError("already initialized");
    started_ = true;
  }
  absl::Status s = transport_->Start(
      {[this](Json m) { OnMessage(std::move(m)); }, [this](absl::Status why) { OnClosed(why); }});
  if (!s.ok()) {
    OnClosed(s);
    return s;
  }
  Json params = {{"protocolVersion", kProtocolVersions.front()},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", "agentd"}, {"version", kVersion}}}};
  absl::StatusOr<Json> result = Request("initialize", std::move(params), timeout, nullptr, {});
  if (!result.ok()) {
    Close();
    return absl::Status(result.status().code(),
                        absl::StrCat("initialize: ", result.status().message()));
  }
  const std::string version = GetString(*result, "protocolVersion");
  if (std::find(kProtocolVersions.begin(), kProtocolVersions.end(), version) ==
      kProtocolVersions.end()) {
    Close();
    return absl::FailedPreconditionError(
        absl::StrCat("the server speaks MCP protocol version \"", version,
                     "\", which agentd does not know (it knows ", kProtocolVersions.back(), " to ",
                     kProtocolVersions.front(), ")"));
  }
  {
    MutexLock l(&mu_);
    protocol_version_ = version;
  }
  if (absl::Status s = transport_->Send(MakeNotification("notifications/initialized", nullptr));
      !s.ok()) {
    absl::Status why = closed();
    return why.ok() ? s : why;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ToolInfo>> Client::ListTools(absl::Duration timeout) {
  std::vector<ToolInfo> tools;
  std::string cursor;
  // Durations on the clock that never steps: a wall clock set back must not stretch them.
  const absl::Time deadline = MonotonicNow() + timeout;
  for (int page = 0; page < 100; ++page) {  // bounded: a server that pages forever stops here
    Json params = Json::object();
    if (!cursor.empty()) params["cursor"] = cursor;
    absl::StatusOr<Json> result =
        Request("tools/list", std::move(params), deadline - MonotonicNow(), nullptr, {});
    if (!result.ok()) return result.status();
    auto list = result->find("tools");
    if (list == result->end() || !list->is_array()) {
      return absl::DataLossError("tools/list: the answer has no \"tools\" array");
    }
    for (const Json& t : *list) {
      ToolInfo info;
      info.name = GetString(t, "name");
      if (info.name.empty()) continue;
      info.description = GetString(t, "description");
      if (auto s = t.find("inputSchema"); s != t.end() && s->is_object()) info.input_schema = *s;
      if (auto a = t.find("annotations"); a != t.end() && a->is_object()) {
        info.read_only = GetBool(*a, "readOnlyHint");
      }
      tools.push_back(std::move(info));
    }
    cursor = GetString(*result, "nextCursor");
    if (cursor.empty()) return tools;
  }
  return absl::DataLossError("tools/list: more than 100 pages");
}

absl::StatusOr<Json> Client::CallTool(const std::string& name, const Json& arguments,
                                      const CallOptions& options) {
  Json params = {{"name", name}, {"arguments", arguments.is_object() ? arguments : Json::object()}};
  return Request("tools/call", std::move(params), options.timeout, options.cancelled,
                 options.on_progress);
}

absl::StatusOr<Json> Client::Request(const std::string& method, Json params, absl::Duration timeout,
                                     const std::atomic<bool>* cancelled,
                                     std::function<void(const Json&)> on_progress) {
  auto pending = std::make_shared<Pending>();
  pending->on_progress = std::move(on_progress);
  int64_t id;
  {
    MutexLock l(&mu_);
    if (!closed_.ok()) return Unshared(closed_);
    id = next_id_++;
    pending_[id] = pending;
  }
  if (pending->on_progress && params.is_object()) params["_meta"] = {{"progressToken", id}};
  if (absl::Status s = transport_->Send(MakeRequest(id, method, std::move(params))); !s.ok()) {
    MutexLock l(&mu_);
    pending_.erase(id);
    return closed_.ok() ? s : Unshared(closed_);  // why the connection ended says more
  }
  const absl::Time deadline = MonotonicNow() + timeout;
  MutexLock l(&mu_);
  while (!pending->done) {
    if (cancelled != nullptr && cancelled->load()) {
      mu_.Unlock();
      AbandonRequest(id, "cancelled by the user");
      mu_.Lock();
      return absl::CancelledError("cancelled by the user");
    }
    const absl::Duration left = deadline - MonotonicNow();
    if (left <= absl::ZeroDuration()) {
      mu_.Unlock();
      AbandonRequest(id, "timed out");
      mu_.Lock();
      return absl::DeadlineExceededError(
          absl::StrCat(method, ": no answer within ", absl::FormatDuration(timeout)));
    }
    cv_.WaitWithTimeout(&mu_, std::min(left, kCancelPoll));
  }
  return pending->result;
}

void Client::AbandonRequest(int64_t id, const std::string& reason) {
  {
    MutexLock l(&mu_);
    pending_.erase(id);
  }
  (void)transport_->Send(
      MakeNotification("notifications/cancelled", {{"requestId", id}, {"reason", reason}}));
}

void Client::OnMessage(Json message) {
  Incoming in = Classify(message);
  switch (in.kind) {
    case Incoming::Kind::kResponse: {
      std::optional<int64_t> id = OwnRequestId(in.id);
      if (!id.has_value()) return;
      MutexLock l(&mu_);
      auto it = pending_.find(*id);
      if (it == pending_.end()) return;  // abandoned (timed out or cancelled) or never ours
      if (in.malformed.has_value()) {
        it->second->result =
            absl::DataLossError(absl::StrCat("the server's reply is malformed: ", *in.malformed));
      } else if (in.error.has_value()) {
        it->second->result = absl::UnknownError(*in.error);
      } else {
        it->second->result = std::move(in.result);
      }
      it->second->done = true;
      pending_.erase(it);
      cv_.SignalAll();
      return;
    }
    case Incoming::Kind::kRequest:
      // ping is the only request a client must answer; we declared no other capability.
      (void)transport_->Send(in.method == "ping"
                                 ? MakeResult(in.id, Json::object())
                                 : MakeError(in.id, kMethodNotFound,
                                             absl::StrCat("agentd does not offer ", in.method)));
      return;
    case Incoming::Kind::kNotification:
      OnNotification(in.method, in.params);
      return;
    case Incoming::Kind::kInvalid:
      return;  // neither a request nor an answer: nothing to do with it
  }
}

void Client::OnNotification(const std::string& method, const Json& params) {
  if (method == "notifications/tools/list_changed") {
    tools_changed_ = true;
    if (on_change_) on_change_();
    return;
  }
  if (method != "notifications/progress" || !params.is_object()) return;
  auto token = params.find("progressToken");
  if (token == params.end() || !token->is_number_integer()) return;
  std::function<void(const Json&)> forward;
  {
    MutexLock l(&mu_);
    auto it = pending_.find(token->get<int64_t>());
    if (it == pending_.end() || !it->second->on_progress) return;
    Pending& p = *it->second;
    const absl::Time now = MonotonicNow();
    if (p.progress_count >= kMaxProgressPerCall || now - p.last_progress < kProgressInterval) {
      return;
    }
    ++p.progress_count;
    p.last_progress = now;
    forward = p.on_progress;
  }
  forward(params);
}

void Client::OnClosed(absl::Status why) {
  if (why.ok()) why = absl::UnavailableError("the connection ended");
  bool first = false;
  {
    MutexLock l(&mu_);
    if (closed_.ok()) {
      closed_ = Unshared(why);
      first = true;
    }
    for (auto& [id, p] : pending_) {
      p->result = Unshared(closed_);
      p->done = true;
    }
    pending_.clear();
    cv_.SignalAll();
  }
  if (first && on_change_) on_change_();
}

}  // namespace agent::daemon::mcp
