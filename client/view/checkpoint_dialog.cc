#include "client/view/checkpoint_dialog.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "client/commands/checkpoint_commands.h"
#include "client/terminal/yes_no.h"
#include "client/text/history.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

constexpr auto Say = CommandRunner::Outcome::Say;
constexpr auto Short = CommandRunner::Short;

}  // namespace

bool CheckpointDialog::Handles(const SlashCommand& c) {
  return c.kind == SlashCommand::kUndo || c.kind == SlashCommand::kRewind ||
         c.kind == SlashCommand::kDiff;
}

std::string CheckpointDialog::Question(const Renderer& r, const std::string& text) const {
  return r.Colored("1;33", "? " + text) + "\n";
}

CommandRunner::Outcome CheckpointDialog::Start(v1::AgentDaemon::Stub& stub, const SlashCommand& c,
                                               TurnState& turn, const Renderer& r, bool color,
                                               const std::string& client_name) {
  step_ = Step::kNone;
  session_id_ = turn.session_id;
  client_name_ = client_name;
  switch (c.kind) {
    case SlashCommand::kUndo:
      return StartUndo(stub, c, turn, r, color);
    case SlashCommand::kRewind:
      return StartRewind(stub, turn, r, color);
    default:
      return Diff(stub, c, turn, r, color);
  }
}

CommandRunner::Outcome CheckpointDialog::StartUndo(v1::AgentDaemon::Stub& stub,
                                                   const SlashCommand& c, const TurnState& turn,
                                                   const Renderer& r, bool color) {
  std::optional<int> turns = ParseTurnCount(c.argument);
  if (!turns.has_value()) {
    return Say(r.ErrorLine("/undo takes a number of turns, e.g. /undo 2, not " + c.argument));
  }
  v1::UndoResponse plan;
  grpc::Status s =
      CallUndo(stub, turn.session_id, *turns, /*dry_run=*/true, false, client_name_, &plan);
  if (!s.ok()) return Say(r.ErrorLine(CheckpointCallError(s)));
  std::vector<v1::FileChange> files(plan.files().begin(), plan.files().end());
  if (files.empty()) {
    return Say(r.Notice(plan.message().empty() ? "nothing to undo" : TerminalSafe(plan.message())));
  }
  turns_ = *turns;
  changed_since_ = ChangedSince(files);
  step_ = Step::kConfirmUndo;
  return Say(r.Notice(absl::StrCat("undoing ", TurnsPhrase(turns_), " restores ", files.size(),
                                   files.size() == 1 ? " file:" : " files:")) +
             FileChangeList(files, color) + Question(r, "restore these files? [y/N]"));
}

CommandRunner::Outcome CheckpointDialog::StartRewind(v1::AgentDaemon::Stub& stub,
                                                     const TurnState& turn, const Renderer& r,
                                                     bool color) {
  absl::StatusOr<std::vector<RewindPoint>> points = FetchRewindPoints(stub, turn.session_id);
  if (!points.ok()) return Say(r.ErrorLine(std::string(points.status().message())));
  if (points->empty()) return Say(r.Notice("no prompt to rewind to yet"));
  points_ = *std::move(points);
  step_ = Step::kPickPrompt;
  return Say(r.Notice("the prompts of this session:") + RewindList(points_, color) +
             Question(r, absl::StrCat("fork the session just before which prompt? [1-",
                                      points_.size(), ", Enter: none]")));
}

CommandRunner::Outcome CheckpointDialog::Diff(v1::AgentDaemon::Stub& stub, const SlashCommand& c,
                                              const TurnState& turn, const Renderer& r,
                                              bool color) {
  int n = 0;
  if (!c.argument.empty()) {
    std::optional<int> t = ParseTurnCount(c.argument);
    if (!t.has_value()) {
      return Say(r.ErrorLine("/diff takes a turn number, e.g. /diff 2, not " + c.argument));
    }
    n = *t;
  }
  absl::StatusOr<std::string> diff = FetchDiff(stub, turn.session_id, n);
  if (!diff.ok()) return Say(r.ErrorLine(std::string(diff.status().message())));
  if (diff->empty()) {
    return Say(r.Notice(n == 0 ? "no file changes recorded in this session"
                               : absl::StrCat("turn ", n, " changed no files")));
  }
  // Colour or not, a terminal gets no control characters from the files.
  return Say(color ? ColoredDiff(*diff, true) : TerminalSafe(*diff));
}

CommandRunner::Outcome CheckpointDialog::Answer(v1::AgentDaemon::Stub& stub,
                                                const std::string& line, TurnState& turn,
                                                const Renderer& r) {
  const Step step = step_;
  step_ = Step::kNone;
  if (turn.session_id != session_id_) {
    return Say(r.Notice(absl::StrCat("the question was about session ", Short(session_id_),
                                     ", no longer on screen: nothing done")));
  }
  switch (step) {
    case Step::kConfirmUndo:
      if (!IsYes(line)) return Say(r.Notice("nothing restored"));
      if (changed_since_ > 0) {
        step_ = Step::kConfirmOverwrite;
        return Say(Question(
            r, absl::StrCat(changed_since_, changed_since_ == 1 ? " file was" : " files were",
                            " changed after the turn: overwrite ",
                            changed_since_ == 1 ? "it" : "them", " too? [y/N]")));
      }
      return Restore(stub, false, r);
    case Step::kConfirmOverwrite:
      return Restore(stub, IsYes(line), r);
    case Step::kPickPrompt: {
      std::optional<int> n = ParseChoice(line, static_cast<int>(points_.size()));
      if (!n.has_value()) return Say(r.Notice("not rewound"));
      chosen_ = points_[static_cast<size_t>(*n - 1)];
      if (chosen_.files_turns == 0) return Fork(stub, false, turn, r);
      step_ = Step::kConfirmRestore;
      return Say(Question(r, absl::StrCat("restore the files too (undoing ", chosen_.files_turns,
                                          chosen_.files_turns == 1 ? " turn" : " turns",
                                          " that changed them)? [y/N]")));
    }
    case Step::kConfirmRestore:
      return Fork(stub, IsYes(line), turn, r);
    case Step::kNone:
      break;
  }
  return Say("");
}

CommandRunner::Outcome CheckpointDialog::Restore(v1::AgentDaemon::Stub& stub, bool overwrite,
                                                 const Renderer& r) {
  v1::UndoResponse done;
  grpc::Status s =
      CallUndo(stub, session_id_, turns_, /*dry_run=*/false, overwrite, client_name_, &done);
  if (!s.ok()) return Say(r.ErrorLine(CheckpointCallError(s)));
  std::string message = TerminalSafe(done.message());
  if (!done.restored()) return Say(r.Notice(message.empty() ? "nothing restored" : message));
  return Say(r.Notice(message.empty() ? "files restored" : message));
}

CommandRunner::Outcome CheckpointDialog::Fork(v1::AgentDaemon::Stub& stub, bool restore_files,
                                              TurnState& turn, const Renderer& r) {
  absl::StatusOr<v1::Session> fork = ForkAt(stub, session_id_, chosen_.at_message, restore_files);
  if (!fork.ok()) return Say(r.ErrorLine(std::string(fork.status().message())));
  std::string old = turn.session_id;
  turn.SwitchedTo(fork->id());
  return {r.Notice(absl::StrCat("rewound: ", Short(fork->id()), " is ", Short(old),
                                " up to before \"", chosen_.prompt, "\"",
                                restore_files ? ", with the files as they were then" : "",
                                "; you are in it (the original: agent attach ", Short(old), ")")),
          fork->id()};
}

}  // namespace agent::client
