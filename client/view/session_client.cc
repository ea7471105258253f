#include "client/view/session_client.h"

#include <unistd.h>

#include <cstdio>

#include "client/link/one_shot_runs.h"
#include "client/view/session_view.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// Applies the mode this client chose to a session it continues (`-c`, `-r ID`, `resume`,
// `attach`): a session that ran one-shot with --yes and is continued without a flag asks
// again. An observer (attach --read-only) drives nothing and changes nothing.
grpc::Status ApplyClientMode(v1::AgentDaemon::Stub& stub, const std::string& id,
                             v1::PolicyMode mode, const std::string& client_name) {
  grpc::ClientContext ctx;
  v1::SetPolicyRequest req;
  req.set_session_id(id);
  req.set_mode(mode);
  req.set_client_name(client_name);  // the mode change says who made it
  v1::SetPolicyResponse resp;
  return stub.SetPolicy(&ctx, req, &resp);
}

// The session to run in: a new one here, or o.session_id, given `mode` when `apply_mode`.
// Empty once the reason it cannot be had is on stderr.
std::string SessionToRun(v1::AgentDaemon::Stub& stub, const ClientOptions& o, v1::PolicyMode mode,
                         bool apply_mode) {
  if (o.session_id.empty()) {
    auto s = CreateSessionHere(stub, o, mode);
    if (!s.ok()) {
      std::fprintf(stderr, "agent: %s\n", std::string(s.status().message()).c_str());
      return "";
    }
    return s->id();
  }
  if (apply_mode) {
    if (grpc::Status st = ApplyClientMode(stub, o.session_id, mode, o.client_name); !st.ok()) {
      std::fprintf(stderr, "agent: %s\n", st.error_message().c_str());
      return "";
    }
  }
  return o.session_id;
}

}  // namespace

int RunOneShot(const Connection& daemon, const ClientOptions& o, const std::string& prompt) {
  v1::AgentDaemon::Stub& stub = *daemon.stub;
  // Without --yes and without a terminal to ask on, gated tools that no rule allows are
  // denied rather than left waiting for an answer nobody can give.
  v1::PolicyMode mode = ModeFromFlags(
      o.mode_flags(), isatty(0) != 0 ? v1::POLICY_MODE_ASK : v1::POLICY_MODE_DENY_UNRULED);
  const std::string id = SessionToRun(stub, o, mode, /*apply_mode=*/true);
  if (id.empty()) return kExitError;
  if (o.session_id.empty()) RememberOneShot(OneShotRunsPath(), id);  // `agent ls` leaves it out
  SessionView view(daemon, o);
  // Auto mode still asks about what the sandbox cannot hold (escalations, protected paths), and
  // edits mode about commands, when there is a terminal to ask on; without one those calls are
  // denied.
  const bool ask =
      mode == v1::POLICY_MODE_ASK ||
      ((mode == v1::POLICY_MODE_AUTO || mode == v1::POLICY_MODE_ACCEPT_EDITS) && isatty(0));
  return view.OneShot(id, prompt, /*ask=*/ask && !o.json);
}

int RunInteractive(const Connection& daemon, const ClientOptions& o) {
  v1::AgentDaemon::Stub& stub = *daemon.stub;
  const v1::PolicyMode mode = ModeFromFlags(o.mode_flags(), v1::POLICY_MODE_ASK);
  const std::string id = SessionToRun(stub, o, mode, /*apply_mode=*/!o.read_only);
  if (id.empty()) return kExitError;
  SessionView view(daemon, o);
  return view.Interactive(id);
}

}  // namespace agent::client
