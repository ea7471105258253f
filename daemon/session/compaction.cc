// Compaction: the older messages replaced by a summary the model writes. The summary request,
// the instruction files (rebuilt for the new system message) and the archive of what is removed
// are made without the session's lock (TurnRunner::Compact); the transcript changes under it only
// once all of that succeeded (SessionState::FinishCompaction): what is removed is archived
// first, and a compaction that cannot keep it does not happen.
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/session/compactor.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/opening.h"
#include "daemon/session/session_state.h"
#include "daemon/session/turn_runner.h"

namespace agent::daemon {

absl::StatusOr<SessionState::CompactionInput> SessionState::BeginCompaction() const {
  SessionMutexLock l(&mu_);
  CompactionInput in;
  in.cut = transcript_.CutPoint();
  if (in.cut <= transcript_.FirstCompactable()) {
    return absl::FailedPreconditionError("the transcript is too short to compact");
  }
  in.messages = Json::array();
  for (size_t i = transcript_.FirstCompactable(); i < in.cut; ++i) {
    in.messages.push_back(transcript_.messages()[i]);
  }
  in.model = settings_.model;
  in.cwd = meta_.cwd;
  in.manual = !in_turn_;
  return in;
}

absl::StatusOr<std::pair<size_t, size_t>> SessionState::FinishCompaction(
    size_t cut, const std::string& summary, const BuiltSystemPrompt& prompt,
    bool instructions_changed) {
  size_t first;
  size_t removed_count;
  {
    SessionMutexLock l(&mu_);
    // The turn loop is the only writer while a turn runs, and it is compacting: the prefix is
    // intact.
    first = transcript_.FirstCompactable();
    absl::StatusOr<Json> removed = transcript_.ReplacePrefix(cut, SummaryMessage(summary));
    if (!removed.ok()) return removed.status();
    removed_count = removed->size();
    RefreshSystemPromptLocked(prompt, instructions_changed);
    ++meta_.compactions;
    meta_.prompt_tokens = 0;  // the next request reports the new size
    SaveLocked(Save::kWhole);
    Emit(events::Compacted(static_cast<int>(removed_count), static_cast<int>(transcript_.size())));
  }
  WriteSaves();
  return std::make_pair(first, removed_count);
}

void SessionState::RefreshSystemPromptLocked(const BuiltSystemPrompt& prompt,
                                             bool changed_since_seen) {
  if (!meta_.agent.empty()) return;  // a child keeps its agent definition's prompt
  if (!transcript_.ReplaceSystemText(prompt.text).ok()) return;
  ctx_.SetPrompt(prompt.instructions, prompt.base_chars, prompt.text.size());
  ctx_.reported_tokens = 0;
  // A file changed since (the model may have edited it) is shown again, as new ones are.
  if (changed_since_seen) NoticeLocked(context::InstructionsNotice(prompt.instructions));
}

absl::StatusOr<int> TurnRunner::Compact() {
  absl::StatusOr<SessionState::CompactionInput> in = state_.BeginCompaction();
  if (!in.ok()) return in.status();
  hooks_.PreCompact(in->manual);
  const std::string& workdir = state_.workdir();
  // Instruction files edited since the session began reach it now.
  BuiltSystemPrompt prompt =
      BuildSessionPrompt(workdir, DirectoryInside(workdir, in->cwd), *deps_.clock);
  absl::StatusOr<std::string> summary =
      Summarize(*model_, in->model, in->messages, state_.cancelled());
  if (!summary.ok()) {
    state_.Error(absl::StrCat("compaction failed, the transcript is unchanged: ",
                              summary.status().message()));
    return summary.status();
  }
  // What is removed is archived first: a compaction that cannot keep it does not happen.
  if (absl::Status archived = AppendCompacted(workdir, state_.id(), in->messages, *summary);
      !archived.ok()) {
    state_.Error(absl::StrCat(
        "compaction failed, the transcript is unchanged: cannot keep the messages it would "
        "remove: ",
        archived.message()));
    return archived;
  }
  const bool instructions_changed = MarkInstructionsSeen(workdir, prompt);
  absl::StatusOr<std::pair<size_t, size_t>> done =
      state_.FinishCompaction(in->cut, *summary, prompt, instructions_changed);
  if (!done.ok()) return done.status();
  // The checkpoints' message numbers follow the shorter transcript (their record is a file).
  checkpointer_().Compacted(static_cast<int>(done->first), static_cast<int>(done->second));
  return static_cast<int>(done->second);
}

}  // namespace agent::daemon
