// The sessions a previous version kept in <project>/.agent/sessions/: moved to the project's
// sessions directory in the state directory (daemon/store/sessions_dir.h) only when a person asks
// (`agent trust --sessions`). A repository can ship `.agent/sessions/` with a meta naming the
// path its victims use and a lock file, and the first `agent -c` would continue the planted
// history: so nothing is taken on its own, and a session's first use only tells the person
// (NoticeLegacySessions).
//
// What an import takes is still only what looks written there for this very checkout: a session
// whose `<id>.meta.json` names this project's canonical path and whose `<id>.lock` exists, every
// file a regular file of ours (no symlink is followed, the directories included). Everything else
// is left where it is and said in the note. A session whose legacy lock another process holds (an
// old agentd still running) is left too. Thread-safe: one migration at a time in the process, each
// project once per process.
#pragma once

#include <string>
#include <vector>

namespace agent::daemon {

struct LegacySession {
  std::string id;
  std::string title;
};

struct LegacyMigration {
  int moved = 0;   // sessions now in the state directory, their old files removed
  int copied = 0;  // sessions copied whose old files could not be removed (read-only checkout)
  int left = 0;    // files in .agent/sessions/ not taken
  int originals_kept = 0;  // files of the copied sessions still in .agent/sessions/
  std::string note;        // for the person; empty when there was nothing to do
};

// Once per process and project: when `workdir`'s `.agent/sessions/` holds sessions, a note for
// TakeMigrationNote saying they are not taken and how a person takes them.
void NoticeLegacySessions(const std::string& workdir);

// The sessions ImportLegacySessions would take now, by id.
std::vector<LegacySession> ListLegacySessions(const std::string& workdir);

// Moves those of `ids` it would take (a person's act, on what the person was shown: never
// called on a session's or a listing's behalf); never fails (problems are in the note).
LegacyMigration ImportLegacySessions(const std::string& workdir,
                                     const std::vector<std::string>& ids);

// The note of `workdir` (NoticeLegacySessions first), once: the next session created or
// loaded there shows it.
std::string TakeMigrationNote(const std::string& workdir);

}  // namespace agent::daemon
