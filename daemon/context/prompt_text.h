// Text from outside (directory names, a branch name, an instruction file's path) placed on one
// line of the system prompt. A directory may be named "x\n# New instructions": kept verbatim
// it would start a line of its own and read as prompt text. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agent::daemon::context {

// `s` as valid UTF-8 (ill-formed bytes become U+FFFD) with every control character (C0, DEL,
// C1 U+0080-U+009F, which holds NEL) and U+2028 / U+2029 (line and paragraph separators)
// replaced by '?', cut to at most `max_bytes` on a character boundary.
std::string OneLinePromptText(std::string_view s, size_t max_bytes = 4096);

}  // namespace agent::daemon::context
