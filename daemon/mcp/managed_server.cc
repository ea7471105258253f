#include "daemon/mcp/managed_server.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"

namespace agent::daemon::mcp {
namespace {

// A server that ran this long before it died starts again after the first backoff.
constexpr absl::Duration kHealthyRun = absl::Seconds(60);
constexpr absl::Duration kPoll = absl::Milliseconds(50);

}  // namespace

ManagedServer::ManagedServer(ServerDef def, TransportFactory make_transport, Backoff backoff)
    : def_(std::move(def)), make_transport_(std::move(make_transport)), backoff_(backoff) {}

ManagedServer::~ManagedServer() { Stop(); }

void ManagedServer::Want() {
  MutexLock l(&mu_);
  if (thread_.joinable() || stopping_) return;
  state_ = "starting";
  thread_ = std::thread([this] { Supervise(); });
}

void ManagedServer::AwaitSettled(absl::Time deadline, const std::atomic<bool>* cancelled) {
  MutexLock l(&mu_);
  // Only the first start is waited for: a restart that hangs must not hold up every step.
  while (state_ == "starting" && !settled_once_ && absl::Now() < deadline &&
         (cancelled == nullptr || !cancelled->load())) {
    cv_.WaitWithTimeout(&mu_, std::min(kPoll, deadline - absl::Now()));
  }
}

ManagedServer::Snapshot ManagedServer::snapshot() const {
  MutexLock l(&mu_);
  return {state_, last_error_, tools_};
}

absl::StatusOr<Json> ManagedServer::Call(const std::string& tool, const Json& arguments,
                                         const CallOptions& options) {
  std::shared_ptr<Client> client;
  {
    MutexLock l(&mu_);
    if (!running_ || client_ == nullptr) {
      return absl::UnavailableError(absl::StrCat(
          "the MCP server ", def_.name, " is not running",
          last_error_.empty() ? std::string(" (") + state_ + ")" : ": " + last_error_));
    }
    client = client_;
  }
  return client->CallTool(tool, arguments, options);
}

void ManagedServer::Stop() {
  std::shared_ptr<Client> client;
  std::thread thread;
  {
    MutexLock l(&mu_);
    stopping_ = true;
    client = client_;
    thread = std::move(thread_);
    cv_.SignalAll();
  }
  if (client) client->Close();  // unblocks an initialize or tools/list in progress
  if (thread.joinable()) thread.join();
  MutexLock l(&mu_);
  client_.reset();
  running_ = false;
  state_ = "stopped";
}

void ManagedServer::Fail(const std::string& error) {
  MutexLock l(&mu_);
  state_ = "failed";
  settled_once_ = true;
  last_error_ = error;
  running_ = false;
  // The tools stay listed while it restarts: the model's tool list does not flicker, and a
  // call meanwhile is answered with the reason.
  cv_.SignalAll();
}

bool ManagedServer::Pause(absl::Duration d) {
  const absl::Time until = MonotonicNow() + d;
  MutexLock l(&mu_);
  while (!stopping_ && MonotonicNow() < until) cv_.WaitWithTimeout(&mu_, until - MonotonicNow());
  return !stopping_;
}

void ManagedServer::Supervise() {
  absl::Duration backoff = backoff_.first;
  for (;;) {
    absl::Time started = absl::InfiniteFuture();
    if (!RunOnce(&started)) return;
    if (MonotonicNow() - started > kHealthyRun) backoff = backoff_.first;
    if (!Pause(backoff)) return;
    backoff = std::min(backoff * 2, backoff_.max);
    MutexLock l(&mu_);
    if (stopping_) return;
    state_ = "starting";
  }
}

bool ManagedServer::RunOnce(absl::Time* started) {
  absl::StatusOr<std::unique_ptr<Transport>> transport = make_transport_(def_);
  if (!transport.ok()) {
    Fail(std::string(transport.status().message()));
    return true;
  }
  auto client = std::make_shared<Client>(std::move(*transport));
  client->set_on_change([this] {
    MutexLock l(&mu_);
    wake_ = true;
    cv_.SignalAll();
  });
  {
    MutexLock l(&mu_);
    if (stopping_) return false;
    client_ = client;
  }
  const absl::Duration startup = absl::Milliseconds(def_.startup_timeout_ms);
  absl::Status s = client->Initialize(startup);
  absl::StatusOr<std::vector<ToolInfo>> tools =
      s.ok() ? client->ListTools(startup) : absl::StatusOr<std::vector<ToolInfo>>(s);
  if (!tools.ok()) {
    client->Close();
    Fail(std::string(tools.status().message()));
    MutexLock l(&mu_);
    client_.reset();
    return !stopping_;
  }
  *started = MonotonicNow();
  {
    MutexLock l(&mu_);
    state_ = "running";
    settled_once_ = true;
    last_error_.clear();
    tools_ = std::move(*tools);
    running_ = true;
    cv_.SignalAll();
  }
  for (;;) {
    {
      MutexLock l(&mu_);
      while (!wake_ && !stopping_) cv_.Wait(&mu_);
      wake_ = false;
      if (stopping_) return false;
    }
    if (absl::Status closed = client->closed(); !closed.ok()) {
      Fail(absl::StrCat("stopped: ", closed.message()));
      break;
    }
    if (!client->tools_changed()) continue;
    client->clear_tools_changed();
    absl::StatusOr<std::vector<ToolInfo>> again = client->ListTools(startup);
    MutexLock l(&mu_);
    if (again.ok()) {
      tools_ = std::move(*again);
    } else {
      last_error_ = absl::StrCat("tools/list after a change: ", again.status().message());
    }
  }
  client->Close();
  MutexLock l(&mu_);
  client_.reset();
  return !stopping_;
}

}  // namespace agent::daemon::mcp
