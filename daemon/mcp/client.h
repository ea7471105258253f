// Client: one MCP session with one server over a Transport. Initialize negotiates the protocol
// version (we offer the newest revision we know and accept any of kProtocolVersions), then
// sends notifications/initialized. ListTools follows nextCursor pages; CallTool sends
// tools/call with a progress token, waits for the answer, a timeout or a cancel, and after a
// timeout or cancel sends notifications/cancelled and returns at once (a late answer is
// dropped). Requests from the server are answered (ping with {}, anything else with "method
// not found": we offer no sampling, roots or elicitation). When the connection ends, every
// waiting request returns with the reason at once: no caller can hang on a dead server. A
// malformed reply (json_rpc.h) to a waiting request ends that request at once (DataLoss).
//
// Thread-safety: all methods may be called from any thread, concurrently. Callbacks (progress,
// tools changed) run on the transport's reader thread without our lock held: they must return
// quickly and must not call back into this client's blocking methods.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/json.h"
#include "common/mutex.h"
#include "daemon/mcp/transport.h"

namespace agent::daemon::mcp {

// Newest first; the first is what we offer in initialize.
inline const std::vector<std::string> kProtocolVersions = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                           "2024-11-05"};

struct ToolInfo {
  std::string name;  // the server's name for it
  std::string description;
  Json input_schema;       // as the server sent it (an object)
  bool read_only = false;  // annotations.readOnlyHint
};

struct CallOptions {
  absl::Duration timeout = absl::Seconds(120);
  const std::atomic<bool>* cancelled = nullptr;  // polled every 50 ms
  // "progress/total message" of notifications/progress for this call.
  std::function<void(const Json& params)> on_progress;
};

class Client {
 public:
  explicit Client(std::unique_ptr<Transport> transport);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Starts the transport, then initialize + notifications/initialized. On error the
  // connection is closed.
  absl::Status Initialize(absl::Duration timeout);
  absl::StatusOr<std::vector<ToolInfo>> ListTools(absl::Duration timeout);
  // The result object of tools/call. Cancelled when `cancelled` turned true, DeadlineExceeded
  // after the timeout, Unavailable/DataLoss when the connection ended.
  absl::StatusOr<Json> CallTool(const std::string& name, const Json& arguments,
                                const CallOptions& options);

  // Called (on the reader thread) for notifications/tools/list_changed and when the
  // connection ends. Set before Initialize.
  void set_on_change(std::function<void()> f) { on_change_ = std::move(f); }

  // OK while connected; afterwards why it ended.
  absl::Status closed() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string protocol_version() const ABSL_LOCKS_EXCLUDED(mu_);
  bool tools_changed() const { return tools_changed_; }
  void clear_tools_changed() { tools_changed_ = false; }
  // Ends the connection (the transport's Close); waiting requests return Unavailable.
  void Close();

 private:
  struct Pending {
    bool done = false;
    absl::StatusOr<Json> result = Json();
    std::function<void(const Json&)> on_progress;
    absl::Time last_progress = absl::InfinitePast();
    int progress_count = 0;
  };
  absl::StatusOr<Json> Request(const std::string& method, Json params, absl::Duration timeout,
                               const std::atomic<bool>* cancelled,
                               std::function<void(const Json&)> on_progress);
  void OnMessage(Json message);
  void OnClosed(absl::Status why);
  void OnNotification(const std::string& method, const Json& params);
  void AbandonRequest(int64_t id, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);

  std::unique_ptr<Transport> transport_;
  std::function<void()> on_change_;
  std::atomic<bool> tools_changed_{false};
  mutable Mutex mu_;
  CondVar cv_;
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int64_t, std::shared_ptr<Pending>> pending_ ABSL_GUARDED_BY(mu_);
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::string protocol_version_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent::daemon::mcp
