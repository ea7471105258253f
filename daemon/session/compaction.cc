// TurnRunner::Compact: the older messages replaced by a summary the model writes. The summary
// request, the instruction files (rebuilt for the new system message) and the archive of what is
// removed are made without the session's lock; the transcript changes under it only once all of
// that succeeded: what is removed is archived first, and a compaction that cannot keep it does
// not happen.
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/paths.h"
#include "daemon/session/compactor.h"
#include "daemon/session/deferred_writes.h"
#include "daemon/session/events.h"
#include "daemon/session/opening.h"
#include "daemon/session/turn_runner.h"

namespace agent::daemon {

absl::StatusOr<int> TurnRunner::Compact() {
  Json messages = Json::array();
  size_t cut;
  ModelSettings model;
  std::string cwd;
  bool manual;
  {
    SessionMutexLock l(&s_.mu_);
    cut = s_.transcript_.CutPoint();
    if (cut <= s_.transcript_.FirstCompactable()) {
      return absl::FailedPreconditionError("the transcript is too short to compact");
    }
    for (size_t i = s_.transcript_.FirstCompactable(); i < cut; ++i) {
      messages.push_back(s_.transcript_.messages()[i]);
    }
    model = s_.settings_.model;
    cwd = s_.meta_.cwd;
    manual = !s_.in_turn_;
  }
  s_.hooks_->PreCompact(manual);
  // Instruction files edited since the session began reach it now.
  BuiltSystemPrompt prompt =
      BuildSessionPrompt(s_.workdir_, DirectoryInside(s_.workdir_, cwd), *s_.deps_.clock);
  absl::StatusOr<std::string> summary = Summarize(*model_, model, messages, &s_.cancelled_);
  // What is removed is archived first: a compaction that cannot keep it does not happen.
  absl::Status archived =
      summary.ok() ? AppendCompacted(s_.workdir_, s_.id_, messages, *summary) : summary.status();
  const bool instructions_changed = archived.ok() && MarkInstructionsSeen(s_.workdir_, prompt);
  size_t first = 0;
  absl::StatusOr<Json> removed;
  {
    SessionMutexLock l(&s_.mu_);
    if (!summary.ok()) {
      s_.Emit(events::Error(absl::StrCat("compaction failed, the transcript is unchanged: ",
                                         summary.status().message())));
      return summary.status();
    }
    if (!archived.ok()) {
      s_.Emit(
          events::Error(absl::StrCat("compaction failed, the transcript is unchanged: cannot keep "
                                     "the messages it would remove: ",
                                     archived.message())));
      return archived;
    }
    // The turn loop is the only writer while a turn runs, and it is here: the prefix is intact.
    first = s_.transcript_.FirstCompactable();
    removed = s_.transcript_.ReplacePrefix(cut, SummaryMessage(*summary));
    if (!removed.ok()) return removed.status();
    s_.RefreshSystemPromptLocked(prompt, instructions_changed);
    ++s_.meta_.compactions;
    s_.meta_.prompt_tokens = 0;  // the next request reports the new size
    s_.SaveLocked(Session::Save::kWhole);
    s_.Emit(events::Compacted(static_cast<int>(removed->size()),
                              static_cast<int>(s_.transcript_.size())));
  }  // saved here
  // The checkpoints' message numbers follow the shorter transcript (their record is a file).
  s_.checkpointer().Compacted(static_cast<int>(first), static_cast<int>(removed->size()));
  return static_cast<int>(removed->size());
}

}  // namespace agent::daemon
