// ManagedServer: one MCP server process (or HTTP endpoint) of one definition, shared by every
// session that sees that definition. A supervisor thread starts it when first wanted
// (initialize, then tools/list), keeps its tool list current on tools/list_changed, and
// restarts it after a crash or a failed start with exponential backoff (reset once it ran for
// a minute). A server that never started has no tools; one that crashed keeps its last tool
// list while it restarts. A call to a server that is not running answers at once with the
// reason. Stop ends the process and the thread.
//
// States: "stopped" (never wanted), "starting", "running", "failed" (last_error says why;
// a restart is pending).
//
// Thread-safety: all methods are thread-safe. Calls run on the caller's thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/json.h"
#include "common/mutex.h"
#include "daemon/mcp/client.h"
#include "daemon/mcp/server_config.h"
#include "daemon/mcp/transport.h"

namespace agent::daemon::mcp {

using TransportFactory =
    std::function<absl::StatusOr<std::unique_ptr<Transport>>(const ServerDef& def)>;

struct Backoff {
  absl::Duration first = absl::Seconds(1);
  absl::Duration max = absl::Seconds(60);
};

class ManagedServer {
 public:
  ManagedServer(ServerDef def, TransportFactory make_transport, Backoff backoff);
  ~ManagedServer();
  ManagedServer(const ManagedServer&) = delete;
  ManagedServer& operator=(const ManagedServer&) = delete;

  const ServerDef& def() const { return def_; }

  // Starts the supervisor unless it runs.
  void Want() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits while the server starts for the first time, until `deadline` or `cancelled`.
  void AwaitSettled(absl::Time deadline, const std::atomic<bool>* cancelled)
      ABSL_LOCKS_EXCLUDED(mu_);

  struct Snapshot {
    std::string state;
    std::string last_error;
    std::vector<ToolInfo> tools;
  };
  Snapshot snapshot() const ABSL_LOCKS_EXCLUDED(mu_);

  // tools/call on the running server; Unavailable naming the reason when it is not running.
  absl::StatusOr<Json> Call(const std::string& tool, const Json& arguments,
                            const CallOptions& options) ABSL_LOCKS_EXCLUDED(mu_);

  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Supervise();
  // One life of the server: start, serve until it dies or Stop; false when stopping.
  bool RunOnce(absl::Time* started) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits for `d` or Stop; false when stopping.
  bool Pause(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  void Fail(const std::string& error) ABSL_LOCKS_EXCLUDED(mu_);

  const ServerDef def_;
  const TransportFactory make_transport_;
  const Backoff backoff_;
  mutable Mutex mu_;
  CondVar cv_;
  std::string state_ ABSL_GUARDED_BY(mu_) = "stopped";
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  bool settled_once_ ABSL_GUARDED_BY(mu_) = false;  // it ran or failed at least once
  std::vector<ToolInfo> tools_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Client> client_ ABSL_GUARDED_BY(mu_);  // set while starting and running
  bool running_ ABSL_GUARDED_BY(mu_) = false;            // set while `client_` serves calls
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon::mcp
