#include "client/line_editor.h"

#include <editline/readline.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/paths.h"

namespace agent::client {

LineEditor::LineEditor(const std::string& project_dir) {
  std::string dir = StateDir() + "/history";
  (void)MakeDirs(dir);
  history_path_ =
      absl::StrFormat("%s/%016x", dir, std::hash<std::string>{}(project_dir));
  using_history();
  read_history(history_path_.c_str());
}

LineEditor::~LineEditor() {
  write_history(history_path_.c_str());
  history_truncate_file(history_path_.c_str(), 1000);
}

std::optional<std::string> LineEditor::ReadLine(const std::string& prompt) {
  std::string text;
  std::string p = prompt;
  for (;;) {
    char* raw = readline(p.c_str());
    if (raw == nullptr) {
      if (text.empty()) return std::nullopt;
      return text;
    }
    std::string line(raw);
    std::free(raw);
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      text += line + "\n";
      p = "… ";
      continue;
    }
    text += line;
    return text;
  }
}

void LineEditor::AddHistory(const std::string& line) { add_history(line.c_str()); }

std::optional<char> AskApproval(const std::string& always_rules) {
  if (!isatty(0)) return std::nullopt;
  std::printf("[y]es / [n]o / [a]lways (%s) ", always_rules.c_str());
  std::fflush(stdout);
  termios old{};
  tcgetattr(0, &old);
  termios raw = old;
  raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  tcsetattr(0, TCSANOW, &raw);
  char c = 0;
  for (;;) {
    if (::read(0, &c, 1) != 1) {
      c = 0;
      break;
    }
    if (c == 'y' || c == 'n' || c == 'a' || c == 'Y' || c == 'N' || c == 'A') break;
  }
  tcsetattr(0, TCSANOW, &old);
  if (c == 0) {
    std::printf("\n");
    return std::nullopt;
  }
  c = static_cast<char>(c | 0x20);
  std::printf("%s\n", c == 'y' ? "yes" : c == 'a' ? "always" : "no");
  return c;
}

}  // namespace agent::client
