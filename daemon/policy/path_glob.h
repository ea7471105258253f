// Workdir-relative path normalisation and the globs of file-tool rules (`edit_file(src/**)`).
// Pure; thread-compatible.
//
// Glob syntax, per `/`-separated segment: `*` matches any run of characters within one segment
// (dotfiles included), `?` one character, `[*]` and `[?]` a literal `*` and `?`; a segment that
// is exactly `**` matches any number of whole segments, except that a trailing `**` needs at
// least one (`src/**` is everything under src, not src itself); `**` inside a longer segment is
// a plain `*`. So `*.md` is top-level only, `**/*.md` any depth. Other characters are literal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::daemon::policy {

struct NormalizedPath {
  std::vector<std::string> segments;  // no empty and no `.` segments
  bool absolute = false;
  bool has_dotdot = false;  // some segment is `..`

  std::string Joined() const;  // segments joined by `/`, with a leading `/` when absolute
};

// `./src//a.cc/` -> {"src", "a.cc"}. `..` segments are kept (and flagged), never resolved.
NormalizedPath NormalizePath(std::string_view path);

// Lexically resolves `..` (`a/../b` -> `b`); `..` that would climb above the start are
// dropped. For deny matching only, where matching too much is the safe direction.
std::vector<std::string> ResolveDotDot(const std::vector<std::string>& segments);

// Whether `path` segments match `pattern` (normalised with NormalizePath first; a pattern with
// `..` matches nothing). Absoluteness is the caller's business. Polynomial in the worst case.
bool MatchPathGlob(std::string_view pattern, const std::vector<std::string>& path);

// The glob matching exactly `path` (`*` -> `[*]`, `?` -> `[?]`).
std::string EscapePathGlob(std::string_view path);

}  // namespace agent::daemon::policy
