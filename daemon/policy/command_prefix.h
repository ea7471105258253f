// The prefix rule a person most likely means when they allow one command "always": the command
// up to its first argument that varies (`git status -s` -> `git status`, `make test` -> `make`,
// `npm run test -- --watch` -> `npm run test`), so the next similar call is not asked about
// again. Pure; thread-compatible.
//
// None for a command whose prefix would be as strong as a shell (it runs whatever its arguments
// say: `bash`, `python3`, `env`, `xargs`, `sudo`, `find`, `sed`, `npx`, `git rebase`, `docker
// run`, …), for one that writes or deletes wherever its arguments point (`rm`, `mv`, `cp`,
// `chmod`, `tee`, `dd`, …) or fetches from the network (`curl`, `ssh`, …), and for one whose
// first words are not plain (quoted, expanded, an assignment, a glob): those are allowed
// exactly or not at all.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace agent::daemon::policy {

// `part`: one simple command as ParseBashCommand returns it (normalised whitespace). The
// prefix is a literal start of `part`, ending at a word boundary.
std::optional<std::string> CommandPrefix(std::string_view part);

}  // namespace agent::daemon::policy
