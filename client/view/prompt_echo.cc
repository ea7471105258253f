#include "client/view/prompt_echo.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace agent::client {

std::string EchoedPrompt(const std::string& text, size_t max_lines, size_t max_bytes) {
  size_t end = 0;
  size_t lines = 0;
  while (end < text.size() && lines < max_lines) {
    size_t nl = text.find('\n', end);
    end = nl == std::string::npos ? text.size() : nl + 1;
    ++lines;
  }
  end = std::min(end, max_bytes);
  if (end >= text.size()) return text;
  // Back to the start of a UTF-8 sequence: never half a character.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  std::string head = text.substr(0, end);
  size_t rest_lines =
      static_cast<size_t>(std::count(text.begin() + static_cast<long>(end), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++rest_lines;  // the last line has no newline
  bool mid_line = !head.empty() && head.back() != '\n';
  if (mid_line) --rest_lines;  // the line cut is counted with what is shown
  while (!head.empty() && head.back() == '\n') head.pop_back();
  if (rest_lines > 0) {
    return absl::StrCat(head, mid_line ? " …" : "", "\n(… ", rest_lines,
                        rest_lines == 1 ? " more line)" : " more lines)");
  }
  return absl::StrCat(head, " …\n(… ", text.size() - end, " more bytes)");
}

}  // namespace agent::client
