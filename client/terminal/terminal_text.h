// Measuring text the way a terminal lays it out, and the live area at the bottom of the
// screen. Pure functions and plain data: no terminal is touched here, so all of it is tested
// without one. Widths come from our own table (not the C locale), so a test and a terminal in
// any locale agree; characters outside the table count as one column.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent::client {

// `text` without ANSI escape sequences (CSI "\x1b[...X", OSC "\x1b]...\x07", two-byte ESC x)
// and without C1 control characters (U+0080-U+009F: U+009B is CSI on some terminals), as
// valid UTF-8 for any input: an ESC before a non-ASCII character drops only the ESC, and
// ill-formed bytes become U+FFFD (common/utf8.h). C0 controls other than ESC stay (callers
// drop them or make them visible).
std::string StripAnsi(std::string_view text);

// `text` as valid UTF-8 with a backslash doubled and each character a terminal could act on
// or hide written as \n, \t, \r, \xNN (other C0 and DEL) or \uNNNN (C1, bidi and invisible
// format characters). Ill-formed bytes become U+FFFD.
std::string Visible(std::string_view text);

// `text` as valid UTF-8 (ill-formed bytes become U+FFFD, so no lone 0x9B byte is left) without
// C1 control characters; everything else, C0 controls too, is kept.
std::string WithoutC1(std::string_view text);

// Whether `text` holds anything a terminal may act on: a C0 control (ESC, BEL, CR, ...), DEL,
// a C1 control, or bytes that are not UTF-8. Names from a repository with one are not shown.
bool HasTerminalControl(std::string_view text);

// Columns one code point takes: 0 for controls and combining marks, 2 for wide (East Asian,
// emoji), else 1.
int CodePointWidth(char32_t c);

// Columns of one line of UTF-8 text once escapes are stripped (no newlines expected).
int DisplayWidth(std::string_view text);

// Decodes UTF-8; an invalid byte becomes U+FFFD, and so does the first byte of an overlong form,
// a surrogate or a code point past U+10FFFF (each of whose bytes then becomes one).
std::u32string DecodeUtf8(std::string_view text);

// `text` (one line, escapes allowed) cut into rows of at most `cols` columns at spaces, so
// no word is split unless it alone is wider than a row; escapes are kept where they were
// (taking no width) and wide characters are never split. Rows after the first start with
// `indent` (a list item's hanging indent). The spaces at a break are dropped. cols <= 0, or
// an indent that leaves no room: the text as one row.
std::vector<std::string> WrapText(std::string_view text, int cols, std::string_view indent = "");

// Rows a line of `width` columns takes when followed by a newline (an empty line is 1 row).
int RowsWhenEnded(int width, int cols);

// Where the cursor stands after `text` is written from column 0 by a line editor that wraps
// eagerly (libedit: a full row moves the cursor to the next one): the row, counted from 0.
// '\n' starts a new row, tabs go to the next multiple of 8, other controls show as ^X.
int EditorRowAfter(std::u32string_view text, int cols);

// The live area: lines kept at the bottom of the screen (the partial line of streamed text,
// running tool output, the spinner, a question) and redrawn in place, under the committed
// output that scrolls up normally. It remembers how many rows lie above the cursor, so that
// the next frame can erase them without redrawing anything above. A line editor's rows
// (libedit draws them itself) may follow the live lines.
class LiveArea {
 public:
  // Text that moves the cursor to the first row of the live area and clears to the end of
  // the screen. `editor_cursor_row` is the editor's own row of the cursor when an editor
  // is drawn below the lines (ignored otherwise). Widths are those of `cols` now: a resized
  // terminal may have rewrapped the rows, which is the best guess we have.
  std::string Erase(int cols, int editor_cursor_row) const;
  // Text that draws `lines` from the cursor (column 0). With `editor_follows` every line ends
  // with a newline and the cursor is left at column 0 for the editor; otherwise the cursor
  // stays at the end of the last line.
  std::string Draw(const std::vector<std::string>& lines, bool editor_follows, int cols);
  // Forget what was drawn (it scrolled away as committed output, or was erased by hand).
  void Reset();

  bool editor_below() const { return editor_below_; }
  // Rows between the first live row and the cursor at `cols` (the editor's not counted).
  int RowsAbove(int cols) const;

 private:
  std::vector<int> widths_;  // display widths of the lines last drawn
  bool editor_below_ = false;
};

}  // namespace agent::client
