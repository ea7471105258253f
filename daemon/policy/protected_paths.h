// Paths a file tool must never write on the strength of a rule or `--yes`: only a person who
// saw the call may approve it. Pure; thread-safe.
//
// Protected (any depth, so a nested repository or project counts too):
//   - `.agent` and everything under it: the project's permission settings, which would let a
//     call grant itself more;
//   - `.git` itself (a file or directory replaced there points git at another repository) and
//     everything under it: `config` (core.fsmonitor, core.hooksPath, aliases run commands),
//     `hooks/**` (run by git), and the rest (refs, objects, info/, modules/<name>/config and
//     hooks of submodules) is git's own state, never a coding task's output.
// Not protected: `.gitmodules`, `.gitattributes`, `.gitignore`: ordinary tracked content that
// git treats as untrusted (it no longer runs `update = !cmd` from .gitmodules; attribute
// filters only run when a config defines them).
//
// `.git` and `.agent` are recognised the way case-insensitive and normalising file systems see
// them: any letter case, with trailing dots or spaces (NTFS), with the Unicode code points
// HFS+ ignores (U+200C–U+200F, U+202A–U+202E, U+206A–U+206F, U+FEFF), and as the 8.3 short
// names `GIT~1` / `AGENT~1`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace agent::daemon::policy {

// Why `resolved_relative_path` (workdir-relative, symlinks and `..` already resolved by the
// caller; `./` and repeated `/` are tolerated) must not be written without a person's approval,
// or nullopt when it may be. A path that is absolute, empty, contains `..` or a NUL byte is not
// what the contract promises and is reported as protected (fail closed).
std::optional<std::string> ProtectedPathReason(std::string_view resolved_relative_path);

}  // namespace agent::daemon::policy
