#include "client/session_client.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/line_editor.h"
#include "client/renderer.h"
#include "common/config.h"
#include "common/grpc_status.h"
#include "common/protocol.h"
#include "google/protobuf/util/json_util.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

void Write(const std::string& s) {
  if (s.empty()) return;
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

std::string EventJson(const v1::Event& e) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(e, &out, o);
  return out;
}

v1::ModelConfig ModelFromEnv() {
  ModelSettings m = ModelSettingsFromEnv();
  v1::ModelConfig c;
  c.set_base_url(m.base_url);
  c.set_api_key(m.api_key);
  c.set_model(m.model);
  c.set_provider(m.provider);
  return c;
}

std::string Cwd() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

int ExitFor(v1::TurnOutcome o) {
  switch (o) {
    case v1::TURN_OUTCOME_DONE:
      return kExitDone;
    case v1::TURN_OUTCOME_CANCELLED:
      return kExitCancelled;
    case v1::TURN_OUTCOME_MAX_STEPS:
      return kExitMaxSteps;
    default:
      return kExitError;
  }
}

void PrintError(const std::string& what, const grpc::Status& s) {
  std::fprintf(stderr, "agent: %s%s\n", what.c_str(), s.error_message().c_str());
}

// The attach stream, read on a thread of its own into a queue the caller drains.
class EventStream {
 public:
  EventStream(v1::AgentDaemon::Stub& stub, const v1::AttachRequest& req) {
    reader_ = stub.Attach(&ctx_, req);
    thread_ = std::thread([this] {
      v1::Event e;
      while (reader_->Read(&e)) {
        absl::MutexLock l(&mu_);
        queue_.push_back(e);
      }
      grpc::Status s = reader_->Finish();
      absl::MutexLock l(&mu_);
      status_ = s;
      ended_ = true;
    });
  }
  ~EventStream() {
    ctx_.TryCancel();
    thread_.join();
  }

  // The next event; nullopt when the stream ended (status() says why) or `timeout` passed.
  std::optional<v1::Event> Next(absl::Duration timeout = absl::InfiniteDuration()) {
    absl::MutexLock l(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || ended_; };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    if (queue_.empty()) return std::nullopt;
    v1::Event e = std::move(queue_.front());
    queue_.pop_front();
    return e;
  }
  bool ended() {
    absl::MutexLock l(&mu_);
    return ended_ && queue_.empty();
  }
  grpc::Status status() {
    absl::MutexLock l(&mu_);
    return status_;
  }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<v1::Event>> reader_;
  absl::Mutex mu_;
  std::deque<v1::Event> queue_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// SIGINT as a counter the event loops look at, instead of a signal that kills the client.
std::atomic<int> g_interrupts{0};
void OnSigint(int) { g_interrupts.fetch_add(1); }

void InstallSigint() {
  struct sigaction sa {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

v1::AttachRequest AttachFor(const std::string& id, const ClientOptions& o) {
  v1::AttachRequest req;
  req.set_session_id(id);
  req.set_client_name(o.client_name);
  req.set_read_only(o.read_only);
  req.set_protocol_version(kProtocolVersion);
  return req;
}

// Shows events until the turn started by our prompt ends; answers approvals when asked.
// Returns the exit code for that turn.
int FollowTurn(v1::AgentDaemon::Stub& stub, EventStream& events, Renderer& r,
               const ClientOptions& o, const std::string& session_id, bool interactive) {
  int cancels_sent = 0;
  for (;;) {
    if (g_interrupts.load() > cancels_sent) {
      cancels_sent = g_interrupts.load();
      if (cancels_sent >= 2 && !interactive) return kExitCancelled;
      grpc::ClientContext ctx;
      v1::CancelRequest req;
      req.set_session_id(session_id);
      req.set_client_name(o.client_name);
      v1::CancelResponse resp;
      (void)stub.Cancel(&ctx, req, &resp);
    }
    std::optional<v1::Event> e = events.Next(absl::Milliseconds(50));
    if (!e.has_value()) {
      if (events.ended()) {
        grpc::Status s = events.status();
        std::fprintf(stderr, "\nagent: lost the daemon: %s\n", s.error_message().c_str());
        return kExitError;
      }
      continue;
    }
    if (o.json) {
      Write(EventJson(*e) + "\n");
    } else {
      Write(r.Render(*e));
    }
    if (e->has_approval_requested() && !o.read_only) {
      const v1::PendingApproval& a = e->approval_requested().approval();
      v1::ApproveRequest req;
      req.set_session_id(session_id);
      req.set_call_id(a.call_id());
      req.set_client_name(o.client_name);
      if (interactive && !o.json) {
        Write(r.ApprovalPrompt(a));
        std::string rules;
        for (const std::string& rule : a.proposed_rules()) rules += (rules.empty() ? "" : ", ") + rule;
        std::optional<char> answer = AskApproval(rules);
        if (!answer.has_value()) continue;  // answered elsewhere or no terminal: leave it
        req.set_decision(*answer == 'y'   ? v1::DECISION_ALLOW_ONCE
                         : *answer == 'a' ? v1::DECISION_ALLOW_ALWAYS
                                          : v1::DECISION_DENY);
      } else {
        req.set_decision(o.yes ? v1::DECISION_ALLOW_ONCE : v1::DECISION_DENY);
        if (!o.yes) req.set_reason("not approved: the user ran agent without --yes");
      }
      grpc::ClientContext ctx;
      v1::ApproveResponse resp;
      (void)stub.Approve(&ctx, req, &resp);  // FAILED_PRECONDITION: another client was first
    }
    if (e->has_turn_ended()) {
      if (e->turn_ended().outcome() == v1::TURN_OUTCOME_ERROR && !interactive) {
        // The renderer showed it; scripts read the one-line reason on stderr.
        std::fprintf(stderr, "agent: %s\n", e->turn_ended().error().c_str());
      }
      return ExitFor(e->turn_ended().outcome());
    }
  }
}

absl::StatusOr<v1::Event> FirstEvent(EventStream& events) {
  std::optional<v1::Event> first = events.Next(absl::Seconds(30));
  if (!first.has_value()) {
    grpc::Status s = events.status();
    return absl::UnavailableError(s.ok() ? "no answer from agentd" : s.error_message());
  }
  return *first;
}

bool SendPrompt(v1::AgentDaemon::Stub& stub, const ClientOptions& o, const std::string& id,
                const std::string& text) {
  grpc::ClientContext ctx;
  v1::SendPromptRequest req;
  req.set_session_id(id);
  req.set_text(text);
  req.set_client_name(o.client_name);
  *req.mutable_model() = ModelFromEnv();
  v1::SendPromptResponse resp;
  grpc::Status s = stub.SendPrompt(&ctx, req, &resp);
  if (!s.ok()) {
    PrintError("", s);
    return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<v1::Session> CreateSessionHere(v1::AgentDaemon::Stub& stub,
                                              const ClientOptions& o, v1::PolicyMode mode) {
  grpc::ClientContext ctx;
  v1::CreateSessionRequest req;
  req.set_workdir(Cwd());
  *req.mutable_model() = ModelFromEnv();
  req.set_policy(mode);
  v1::Session s;
  grpc::Status st = stub.CreateSession(&ctx, req, &s);
  if (!st.ok()) return FromGrpcStatus(st);
  return s;
}

absl::StatusOr<std::string> NewestSessionHere(v1::AgentDaemon::Stub& stub) {
  grpc::ClientContext ctx;
  v1::ListSessionsRequest req;
  req.set_workdir(Cwd());
  v1::ListSessionsResponse resp;
  grpc::Status st = stub.ListSessions(&ctx, req, &resp);
  if (!st.ok()) return FromGrpcStatus(st);
  for (const v1::Session& s : resp.sessions()) {
    if (s.load_error().empty()) return s.id();
  }
  return absl::NotFoundError("no session in this directory yet");
}

int RunOneShot(v1::AgentDaemon::Stub& stub, const ClientOptions& o, const std::string& prompt) {
  // Without --yes and without a terminal to ask on, gated tools that no rule allows are
  // denied rather than left waiting for an answer nobody can give.
  v1::PolicyMode mode = o.yes          ? v1::POLICY_MODE_YES
                        : isatty(0) != 0 ? v1::POLICY_MODE_ASK
                                         : v1::POLICY_MODE_DENY_UNRULED;
  std::string id = o.session_id;
  if (id.empty()) {
    auto s = CreateSessionHere(stub, o, mode);
    if (!s.ok()) {
      std::fprintf(stderr, "agent: %s\n", std::string(s.status().message()).c_str());
      return kExitError;
    }
    id = s->id();
  } else {
    grpc::ClientContext ctx;
    v1::SetPolicyRequest req;
    req.set_session_id(id);
    req.set_mode(mode);
    v1::SetPolicyResponse resp;
    grpc::Status st = stub.SetPolicy(&ctx, req, &resp);
    if (!st.ok()) {
      PrintError("", st);
      return kExitError;
    }
  }
  InstallSigint();
  EventStream events(stub, AttachFor(id, o));
  auto first = FirstEvent(events);
  if (!first.ok()) {
    std::fprintf(stderr, "agent: %s\n", std::string(first.status().message()).c_str());
    return kExitError;
  }
  if (o.json) Write(EventJson(*first) + "\n");
  if (!SendPrompt(stub, o, id, prompt)) return kExitError;
  Renderer r(RenderOptions{o.color});
  return FollowTurn(stub, events, r, o, id, /*interactive=*/mode == v1::POLICY_MODE_ASK && !o.json);
}

int RunInteractive(v1::AgentDaemon::Stub& stub, const ClientOptions& o) {
  std::string id = o.session_id;
  if (id.empty()) {
    auto s = CreateSessionHere(stub, o, o.yes ? v1::POLICY_MODE_YES : v1::POLICY_MODE_ASK);
    if (!s.ok()) {
      std::fprintf(stderr, "agent: %s\n", std::string(s.status().message()).c_str());
      return kExitError;
    }
    id = s->id();
  }
  InstallSigint();
  EventStream events(stub, AttachFor(id, o));
  auto first = FirstEvent(events);
  if (!first.ok()) {
    std::fprintf(stderr, "agent: %s\n", std::string(first.status().message()).c_str());
    return kExitError;
  }
  Renderer r(RenderOptions{o.color});
  Write(r.Render(*first));
  std::string short_id = first->snapshot().session().id().substr(0, 8);
  Write(absl::StrCat("session ", short_id, " in ", first->snapshot().session().workdir(),
                     " — Ctrl-D detaches, Ctrl-C cancels a turn, /help for commands\n"));
  // A turn already running (attached mid-turn): follow it to its end first.
  if (first->snapshot().state() != v1::SESSION_STATE_IDLE) {
    FollowTurn(stub, events, r, o, id, true);
  }
  LineEditor editor(Cwd());
  for (;;) {
    // Show what arrived while we were not reading (another client's turn).
    while (auto e = events.Next(absl::ZeroDuration())) Write(r.Render(*e));
    g_interrupts = 0;
    std::optional<std::string> line = editor.ReadLine("› ");
    if (!line.has_value()) {
      if (g_interrupts.load() > 0) continue;  // Ctrl-C at the prompt: a new line, nothing else
      Write(absl::StrCat("\ndetached; the session goes on. Come back with: agent attach ",
                         short_id, "\n"));
      return kExitDone;
    }
    if (line->empty()) continue;
    if (*line == "/detach" || *line == "/quit" || *line == "/exit") {
      Write(absl::StrCat("detached. Come back with: agent attach ", short_id, "\n"));
      return kExitDone;
    }
    if (*line == "/help") {
      Write("/compact  summarise older messages\n/detach   leave; the session goes on\n"
            "/model M  use model M from now on\n/allow R  record an allow rule, e.g. bash(make *)\n");
      continue;
    }
    if (*line == "/compact") {
      grpc::ClientContext ctx;
      v1::CompactRequest req;
      req.set_session_id(id);
      v1::CompactResponse resp;
      grpc::Status s = stub.Compact(&ctx, req, &resp);
      if (!s.ok()) PrintError("", s);
      continue;
    }
    if (line->rfind("/model ", 0) == 0 || line->rfind("/allow ", 0) == 0) {
      grpc::ClientContext ctx;
      v1::SetPolicyRequest req;
      req.set_session_id(id);
      if ((*line)[1] == 'm') {
        req.set_model(line->substr(7));
      } else {
        req.add_add_allow(line->substr(7));
      }
      v1::SetPolicyResponse resp;
      grpc::Status s = stub.SetPolicy(&ctx, req, &resp);
      if (!s.ok()) PrintError("", s);
      continue;
    }
    editor.AddHistory(*line);
    if (!SendPrompt(stub, o, id, *line)) continue;
    g_interrupts = 0;
    FollowTurn(stub, events, r, o, id, true);
  }
}

}  // namespace agent::client
