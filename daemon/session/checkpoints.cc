// The session's file checkpoints (daemon/checkpoints/): undo, rewind's restore, diff, list.
// A restore runs with the turn loop held off the way Compact does it (SessionState::HoldTurns):
// prompts sent meanwhile wait, then start.
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json.h"
#include "daemon/session/session.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

// What the model reads after a restore: the files it edited are not as it left them.
std::string RestoreNote(const checkpoints::UndoResult& r) {
  std::vector<std::string> paths;
  for (const v1::FileChange& f : r.files) {
    if (paths.size() == 50) {
      paths.push_back("…");
      break;
    }
    // Quoted: a file name is the repository's text, and may hold a newline or a bracket.
    paths.push_back(Json(f.path()).dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  std::string turns = r.first_turn == r.last_turn
                          ? absl::StrCat("turn ", r.first_turn)
                          : absl::StrCat("turns ", r.first_turn, " to ", r.last_turn);
  return absl::StrCat("[The user restored the project's files to their state before ", turns, " (",
                      r.message, "): ", absl::StrJoin(paths, ", "),
                      ". What those turns changed in these files is undone; read a file again "
                      "before editing it.]");
}

}  // namespace

checkpoints::Checkpointer& Session::checkpointer() {
  std::call_once(checkpointer_once_, [this] {
    checkpointer_ = std::make_unique<checkpoints::Checkpointer>(
        workdir(), id(), deps_.config.checkpoints, deps_.checkpoint_stores);
  });
  return *checkpointer_;
}

absl::StatusOr<checkpoints::UndoResult> Session::RestoreFiles(
    const std::function<absl::StatusOr<checkpoints::UndoResult>()>& restore,
    const std::string& client) {
  if (absl::Status held = state_.HoldTurns(client, "restore"); !held.ok()) return held;
  absl::StatusOr<checkpoints::UndoResult> r = restore();
  if (r.ok() && r->restored) {
    state_.ReleaseTurns(
        RestoreNote(*r),
        absl::StrCat("files restored by ", client.empty() ? "a client" : client, ": ", r->message));
  } else {
    state_.ReleaseTurns("", "");
  }
  return r;
}

absl::StatusOr<checkpoints::UndoResult> Session::Undo(int turns, bool dry_run, bool overwrite,
                                                      const std::string& client) {
  return RestoreFiles([&] { return checkpointer().Undo(turns, dry_run, overwrite); }, client);
}

absl::StatusOr<checkpoints::UndoResult> Session::RestoreFilesFrom(int at_message,
                                                                  const std::string& client) {
  return RestoreFiles(
      [&]() -> absl::StatusOr<checkpoints::UndoResult> {
        auto plan = checkpointer().RestoreFrom(at_message, /*dry_run=*/true, false);
        if (!plan.ok()) return plan;
        std::vector<std::string> since;
        for (const v1::FileChange& f : plan->files) {
          if (f.changed_since()) since.push_back(f.path());
        }
        if (!since.empty()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "not restored: changed since the session's turns: ", absl::StrJoin(since, ", ")));
        }
        if (plan->files.empty()) return plan;
        return checkpointer().RestoreFrom(at_message, /*dry_run=*/false, false);
      },
      client);
}

}  // namespace agent::daemon
