// How a prompt is echoed on the screen: whole when short; a huge one (a pasted file, a 1 MB
// prompt from stdin) by its first lines and a note of how much more it has, so the terminal
// is not flooded with what the user already has. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace agent::client {

inline constexpr size_t kEchoLines = 8;
inline constexpr size_t kEchoBytes = 2000;

// `text` cut to its first `max_lines` lines and `max_bytes` bytes (at a UTF-8 boundary), then
// "(… N more lines)" (or "(… N more bytes)" when the cut is inside one long line).
std::string EchoedPrompt(const std::string& text, size_t max_lines = kEchoLines,
                         size_t max_bytes = kEchoBytes);

}  // namespace agent::client
