// One daemon session as an ACP editor sees it: attached like a terminal (its own Attach
// stream into a Mailbox), its events sent as session/update notifications, its approvals
// asked with session/request_permission, and the editor's session/prompt requests answered
// with the stop reason when their turn ends.
//
// Prompts and turns: the daemon queues prompts from every client, so each prompt this
// connection sent waits in `prompts_` (oldest first) until the UserMessage of its turn names
// this client (it started), then until that turn's TurnEnded (it is answered). Turns other
// clients start stream to the editor too but answer nothing. A prompt sent while a turn of
// this connection runs steers it (the model reads it at its next step) and is answered when
// that turn ends, with its stop reason; should the turn end before its next step, the daemon
// runs the text as the next prompt, whose turn then answers nothing here.
//
// Approvals: each ApprovalRequested (or a snapshot waiting on one) becomes one permission
// request; the first answer from anyone wins (the daemon decides). When another client
// answered first, the editor's request is withdrawn with $/cancel_request and the tool call's
// update shows the outcome; a late answer from the editor is dropped.
//
// Unsaved text: when the editor offers fs/read_text_file, the session is attached as serving
// file text; each FileTextRequested (the daemon's read_file) becomes one fs/read_text_file
// request, and its answer (text, or an error: read the disk) goes back with ProvideFileText.
//
// Used on the one thread of the ACP loop (acp_loop.h); not thread-safe.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "client/acp/json_rpc.h"
#include "client/acp/prompt_content.h"
#include "client/acp/session_updates.h"
#include "client/commands/session_calls.h"
#include "client/link/event_stream.h"

namespace agent::client::acp {

// The longest a daemon call of the ACP loop may take: the loop is the editor's only thread,
// so a daemon that stopped answering must not hang it.
inline constexpr std::chrono::seconds kCallDeadline{30};

// `ctx` with kCallDeadline set.
inline void SetCallDeadline(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
}

// How a session talks to the editor.
struct EditorLink {
  std::function<void(const std::string& line)> send;  // one message, already framed
  // Sends a request to the editor; returns its id (the answer comes to OnEditorAnswer).
  std::function<int64_t(const std::string& method, Json params)> request;
  // The editor offered fs/read_text_file: the daemon's read_file asks it for unsaved text.
  bool reads_files = false;
};

class AcpSession {
 public:
  // `o`: this connection's options (client name, model settings); `cwd`: the editor's.
  AcpSession(const Connection& daemon, const ClientOptions& o, std::string id, std::string cwd,
             EditorLink editor);
  ~AcpSession();
  AcpSession(const AcpSession&) = delete;
  AcpSession& operator=(const AcpSession&) = delete;

  const std::string& id() const { return id_; }
  // Readable when events wait; the loop polls it and calls Drain.
  int fd() const { return mailbox_.fd(); }
  // False once the stream ended (session removed, daemon gone): prompts are refused.
  bool live() const { return live_; }

  // Attaches. With `load_id` set (session/load) the history is replayed first and then
  // `load_result` answers that request; a new session's snapshot replays nothing.
  void Attach(std::optional<Json> load_id, Json load_result);
  // Handles what arrived.
  void Drain();
  // Sends a prompt; request `id` is answered when its turn ends. An error when the daemon
  // refused it at once (the request is then the caller's to answer).
  absl::Status Prompt(const Json& id, const PromptText& p);
  // session/cancel: ends the running turn, as Ctrl-C in a terminal.
  void Cancel();
  // The editor's answer to our request `request_id` (a permission, or a file's text).
  void OnEditorAnswer(int64_t request_id, const Message& answer);

 private:
  struct PendingPrompt {
    Json id;
    bool started = false;
    // Steered into the running turn of the prompt before it: answered when that turn ends.
    bool rides = false;
  };
  void OnEvent(const agent::v1::Event& e);
  void OnSnapshot(const agent::v1::Snapshot& s);
  void OnTurnEnded(const agent::v1::TurnEnded& t);
  void OnEnd(const grpc::Status& status);
  void Ask(const agent::v1::PendingApproval& a);
  void Withdraw(const std::string& call_id);
  void OnPermissionAnswer(const std::string& call_id, const Message& answer);
  // fs/read_text_file for the daemon's question, and the editor's answer passed back.
  void AskFileText(const agent::v1::FileTextRequested& q);
  void OnFileText(const std::string& daemon_request, const Message& answer);
  void Notify(Json update);

  const Connection& daemon_;
  const ClientOptions& o_;
  std::string id_;
  EditorLink editor_;
  UpdateMapper mapper_;
  Mailbox mailbox_;
  std::unique_ptr<EventStream> stream_;
  bool live_ = true;
  bool snapshot_seen_ = false;
  std::optional<Json> load_id_;
  Json load_result_;
  std::deque<PendingPrompt> prompts_;
  std::map<std::string, int64_t> asks_;         // call id -> open permission request
  std::map<int64_t, std::string> asked_calls_;  // its inverse
  // The options of the model's questions asked (call id -> options), to read an answer back.
  std::map<std::string, std::vector<std::string>> question_options_;
  std::map<int64_t, std::string> file_reads_;  // our fs request id -> the daemon's request
};

}  // namespace agent::client::acp
