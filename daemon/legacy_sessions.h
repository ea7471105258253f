// Moving the sessions a previous version kept in <project>/.agent/sessions/ to the project's
// sessions directory in the state directory (daemon/sessions_dir.h), on first use.
//
// A repository can ship `.agent/sessions/`, so only what the daemon wrote there for this very
// checkout is taken: a session whose `<id>.meta.json` names this project's canonical path and
// whose `<id>.lock` exists, every file a regular file of ours (no symlink is followed, the
// directories included). Everything else is left where it is and said in the note. A session
// whose legacy lock another process holds (an old agentd still running) is left too.
// Thread-safe: one migration at a time in the process, each project once per process.
#pragma once

#include <string>

namespace agent::daemon {

struct LegacyMigration {
  int moved = 0;   // sessions now in the state directory, their old files removed
  int copied = 0;  // sessions copied whose old files could not be removed (read-only checkout)
  int left = 0;    // files in .agent/sessions/ not taken
  int originals_kept = 0;  // files of the copied sessions still in .agent/sessions/
  std::string note;        // for the person; empty when there was nothing to do
};

// Migrates `workdir` (canonical) unless this process did already; never fails (problems are
// in the note). The note is also kept for TakeMigrationNote.
LegacyMigration MigrateLegacySessions(const std::string& workdir);

// The note of `workdir`'s migration, once: the next session created or loaded there shows it.
std::string TakeMigrationNote(const std::string& workdir);

}  // namespace agent::daemon
