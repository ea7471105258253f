// A small Markdown styler for the assistant's text on a terminal, one line at a time (text
// streams in, so a line is styled when it is complete and re-styled while it is not).
// It knows code fences (set apart behind a gutter and highlighted), headings, lists, quotes,
// rules, tables (held until their last row, then laid out in a box), **bold**, *italics*,
// `code` and [links](url); anything else passes unchanged. Prose is wrapped at word
// boundaries to the width set. Three modes:
//   kColor  a colour terminal: escapes for the styles;
//   kPlain  a terminal without colour (NO_COLOR, --plain): the same structure (gutters,
//           bullets, boxes, no ** or ``` markers), no escapes;
//   kRaw    not a terminal: every line passes unchanged, exactly what the model wrote.
// Not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::client {

enum class MarkdownMode { kRaw, kPlain, kColor };

class MarkdownStyler {
 public:
  explicit MarkdownStyler(MarkdownMode mode) : mode_(mode) {}
  explicit MarkdownStyler(bool color)
      : MarkdownStyler(color ? MarkdownMode::kColor : MarkdownMode::kRaw) {}

  // Prose wraps at `cols` columns (0: not at all).
  void SetWidth(int cols) { width_ = cols; }
  // Styles one complete line (no '\n'); a fence line opens or closes a code block. Returns
  // the rows to commit, each ending in '\n': none while a table's rows are held, several
  // when a table ends or a line wraps.
  std::string Line(std::string_view line);
  // Commits what is held (the table the text ended with).
  std::string Flush();
  // Styles a line still being written, unwrapped; does not change the state.
  std::string Partial(std::string_view line) const;
  // What the live area shows: the rows of a table held so far, then `partial` wrapped.
  std::vector<std::string> Pending(std::string_view partial) const;
  bool holding() const { return !table_.empty(); }
  bool in_code() const { return in_code_; }
  // Back to prose (a new reply starts); what was held is dropped (Flush it first).
  void Reset();

 private:
  std::string Prose(std::string_view line) const;
  std::vector<std::string> ProseRows(std::string_view line) const;
  std::string Code(std::string_view line) const;
  std::string Inline(std::string_view text) const;
  std::vector<std::string> TableRows() const;
  std::string Rows(const std::vector<std::string>& rows) const;

  MarkdownMode mode_;
  int width_ = 0;
  bool in_code_ = false;
  std::string fence_;  // the opening fence ("```" or "~~~", maybe longer)
  std::string lang_;
  std::vector<std::string> table_;  // held lines: a header, then the delimiter and rows
};

// **bold**, *italic*, `code` and [link](url) spans of one line of prose, with colours; an
// unclosed marker stays as it is.
std::string StyleInline(std::string_view text);
// The same spans without escapes: the markers go, a link reads "text (url)".
std::string PlainInline(std::string_view text);

// Colours one line of code: strings, comments, numbers and the keywords of common
// languages. `lang` is the fence's info string ("python", "cc", "" …).
std::string HighlightCode(std::string_view line, std::string_view lang);

}  // namespace agent::client
