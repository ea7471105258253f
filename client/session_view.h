// SessionView: one attached session on this terminal, driven by a single poll loop over the
// terminal, the event mailbox and the signal pipe (so a key reader waiting for y/n/a also
// wakes up when another client answers). It renders events, forwards prompts, approvals
// and cancels, and decides nothing about agent behaviour.
//
// States of the loop (interactive):
//   editing    the line editor is drawn under the live lines; keys go to libedit. A turn
//              may be running: a line typed then is sent at once (the daemon queues it).
//   approving  an approval waits and this client may answer: the question replaces the
//              editor (whose text is kept); keys y / n / a answer, Ctrl-C cancels the turn.
//              ApprovalResolved, from us or from anyone, ends it.
//   watching   read-only observer: no editor; Ctrl-D, Ctrl-C or q leave.
// One-shot runs the same loop without an editor and returns when its own turn ends.
//
// Keys: Ctrl-C cancels a running turn (Cancel RPC) and stays; at an empty idle prompt it does
// nothing but a hint, and a second one within a second leaves. Ctrl-D at an empty prompt
// detaches. Leaving never stops the session: it goes on in the daemon.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "agent/v1/agent.grpc.pb.h"
#include "client/connection.h"
#include "client/event_stream.h"
#include "client/line_editor.h"
#include "client/renderer.h"
#include "client/session_client.h"
#include "client/slash_commands.h"
#include "client/terminal_text.h"
#include "client/tty.h"

namespace agent::client {

class SessionView {
 public:
  SessionView(const Connection& daemon, const ClientOptions& options);
  ~SessionView();
  SessionView(const SessionView&) = delete;
  SessionView& operator=(const SessionView&) = delete;

  // Sends `prompt` to `session_id`, follows that turn and returns its exit code. With
  // `ask`, approvals are asked on the terminal; otherwise answered by --yes or denied.
  int OneShot(const std::string& session_id, const std::string& prompt, bool ask);
  // The interactive loop until the user detaches; returns the exit code.
  int Interactive(const std::string& session_id);

 private:
  // Attaches (again) to `id`: a new stream whose first event is the snapshot.
  void AttachTo(const std::string& id, bool show_history);
  bool WaitForSnapshot();
  int Loop();
  void HandleItem(Mailbox::Item& item);
  void HandleEvent(const agent::v1::Event& e);
  void HandleInput(const std::string& bytes);
  void HandleSignal(int sig);
  void HandleLine(const std::string& line);
  void HandleCommand(const SlashCommand& c);
  void Answer(char key);
  void CancelTurn();
  bool SendPrompt(const std::string& text);
  void Leave(const std::string& why);

  // Committed text to write at the next Paint.
  void Emit(const std::string& text) { output_ += text; }
  // Writes committed text and redraws the live area (and the editor) in one write.
  void Paint(bool force = false);
  void WriteOut(const std::string& s);
  std::string HeaderLine() const;
  void WarnIfWide();
  StatusInfo Status() const;
  bool Asking() const;
  bool EditorShown() const;
  int PollTimeoutMs() const;

  agent::v1::AgentDaemon::Stub& stub_;
  grpc::ChannelInterface& channel_;
  ClientOptions o_;
  bool interactive_ = false;
  bool live_ = false;  // stdout is a terminal and not --json: live area, spinner
  bool ask_ = false;   // approvals are asked here
  Mailbox mailbox_;
  std::unique_ptr<EventStream> stream_;
  int stream_id_ = 0;
  std::unique_ptr<Renderer> renderer_;
  RenderState screen_;  // what the events built up; changed only by renderer_->Render
  std::unique_ptr<LineEditor> editor_;
  LiveArea live_area_;
  std::vector<std::string> last_lines_;
  std::string output_;

  std::string session_id_;
  std::string workdir_;
  std::string model_;
  std::vector<std::string> clients_;
  int64_t prompt_tokens_ = -1;
  int64_t completion_tokens_ = 0;
  bool show_history_ = true;
  bool got_snapshot_ = false;
  bool switched_ = false;  // past the first session's snapshot

  // One-shot: our prompt and whether its turn has started.
  std::string own_prompt_;
  bool own_turn_started_ = false;
  int turns_to_skip_ = 0;  // turns running or queued before ours when we attached
  int exit_code_ = 0;
  bool done_ = false;
  int interrupts_ = 0;
  // Interactive: prompts we sent and echoed, not yet seen back as UserMessage.
  struct Echoed {
    std::string text;
    bool queued;  // sent while a turn ran: said again, dimmed, when its turn starts
  };
  std::deque<Echoed> echoed_;
  std::string answered_call_;  // the approval we answered (its Resolved is on the way)
  absl::Time last_interrupt_ = absl::InfinitePast();
  absl::Time hint_until_ = absl::InfinitePast();
  std::string hint_;
  // stdin is not a terminal: lines are read as prompts, the loop ends after the last turn.
  bool piped_input_ = false;
  std::string piped_buffer_;
  bool input_ended_ = false;
  int turns_waiting_ = 0;
  std::unique_ptr<CbreakMode> cbreak_;
  std::vector<std::thread> workers_;
};

}  // namespace agent::client
