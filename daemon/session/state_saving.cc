// SessionState (session_state.h): saving. What changed is queued under the mutex
// (SaveLocked) and written by the method that queued it once the mutex is released
// (WriteSaves); a failed write is told to the log and, once per run of failures, the clients.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/session_state.h"

namespace agent::daemon {

void SessionState::SaveLocked(Save what) {
  if (discarded_ || removed_) return;  // its files are gone on purpose
  meta_.updated_unix_ms = NowMs();
  meta_.message_count = static_cast<int64_t>(transcript_.size());
  meta_.model = settings_.model.model;
  // Outside a turn the session is idle: the file is written whole, its journal folded in.
  if (what != Save::kMetaOnly) saver_.Queue(transcript_, what == Save::kWhole || !in_turn_);
  if (what != Save::kTranscriptOnly) {
    meta_.context = ctx_.ToJson();
    meta_.files_seen = files_.ToJson();
    saver_.QueueMeta(meta_);
  }
}

void SessionState::WriteSaves() { (void)saver_.Flush(); }

bool SessionState::RetrySave() {
  if (!saver_.unsaved()) return true;
  {
    SessionMutexLock l(&mu_);
    SaveLocked(Save::kWhole);
  }
  WriteSaves();
  return !saver_.unsaved();
}

void SessionState::DiscardIfUnansweredLocked() {
  if (answered_ || discarded_ || !audience_.empty() || running_ || held_ || !queue_.empty()) {
    return;
  }
  discarded_ = true;
  shutting_down_ = true;               // no prompt starts a turn again
  saver_.Drop(/*delete_files=*/true);  // by the next WriteSaves
}

void SessionState::OnSaveResult(const SessionSaver::Outcome& outcome) {
  const absl::Status& status = outcome.status;
  // Every failure is in the daemon's log (its stderr), whoever is attached.
  if (!status.ok()) {
    std::fprintf(stderr, "agentd: session %s: cannot save: %s%s\n", id_.c_str(),
                 std::string(status.message()).c_str(),
                 outcome.messages_on_disk ? " (every message is in its journal)" : "");
  }
  SessionMutexLock l(&mu_);
  if (!status.ok() && !save_failed_) {
    if (outcome.messages_on_disk) {
      NoticeLocked(
          absl::StrCat("every message is saved in the session's journal, but writing "
                       "its file whole failed: ",
                       status.message(), "; it is tried again at the next save"));
    } else {
      Emit(events::Error(absl::StrCat("cannot save the session: ", status.message(),
                                      "; it is kept in memory and saved again when it can be")));
    }
  } else if (status.ok() && save_failed_) {
    NoticeLocked("the session is saved again");
  }
  save_failed_ = !status.ok();
}

}  // namespace agent::daemon
