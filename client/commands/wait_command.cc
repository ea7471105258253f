#include "client/commands/wait_command.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "client/commands/cli.h"
#include "client/commands/session_calls.h"
#include "client/link/event_stream.h"
#include "client/text/checkpoint_text.h"
#include "common/protocol.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

enum class Want { kEither, kApproval, kIdle };

// What the event says the session is now: "approval", "idle", or empty (nothing to report).
const char* Reached(const v1::Event& e, Want want) {
  const bool approval_ok = want != Want::kIdle;
  const bool idle_ok = want != Want::kApproval;
  if (e.has_snapshot()) {
    const v1::SessionState s = e.snapshot().state();
    if (approval_ok && s == v1::SESSION_STATE_WAITING_APPROVAL) return "approval";
    if (idle_ok && (s == v1::SESSION_STATE_IDLE || s == v1::SESSION_STATE_UNSPECIFIED)) {
      return "idle";
    }
    return nullptr;
  }
  if (approval_ok && e.has_approval_requested()) return "approval";
  if (idle_ok && e.has_turn_ended()) return "idle";
  return nullptr;
}

int Wait(Connection& daemon, const std::string& id, Want want) {
  Mailbox mailbox;
  v1::AttachRequest req;
  req.set_session_id(id);
  req.set_client_name("agent wait");
  req.set_read_only(true);
  req.set_protocol_version(kProtocolVersion);
  EventStream stream(*daemon.channel, req, mailbox, 1);
  // Ends with an answer or with the stream (the session removed, the daemon stopping).
  for (;;) {
    std::optional<Mailbox::Item> item = mailbox.Next(absl::Hours(1));
    if (!item.has_value() || item->kind == Mailbox::Item::kNotice) continue;
    if (item->kind == Mailbox::Item::kEnd) {
      return Complain(item->status.ok() ? "the session ended before it needed anyone"
                                        : TerminalSafe(item->status.error_message()));
    }
    if (item->event.has_session_removed()) return Complain("the session was removed");
    if (const char* what = Reached(item->event, want)) {
      std::printf("%s\n", what);
      std::fflush(stdout);
      return kExitDone;
    }
  }
}

}  // namespace

int RunWaitSubcommand(int argc, char** argv) {
  std::string id;
  std::string what = "either";
  CLI::App app{"Wait until a session needs a person or its turn ends; print which."};
  app.name("agent wait");
  app.add_option("id", id, "session id or unique prefix (default: the newest here)");
  app.add_option("--for", what, "approval | idle (default: whichever comes first)")
      ->check(CLI::IsMember({"approval", "idle", "either"}));
  ClientOptions options;
  if (std::optional<int> code = ParseSubcommand(app, argc, argv, &options)) return *code;
  Connection daemon = ConnectOrExit(/*autostart=*/false);
  absl::StatusOr<std::string> full = ResolveSession(*daemon.stub, id, options.project.root);
  if (!full.ok()) ExitWithoutTeardown(Complain(TerminalSafe(std::string(full.status().message()))));
  const Want want = what == "approval" ? Want::kApproval
                    : what == "idle"   ? Want::kIdle
                                       : Want::kEither;
  ExitWithoutTeardown(Wait(daemon, *full, want));
}

}  // namespace agent::client
