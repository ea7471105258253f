// Text helpers shared by the Renderer's files (renderer.cc, renderer_approval.cc,
// renderer_tools.cc); not for other callers. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace agent::client {

// Longest tool-call argument summary shown on one line.
inline constexpr size_t kMaxArgsChars = 100;

// `s` on one line (newlines and tabs as spaces), cut at `max` bytes (on a UTF-8 boundary) with
// an ellipsis.
std::string OneLine(std::string s, size_t max);

// Control characters a program or the model wrote (colours, cursor moves, bells, C1 escapes)
// must not reach our terminal: they are shown as nothing, tabs as spaces.
std::string Sanitized(const std::string& s);

}  // namespace agent::client
