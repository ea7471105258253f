// A small Markdown styler for the assistant's text on a colour terminal, one line at a time
// (text streams in, so a line is styled when it is complete and re-styled while it is not).
// It knows code fences (set apart behind a gutter and highlighted), headings, lists, quotes,
// rules, **bold** and `code`; anything else passes unchanged. With colour off every line
// passes unchanged, so plain output is exactly what the model wrote.
#pragma once

#include <string>
#include <string_view>

namespace agent::client {

class MarkdownStyler {
 public:
  explicit MarkdownStyler(bool color) : color_(color) {}

  // Styles one complete line (no '\n'); a fence line opens or closes a code block.
  std::string Line(std::string_view line);
  // Styles a line still being written; does not change the state.
  std::string Partial(std::string_view line) const;
  bool in_code() const { return in_code_; }
  // Back to prose (a new reply starts).
  void Reset();

 private:
  std::string Prose(std::string_view line) const;
  std::string Code(std::string_view line) const;

  bool color_;
  bool in_code_ = false;
  std::string fence_;  // the opening fence ("```" or "~~~", maybe longer)
  std::string lang_;
};

// **bold** and `code` spans of one line of prose; an unclosed marker stays as it is.
std::string StyleInline(std::string_view text);

// Colours one line of code: strings, comments, numbers and the keywords of common
// languages. `lang` is the fence's info string ("python", "cc", "" …).
std::string HighlightCode(std::string_view line, std::string_view lang);

}  // namespace agent::client
