#include "daemon/prompt/front_matter.h"

#include "absl/strings/ascii.h"

namespace agent::daemon {

std::string_view TrimAscii(std::string_view s) {
  absl::string_view t = absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size()));
  return std::string_view(t.data(), t.size());
}

FrontMatter SplitFrontMatter(std::string_view text) {
  FrontMatter out;
  out.body = text;
  std::string_view rest = text;
  auto next_line = [&rest]() {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  if (TrimAscii(next_line()) != "---") return out;
  out.kind = FrontMatter::Kind::kUnclosed;
  // Bounded by the text: each pass consumes a line.
  while (!rest.empty()) {
    std::string_view line = next_line();
    if (TrimAscii(line) == "---") {
      out.kind = FrontMatter::Kind::kClosed;
      out.body = rest;
      return out;
    }
    if (size_t colon = line.find(':'); colon != std::string_view::npos) {
      out.fields.emplace_back(TrimAscii(line.substr(0, colon)), line.substr(colon + 1));
    }
  }
  return out;
}

}  // namespace agent::daemon
