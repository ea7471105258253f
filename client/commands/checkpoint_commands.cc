#include "client/commands/checkpoint_commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "client/commands/cli.h"
#include "client/commands/session_calls.h"
#include "client/terminal/yes_no.h"
#include "client/text/history.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// A restore or a diff runs git over the project: generous, but not forever.
constexpr auto kCallDeadline = std::chrono::seconds(120);

void Deadline(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + kCallDeadline);
}

// Restores after the list was shown; the exit code.
int Restore(v1::AgentDaemon::Stub& stub, const std::string& id, const CheckpointArgs& a,
            bool overwrite, const std::string& client_name) {
  v1::UndoResponse done;
  grpc::Status s = CallUndo(stub, id, a.turns, /*dry_run=*/false, overwrite, client_name, &done);
  if (!s.ok()) return Complain(CheckpointCallError(s));
  std::string message = TerminalSafe(done.message());
  if (!done.restored()) {
    return Complain(message.empty() ? "nothing restored" : "nothing restored: " + message);
  }
  std::printf("%s\n", message.empty() ? "files restored" : message.c_str());
  return kExitDone;
}

int Undo(v1::AgentDaemon::Stub& stub, const std::string& id, const CheckpointArgs& a,
         const ClientOptions& o) {
  v1::UndoResponse plan;
  grpc::Status s = CallUndo(stub, id, a.turns, /*dry_run=*/true, false, o.client_name, &plan);
  if (!s.ok()) return Complain(CheckpointCallError(s));
  std::vector<v1::FileChange> files(plan.files().begin(), plan.files().end());
  if (files.empty()) {
    std::printf("%s\n",
                plan.message().empty() ? "nothing to undo" : TerminalSafe(plan.message()).c_str());
    return kExitDone;
  }
  std::printf("undoing %s of session %s restores %zu file%s:\n%s", TurnsPhrase(a.turns).c_str(),
              id.substr(0, 8).c_str(), files.size(), files.size() == 1 ? "" : "s",
              FileChangeList(files, o.color).c_str());
  const int since = ChangedSince(files);
  bool overwrite = a.overwrite;
  if (!a.yes) {
    if (!isatty(0)) {
      return Complain("not restored: no terminal to ask on; run again with --yes to restore");
    }
    if (!AskYes("restore these files?")) {
      std::printf("nothing restored\n");
      return kExitCancelled;
    }
    if (since > 0 && !overwrite) {
      overwrite = AskYes(absl::StrCat(since, since == 1 ? " file was" : " files were",
                                      " changed after the turn: overwrite ",
                                      since == 1 ? "it" : "them", " too?"));
    }
  }
  return Restore(stub, id, a, overwrite, o.client_name);
}

int Diff(v1::AgentDaemon::Stub& stub, const std::string& id, const CheckpointArgs& a,
         const ClientOptions& o) {
  absl::StatusOr<std::string> diff = FetchDiff(stub, id, a.turn);
  if (!diff.ok()) return Complain(std::string(diff.status().message()));
  const bool terminal = isatty(1) != 0;
  if (diff->empty()) {
    if (terminal) std::printf("no file changes recorded\n");
    return kExitDone;
  }
  // Into a pipe exactly what the daemon sent (git apply takes it); a terminal gets no
  // control characters from the files.
  std::string out = !terminal ? *diff : o.color ? ColoredDiff(*diff, true) : TerminalSafe(*diff);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitDone;
}

}  // namespace

void AddCheckpointFlags(CLI::App& app, CheckpointArgs& a) {
  app.add_option("id", a.id, "session id or unique prefix (default: the newest here)");
  if (a.cmd == "undo") {
    app.add_option("--turns", a.turns, "undo the last N turns that changed files (default 1)")
        ->check(CLI::Range(1, 1000));
    app.add_flag("-y,--yes", a.yes, "restore without asking");
    app.add_flag("--overwrite", a.overwrite,
                 "also restore files changed after the turn (else they are kept)");
  } else {
    app.add_option("--turn", a.turn, "only what turn N changed (default: the whole session)")
        ->check(CLI::Range(1, 1000000));
  }
}

int RunCheckpointSubcommand(int argc, char** argv) {
  CheckpointArgs a;
  a.cmd = argv[1];
  CLI::App app{a.cmd == "undo" ? "Restore the files to their state before the last turn(s)."
                               : "Show what the session (or one turn) changed in the files."};
  app.name("agent " + a.cmd);
  AddCheckpointFlags(app, a);
  ClientOptions options;
  if (std::optional<int> code = ParseSubcommand(app, argc, argv, &options)) return *code;
  Connection daemon = ConnectOrExit();
  v1::AgentDaemon::Stub& stub = *daemon.stub;
  absl::StatusOr<std::string> id = ResolveSession(stub, a.id, options.project.root);
  if (!id.ok()) ExitWithoutTeardown(Complain(std::string(id.status().message())));
  ExitWithoutTeardown(a.cmd == "undo" ? Undo(stub, *id, a, options) : Diff(stub, *id, a, options));
}

std::string CheckpointCallError(const grpc::Status& s) {
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return "this agentd has no checkpoints (restart it: agent daemon stop)";
  }
  return TerminalSafe(s.error_message());
}

grpc::Status CallUndo(v1::AgentDaemon::Stub& stub, const std::string& session_id, int turns,
                      bool dry_run, bool overwrite, const std::string& client_name,
                      v1::UndoResponse* resp) {
  grpc::ClientContext ctx;
  Deadline(&ctx);
  v1::UndoRequest req;
  req.set_session_id(session_id);
  req.set_turns(turns);
  req.set_dry_run(dry_run);
  req.set_overwrite(overwrite);
  req.set_client_name(client_name);
  return stub.Undo(&ctx, req, resp);
}

absl::StatusOr<std::string> FetchDiff(v1::AgentDaemon::Stub& stub, const std::string& session_id,
                                      int turn) {
  grpc::ClientContext ctx;
  Deadline(&ctx);
  v1::DiffRequest req;
  req.set_session_id(session_id);
  req.set_turn(turn);
  v1::DiffResponse resp;
  grpc::Status s = stub.Diff(&ctx, req, &resp);
  if (!s.ok()) return absl::UnavailableError(CheckpointCallError(s));
  return std::move(*resp.mutable_unified_diff());
}

absl::StatusOr<std::vector<RewindPoint>> FetchRewindPoints(v1::AgentDaemon::Stub& stub,
                                                           const std::string& session_id) {
  v1::GetSessionResponse session;
  {
    grpc::ClientContext ctx;
    Deadline(&ctx);
    v1::GetSessionRequest req;
    req.set_id(session_id);
    grpc::Status s = stub.GetSession(&ctx, req, &session);
    if (!s.ok()) return absl::UnavailableError("cannot read the session: " + s.error_message());
  }
  auto history = ParseHistory(session.transcript_json());
  if (!history.ok()) return history.status();
  // Without checkpoints (an older daemon, or none taken) the prompts are still listed.
  std::vector<v1::Checkpoint> checkpoints;
  grpc::ClientContext ctx;
  Deadline(&ctx);
  v1::ListCheckpointsRequest req;
  req.set_session_id(session_id);
  v1::ListCheckpointsResponse listed;
  if (stub.ListCheckpoints(&ctx, req, &listed).ok()) {
    checkpoints.assign(listed.checkpoints().begin(), listed.checkpoints().end());
  }
  return RewindPoints(*history, checkpoints);
}

absl::StatusOr<v1::Session> ForkAt(v1::AgentDaemon::Stub& stub, const std::string& session_id,
                                   int at_message, bool restore_files) {
  if (at_message <= 0) return absl::InvalidArgumentError("cannot fork before the first message");
  grpc::ClientContext ctx;
  Deadline(&ctx);
  v1::ForkSessionRequest req;
  req.set_session_id(session_id);
  req.set_at_message(at_message);
  req.set_restore_files(restore_files);
  v1::Session fork;
  grpc::Status s = stub.ForkSession(&ctx, req, &fork);
  if (!s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(restore_files ? "not rewound: " : "cannot fork: ", CheckpointCallError(s)));
  }
  return fork;
}

}  // namespace agent::client
