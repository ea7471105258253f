// The agent side of ACP for one editor connection: sorts each line the editor sends and
// answers it (initialize, session/new, session/load, session/prompt, session/cancel,
// session/set_mode), routes the editor's answers to the permission requests, and owns the
// sessions this connection opened (acp_session.h). Every request gets exactly one answer:
// a result, or a JSON-RPC error with the protocol's code (bad input never ends the loop).
// Runs on the ACP loop's one thread (acp_loop.h); not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/acp/acp_session.h"
#include "client/acp/json_rpc.h"
#include "client/commands/session_calls.h"

namespace agent::client::acp {

class AcpAgent {
 public:
  // `send` writes one framed message to the editor.
  AcpAgent(const Connection& daemon, ClientOptions options,
           std::function<void(const std::string&)> send);
  ~AcpAgent();
  AcpAgent(const AcpAgent&) = delete;
  AcpAgent& operator=(const AcpAgent&) = delete;

  // One line read from the editor.
  void OnLine(const LineReader::Line& line);
  // The sessions to poll (their fd) and drain.
  std::vector<AcpSession*> Sessions();

 private:
  // A request's answer: a result, or an error whose absl code picks the JSON-RPC code
  // (InvalidArgument -32602, NotFound -32002, others -32603). nullopt: answered later.
  using Reply = absl::StatusOr<std::optional<Json>>;
  void OnRequest(const Message& m);
  void OnNotification(const Message& m);
  Reply Initialize(const Json& params);
  Reply NewSession(const Json& params);
  Reply LoadSession(const Json& id, const Json& params);
  Reply Prompt(const Json& id, const Json& params);
  Reply SetMode(const Json& params);
  absl::StatusOr<AcpSession*> Find(const Json& params);
  AcpSession& Open(const std::string& id, const std::string& cwd);
  void AnnounceCommands(const std::string& session_id, const std::string& workdir);
  int64_t Request(const std::string& session_id, const std::string& method, Json params);

  const Connection& daemon_;
  ClientOptions o_;
  std::function<void(const std::string&)> send_;
  bool reads_files_ = false;  // the editor offered fs/read_text_file
  int64_t next_request_ = 1;
  std::map<int64_t, std::string> requests_;  // our request id -> its session
  std::map<std::string, std::unique_ptr<AcpSession>> sessions_;
};

}  // namespace agent::client::acp
