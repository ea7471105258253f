// `agent resume` on a terminal with several sessions: a list to choose from with the arrow
// keys (or j/k), Enter to open, Esc, q or Ctrl-C to leave. The list and its keys are a pure
// Picker; RunPicker draws it on the terminal. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/v1/agent.pb.h"

namespace agent::client {

class Picker {
 public:
  // `sessions` newest first (as SessionsOf returns them); the first is selected.
  Picker(std::vector<agent::v1::Session> sessions, int64_t now_ms, int rows = 10);

  enum class Result { kNone, kChosen, kCancelled };
  // Feeds the keys read from the terminal; escape sequences must arrive whole (a lone ESC
  // is Esc).
  Result Feed(const std::string& keys);

  // The lines to draw now, each at most `cols` columns: a heading, then at most `rows`
  // sessions around the selection with the selected one marked.
  std::vector<std::string> Lines(bool color, int cols) const;
  const agent::v1::Session& selected() const { return sessions_[selected_]; }

 private:
  void Move(int delta);

  std::vector<agent::v1::Session> sessions_;
  int64_t now_ms_;
  int rows_;
  size_t selected_ = 0;
  size_t top_ = 0;  // first session shown
};

// Draws a Picker on the terminal (stdin and stdout must be one) and returns the chosen
// session's id; nullopt when the user left without choosing. The picker's lines are erased
// afterwards.
std::optional<std::string> RunPicker(std::vector<agent::v1::Session> sessions, bool color);

}  // namespace agent::client
