#include "client/terminal/terminal_text.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "client/terminal/show_controls.h"
#include "common/utf8.h"

namespace agent::client {
namespace {

struct Range {
  char32_t first;
  char32_t last;
};

// Combining marks and other zero-width code points (the common blocks).
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489},   {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A},   {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F},
    {0x202A, 0x202E}, {0x2060, 0x2064},   {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

// Wide: East Asian Wide/Fullwidth blocks and the emoji planes.
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F5},   {0x26FA, 0x26FD},
    {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},   {0x274C, 0x274C},
    {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
    {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
    {0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB},
    {0x1F900, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x3FFFD},
};

template <size_t N>
bool In(const Range (&table)[N], char32_t c) {
  auto it = std::upper_bound(std::begin(table), std::end(table), c,
                             [](char32_t v, const Range& r) { return v < r.first; });
  if (it == std::begin(table)) return false;
  --it;
  return c >= it->first && c <= it->last;
}

// Characters that reorder or hide text on a terminal without being controls.
bool InvisibleFormat(char32_t c) {
  return c == 0x061C || c == 0x00AD || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x2069) || c == 0xFEFF;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string Hex(const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// `c` as text shows it: a control character, a C1 control or an invisible format character as
// an escape, any other as itself.
void AppendShown(char32_t c, std::string* out) {
  if (c < 0x20 || c == 0x7F) {
    *out += Hex("\\x%02x", static_cast<unsigned>(c));
  } else if ((c >= 0x80 && c <= 0x9F) || InvisibleFormat(c)) {
    *out += Hex("\\u%04x", static_cast<unsigned>(c));
  } else {
    AppendUtf8(c, out);
  }
}

}  // namespace

std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out += s[i];
      continue;
    }
    if (i + 1 >= s.size()) break;
    const unsigned char kind = static_cast<unsigned char>(s[i + 1]);
    if (kind == '[') {
      // CSI: parameter and intermediate bytes (0x20-0x3F, ASCII), then a final byte
      // 0x40-0x7E. Anything else ends the sequence unconsumed, so a character after a cut
      // sequence is never swallowed in part.
      size_t j = i + 2;
      while (j < s.size() && s[j] >= 0x20 && s[j] <= 0x3F) ++j;
      i = (j < s.size() && s[j] >= 0x40 && s[j] <= 0x7E) ? j : j - 1;
    } else if (kind == ']') {  // OSC: up to BEL or ST, all of it dropped
      size_t j = i + 2;
      while (j < s.size() && s[j] != '\x07' &&
             !(s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\'))
        ++j;
      i = (j < s.size() && s[j] == '\x1b') ? j + 1 : j;
    } else if (kind < 0x80) {
      i += 1;  // a two-byte escape
    }
    // else: ESC before a non-ASCII byte: only the ESC goes, the character stays whole.
  }
  // The text itself may hold ill-formed bytes (tool output, a cut stream): the terminal gets
  // U+FFFD for them, as everywhere else (common/utf8.h).
  return WithoutC1(out);
}

std::string WithoutC1(std::string_view s) {
  std::string out = ToValidUtf8(s);
  // C1 controls (U+0080-U+009F) are the 8-bit forms of escapes: U+009B is CSI and U+009D OSC
  // on terminals that take them. In valid UTF-8 each is C2 80..9F.
  if (out.find('\xC2') == std::string::npos) return out;
  size_t kept = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\xC2' && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) <= 0x9F) {
      ++i;
      continue;
    }
    out[kept++] = out[i];
  }
  out.resize(kept);
  return out;
}

bool HasTerminalControl(std::string_view s) {
  const bool c0 = std::any_of(s.begin(), s.end(), [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
  return c0 || WithoutC1(s) != s;
}

std::u32string DecodeUtf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out += U'\uFFFD';
      ++i;
      continue;
    }
    char32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      unsigned char cb = static_cast<unsigned char>(s[i + k]);
      if ((cb & 0xC0) != 0x80) {
        ok = false;
        break;
      }
      c = (c << 6) | (cb & 0x3F);
    }
    // Overlong forms (C0 AF for '/'), surrogates and code points past U+10FFFF are not UTF-8:
    // shown as they decode they would put a character on screen the bytes do not hold.
    static constexpr char32_t kLeast[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok && (c < kLeast[len] || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)) ok = false;
    if (!ok) {
      out += U'\uFFFD';
      ++i;
      continue;
    }
    out += c;
    i += len;
  }
  return out;
}

std::string Visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : DecodeUtf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      AppendShown(c, &out);
    }
  }
  return out;
}

std::string ShowControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : DecodeUtf8(text)) {
    if (c == '\n' || c == '\t') {
      out += static_cast<char>(c);
    } else {
      AppendShown(c, &out);
    }
  }
  return out;
}

int CodePointWidth(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c < 0xA0)) return 0;
  if (c < 0x300) return 1;
  if (In(kZeroWidth, c)) return 0;
  if (In(kWide, c)) return 2;
  return 1;
}

int DisplayWidth(std::string_view text) {
  int w = 0;
  for (char32_t c : DecodeUtf8(StripAnsi(text))) w += CodePointWidth(c);
  return w;
}

namespace {

// Bytes of the escape at `s[i]` (an ESC), as StripAnsi reads them.
size_t EscapeLength(std::string_view s, size_t i) {
  if (i + 1 >= s.size()) return 1;
  if (s[i + 1] == '[') {
    size_t j = i + 2;
    while (j < s.size() && s[j] >= 0x20 && s[j] <= 0x3F) ++j;
    return (j < s.size() && s[j] >= 0x40 && s[j] <= 0x7E ? j + 1 : j) - i;
  }
  if (s[i + 1] == ']') {
    size_t j = i + 2;
    while (j < s.size() && s[j] != '\x07' &&
           !(s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\'))
      ++j;
    return std::min(s.size(), j + (j < s.size() && s[j] == '\x1b' ? 2 : 1)) - i;
  }
  return static_cast<unsigned char>(s[i + 1]) < 0x80 ? 2 : 1;
}

size_t Utf8Length(unsigned char b) { return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

}  // namespace

std::vector<std::string> WrapText(std::string_view text, int cols, std::string_view indent) {
  const int indent_w = DisplayWidth(indent);
  if (cols <= 0 || indent_w >= cols / 2 || DisplayWidth(text) <= cols) {
    return {std::string(text)};
  }
  std::vector<std::string> rows;
  std::string cur;
  int cur_w = 0;
  size_t space = std::string::npos;  // the last space in `cur` a row may end at
  int w_before_space = 0;
  // The styles (SGR) in effect: a row ends with a reset and the next starts them again
  // after its indent, so an underline or a colour never runs into the indent.
  std::string active, active_at_space;
  auto end_row = [&](std::string row, const std::string& styles) {
    while (!row.empty() && row.back() == ' ') row.pop_back();
    if (!styles.empty()) row += "\x1b[0m";
    rows.push_back(std::move(row));
  };
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      std::string_view esc = text.substr(i, EscapeLength(text, i));
      cur.append(esc);
      i += esc.size();
      if (esc.size() >= 3 && esc[1] == '[' && esc.back() == 'm') {
        if (esc == "\x1b[0m" || esc == "\x1b[m") {
          active.clear();
        } else {
          active.append(esc);
        }
      }
      continue;
    }
    size_t n = std::min(Utf8Length(static_cast<unsigned char>(text[i])), text.size() - i);
    std::string_view ch = text.substr(i, n);
    i += n;
    int w = DisplayWidth(ch);
    if (cur_w + w > cols && ch != " ") {
      if (space != std::string::npos) {  // break at the last space
        std::string rest = cur.substr(space + 1);
        cur.resize(space);
        end_row(std::move(cur), active_at_space);
        cur = std::string(indent) + active_at_space + rest;
        cur_w = indent_w + (cur_w - w_before_space - 1);
      } else {  // a word wider than a row
        end_row(std::move(cur), active);
        cur = std::string(indent) + active;
        cur_w = indent_w;
      }
      space = std::string::npos;
    }
    if (ch == " " && cur_w > indent_w) {
      space = cur.size();
      w_before_space = cur_w;
      active_at_space = active;
    }
    cur.append(ch);
    cur_w += w;
  }
  rows.push_back(std::move(cur));
  return rows;
}

int RowsWhenEnded(int width, int cols) {
  if (cols <= 0) cols = 80;
  if (width <= 0) return 1;
  return (width + cols - 1) / cols;
}

int EditorRowAfter(std::u32string_view text, int cols) {
  if (cols <= 0) cols = 80;
  int row = 0, col = 0;
  auto put = [&](int w) {
    if (w == 0) return;
    if (col + w > cols) {  // a wide character that does not fit starts the next row
      ++row;
      col = 0;
    }
    col += w;
    if (col >= cols) {
      ++row;
      col = 0;
    }
  };
  for (char32_t c : text) {
    if (c == U'\n') {
      ++row;
      col = 0;
    } else if (c == U'\t') {
      put(8 - col % 8);
    } else if (c < 0x20 || c == 0x7F) {
      put(2);  // ^X
    } else {
      put(CodePointWidth(c));
    }
  }
  return row;
}

int LiveArea::RowsAbove(int cols) const {
  if (widths_.empty()) return 0;
  int rows = 0;
  for (size_t i = 0; i < widths_.size(); ++i) {
    bool last = i + 1 == widths_.size();
    if (!last || editor_below_) {
      rows += RowsWhenEnded(widths_[i], cols);
    } else {
      // The cursor stays on the last row of the last line (a full row leaves it pending at
      // the right margin, not on the next row).
      int c = cols <= 0 ? 80 : cols;
      rows += widths_[i] <= 0 ? 0 : (widths_[i] - 1) / c;
    }
  }
  return rows;
}

std::string LiveArea::Erase(int cols, int editor_cursor_row) const {
  int up = RowsAbove(cols) + (editor_below_ ? editor_cursor_row : 0);
  if (widths_.empty() && !editor_below_) return "";
  std::string out = "\r";
  if (up > 0) absl::StrAppend(&out, "\x1b[", up, "A");
  out += "\x1b[J";
  return out;
}

std::string LiveArea::Draw(const std::vector<std::string>& lines, bool editor_follows, int cols) {
  (void)cols;
  std::string out;
  widths_.clear();
  editor_below_ = editor_follows;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    widths_.push_back(DisplayWidth(lines[i]));
    if (i + 1 < lines.size() || editor_follows) out += "\r\n";
  }
  return out;
}

void LiveArea::Reset() {
  widths_.clear();
  editor_below_ = false;
}

}  // namespace agent::client
