// The front matter of the Markdown files a project or user writes for the agent (custom
// commands, agent definitions): a first line "---", flat "key: value" lines, a closing "---",
// then the body. Not YAML: lines without a colon are skipped, values are the raw text after the
// first colon. Pure functions over the given text (views into it); thread-safe.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace agent::daemon {

struct FrontMatter {
  enum class Kind {
    kNone,      // the first line is not "---": the whole text is the body
    kUnclosed,  // "---" opened it and nothing closed it
    kClosed,
  };
  Kind kind = Kind::kNone;
  // Keys trimmed, values as written after the colon, in file order (repeats kept).
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  std::string_view body;  // after the closing line when kClosed, else the whole text
};

FrontMatter SplitFrontMatter(std::string_view text);

// `s` without leading and trailing ASCII whitespace.
std::string_view TrimAscii(std::string_view s);

}  // namespace agent::daemon
