// Line editing for the interactive client, on libedit: history kept per project in the state
// dir, Up/Down, Ctrl-R, Unicode, and multi-line input (a line ending in `\` continues).
// Not thread-safe: used from the main thread only.
#pragma once

#include <optional>
#include <string>

namespace agent::client {

class LineEditor {
 public:
  explicit LineEditor(const std::string& project_dir);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // One prompt's text; nullopt on Ctrl-D at an empty line (or end of input).
  std::optional<std::string> ReadLine(const std::string& prompt);
  void AddHistory(const std::string& line);

 private:
  std::string history_path_;
};

// Asks y/n/a on the terminal for an approval. nullopt when there is no terminal.
std::optional<char> AskApproval(const std::string& always_rules);

}  // namespace agent::client
