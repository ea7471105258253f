#include "client/text/markdown.h"

#include <cctype>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/terminal/terminal_text.h"
#include "client/text/markdown_table.h"

namespace agent::client {
namespace {

constexpr char kReset[] = "\x1b[0m";
constexpr char kBold[] = "\x1b[1m";
constexpr char kDim[] = "\x1b[2m";
constexpr char kCode[] = "\x1b[36m";  // inline code
constexpr char kKeyword[] = "\x1b[35m";
constexpr char kString[] = "\x1b[32m";
constexpr char kNumber[] = "\x1b[33m";
constexpr char kComment[] = "\x1b[2;3m";
constexpr char kHeading[] = "\x1b[1;34m";

size_t LeadingSpaces(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// "```lang" / "~~~": the fence characters, or "" when the line is not a fence.
std::string FenceOf(std::string_view line) {
  size_t i = LeadingSpaces(line);
  if (i > 3 || i >= line.size() || (line[i] != '`' && line[i] != '~')) return "";
  char c = line[i];
  size_t j = i;
  while (j < line.size() && line[j] == c) ++j;
  if (j - i < 3) return "";
  return std::string(j - i, c);
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

const std::set<std::string>& Keywords() {
  static const std::set<std::string>* k = new std::set<std::string>{
      "and",     "as",        "async",  "auto",    "await",     "bool",     "break",     "case",
      "catch",   "char",      "class",  "const",   "constexpr", "continue", "def",       "default",
      "defer",   "del",       "delete", "do",      "done",      "double",   "elif",      "else",
      "enum",    "esac",      "except", "export",  "extends",   "false",    "False",     "fi",
      "finally", "float",     "fn",     "for",     "from",      "func",     "function",  "go",
      "if",      "impl",      "import", "in",      "include",   "int",      "interface", "is",
      "lambda",  "let",       "long",   "match",   "mod",       "mut",      "namespace", "new",
      "nil",     "None",      "not",    "null",    "nullptr",   "or",       "package",   "pass",
      "private", "protected", "pub",    "public",  "raise",     "return",   "self",      "size_t",
      "static",  "std",       "string", "struct",  "switch",    "template", "then",      "this",
      "throw",   "true",      "True",   "try",     "type",      "typedef",  "typename",  "unsigned",
      "use",     "using",     "var",    "virtual", "void",      "while",    "with",      "yield"};
  return *k;
}

// Which comment markers a language uses: '#' (shell, Python …), "//" (C family …), "--".
bool HashComments(std::string_view lang) {
  static const std::set<std::string> kHash = {"python",     "py",   "sh",   "bash",     "shell",
                                              "zsh",        "ruby", "rb",   "yaml",     "yml",
                                              "toml",       "perl", "make", "makefile", "cmake",
                                              "dockerfile", "r",    "ini",  "conf",     "console"};
  return kHash.count(absl::AsciiStrToLower(std::string(lang))) > 0;
}
bool DashComments(std::string_view lang) {
  static const std::set<std::string> kDash = {"sql", "lua", "haskell", "hs"};
  return kDash.count(absl::AsciiStrToLower(std::string(lang))) > 0;
}

}  // namespace

namespace {

constexpr char kItalic[] = "\x1b[3m";
constexpr char kLink[] = "\x1b[4m";

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The end of an emphasis span opened by `marker` at `i` (the index of its closing marker),
// or npos. `*x*` anywhere; `_x_` only between non-word characters (snake_case stays).
size_t EmphasisEnd(std::string_view s, size_t i, char marker) {
  if (i + 1 >= s.size() || s[i + 1] == ' ' || s[i + 1] == marker) return std::string_view::npos;
  if (marker == '_' && i > 0 && IsAlnum(s[i - 1])) return std::string_view::npos;
  for (size_t j = s.find(marker, i + 1); j != std::string_view::npos; j = s.find(marker, j + 1)) {
    if (s[j - 1] == ' ') continue;
    if (j + 1 < s.size() && s[j + 1] == marker) {  // part of ** or __
      ++j;
      continue;
    }
    if (marker == '_' && j + 1 < s.size() && IsAlnum(s[j + 1])) continue;
    return j;
  }
  return std::string_view::npos;
}

struct Link {
  size_t end;  // index after the span
  std::string_view text, url;
};
// "[text](url)" at `i`.
std::optional<Link> LinkAt(std::string_view s, size_t i) {
  size_t close = s.find("](", i + 1);
  if (close == std::string_view::npos || close == i + 1) return std::nullopt;
  if (s.substr(i + 1, close - i - 1).find('[') != std::string_view::npos) return std::nullopt;
  size_t paren = s.find(')', close + 2);
  if (paren == std::string_view::npos || paren == close + 2) return std::nullopt;
  std::string_view url = s.substr(close + 2, paren - close - 2);
  if (url.find(' ') != std::string_view::npos) return std::nullopt;
  return Link{paren + 1, s.substr(i + 1, close - i - 1), url};
}

// `restore` is what a span's end must switch back on (bold, when inside **…**). Without
// `color` the markers go and nothing is switched.
std::string StyleSpans(std::string_view s, const char* restore, bool color) {
  std::string out;
  auto span = [&](const char* on, std::string_view inner, const char* inner_restore) {
    if (!color) return absl::StrAppend(&out, StyleSpans(inner, "", false));
    absl::StrAppend(&out, on, StyleSpans(inner, inner_restore, true), kReset, restore);
  };
  size_t i = 0;
  while (i < s.size()) {
    size_t end;
    if (s[i] == '`' && (end = s.find('`', i + 1)) != std::string_view::npos && end > i + 1) {
      std::string code(s.substr(i + 1, end - i - 1));
      color ? absl::StrAppend(&out, kCode, code, kReset, restore)
            : absl::StrAppend(&out, "`", code, "`");
      i = end + 1;
    } else if (s.substr(i, 2) == "**" && (end = s.find("**", i + 2)) != std::string_view::npos &&
               end > i + 2) {
      span(kBold, s.substr(i + 2, end - i - 2), kBold);
      i = end + 2;
    } else if ((s[i] == '*' || s[i] == '_') &&
               (end = EmphasisEnd(s, i, s[i])) != std::string_view::npos) {
      span(kItalic, s.substr(i + 1, end - i - 1), kItalic);
      i = end + 1;
    } else if (std::optional<Link> l = s[i] == '[' ? LinkAt(s, i) : std::nullopt) {
      span(kLink, l->text, kLink);
      if (l->url != l->text) {
        color ? absl::StrAppend(&out, kDim, " (", std::string(l->url), ")", kReset, restore)
              : absl::StrAppend(&out, " (", std::string(l->url), ")");
      }
      i = l->end;
    } else if (s.substr(i, 5) == "<http" && (end = s.find('>', i)) != std::string_view::npos &&
               s.substr(i, end - i).find(' ') == std::string_view::npos) {
      span(kLink, s.substr(i + 1, end - i - 1), kLink);
      i = end + 1;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace

std::string StyleInline(std::string_view s) { return StyleSpans(s, "", true); }
std::string PlainInline(std::string_view s) { return StyleSpans(s, "", false); }

std::string HighlightCode(std::string_view s, std::string_view lang) {
  std::string out;
  bool hash = HashComments(lang);
  bool dash = DashComments(lang);
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    bool comment =
        (c == '#' && hash) || (s.substr(i, 2) == "//" && !hash) || (s.substr(i, 2) == "--" && dash);
    if (comment) {
      absl::StrAppend(&out, kComment, std::string(s.substr(i)), kReset);
      break;
    }
    if (c == '"' || c == '\'' || c == '`') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
      size_t end = std::min(j + 1, s.size());
      absl::StrAppend(&out, kString, std::string(s.substr(i, end - i)), kReset);
      i = end;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) && (i == 0 || !IsWordChar(s[i - 1]))) {
      size_t j = i;
      while (j < s.size() && (IsWordChar(s[j]) || s[j] == '.')) ++j;
      absl::StrAppend(&out, kNumber, std::string(s.substr(i, j - i)), kReset);
      i = j;
      continue;
    }
    if (IsWordChar(c)) {
      size_t j = i;
      while (j < s.size() && IsWordChar(s[j])) ++j;
      std::string word(s.substr(i, j - i));
      if (Keywords().count(word)) {
        absl::StrAppend(&out, kKeyword, word, kReset);
      } else {
        out += word;
      }
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

void MarkdownStyler::Reset() {
  in_code_ = false;
  fence_.clear();
  lang_.clear();
  table_.clear();
}

std::string MarkdownStyler::Inline(std::string_view text) const {
  return mode_ == MarkdownMode::kColor ? StyleInline(text) : PlainInline(text);
}

std::string MarkdownStyler::Code(std::string_view line) const {
  if (mode_ != MarkdownMode::kColor) return absl::StrCat("│ ", std::string(line));
  return absl::StrCat(kDim, "│ ", kReset, HighlightCode(line, lang_));
}

std::string MarkdownStyler::Prose(std::string_view line) const {
  std::string out;
  for (const std::string& r : ProseRows(line)) out += out.empty() ? r : "\n" + r;
  return out;
}

// One line of prose as rows: styled, then wrapped with the hanging indent its kind wants.
std::vector<std::string> MarkdownStyler::ProseRows(std::string_view line) const {
  const bool color = mode_ == MarkdownMode::kColor;
  auto on = [color](const char* code) { return color ? code : ""; };
  const int cols = width_;
  size_t indent = LeadingSpaces(line);
  std::string_view rest = line.substr(indent);
  std::string pad(line.substr(0, indent));
  if (rest.empty()) return {std::string(line)};
  // Headings: "# x" … "###### x".
  size_t hashes = 0;
  while (hashes < rest.size() && rest[hashes] == '#') ++hashes;
  if (indent < 4 && hashes >= 1 && hashes <= 6 && hashes < rest.size() && rest[hashes] == ' ') {
    std::string text = color ? StyleSpans(rest.substr(hashes + 1), kHeading, true)
                             : PlainInline(rest.substr(hashes + 1));
    return WrapText(absl::StrCat(pad, on(kHeading), text, on(kReset)), cols, pad);
  }
  // Rules: "---", "***", "___".
  if (rest.size() >= 3 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '_') &&
      rest.find_first_not_of(std::string(1, rest[0]) + " ") == std::string_view::npos) {
    return {absl::StrCat(on(kDim), "────────────────────────────────", on(kReset))};
  }
  // Bullets: "- x", "* x", "+ x".
  if (rest.size() >= 2 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+') && rest[1] == ' ') {
    return WrapText(absl::StrCat(pad, on(kBold), "•", on(kReset), " ", Inline(rest.substr(2))),
                    cols, pad + "  ");
  }
  // Numbered: "12. x" / "3) x".
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits > 0 && digits + 1 < rest.size() && (rest[digits] == '.' || rest[digits] == ')') &&
      rest[digits + 1] == ' ') {
    return WrapText(absl::StrCat(pad, on(kBold), std::string(rest.substr(0, digits + 1)),
                                 on(kReset), Inline(rest.substr(digits + 1))),
                    cols, pad + std::string(digits + 2, ' '));
  }
  // Quotes: "> x".
  if (rest[0] == '>') {
    std::string_view q = rest.substr(1);
    if (!q.empty() && q[0] == ' ') q = q.substr(1);
    std::string gutter = absl::StrCat(pad, on(kDim), "│ ");
    std::string text = color ? StyleSpans(q, kDim, true) : PlainInline(q);
    return WrapText(absl::StrCat(gutter, text, on(kReset)), cols, gutter);
  }
  return WrapText(pad + Inline(rest), cols, pad);
}

std::string MarkdownStyler::Rows(const std::vector<std::string>& rows) const {
  std::string out;
  for (const std::string& r : rows) absl::StrAppend(&out, r, "\n");
  return out;
}

// The held lines as rows: a table once its delimiter came, else the lines as prose.
std::vector<std::string> MarkdownStyler::TableRows() const {
  std::vector<std::string> rows;
  if (table_.size() < 2) {
    for (const std::string& l : table_) {
      for (std::string& r : ProseRows(l)) rows.push_back(std::move(r));
    }
    return rows;
  }
  std::vector<std::vector<std::string>> cells;
  for (size_t i = 0; i < table_.size(); ++i) {
    if (i == 1) continue;  // the delimiter
    std::vector<std::string> row;
    for (const std::string& c : TableCells(table_[i])) row.push_back(Inline(c));
    cells.push_back(std::move(row));
  }
  int cols = width_;
  for (std::string& r :
       LayoutTable(cells, TableAlignments(table_[1]), mode_ == MarkdownMode::kColor, cols)) {
    for (std::string& w : WrapText(r, cols, "  ")) rows.push_back(std::move(w));
  }
  return rows;
}

std::string MarkdownStyler::Flush() {
  std::string out = Rows(TableRows());
  table_.clear();
  return out;
}

std::string MarkdownStyler::Line(std::string_view line) {
  if (mode_ == MarkdownMode::kRaw) return std::string(line) + "\n";
  std::string fence = FenceOf(line);
  if (in_code_) {
    // A closing fence is at least as long as the opening one, of the same character, alone.
    if (!fence.empty() && fence[0] == fence_[0] && fence.size() >= fence_.size() &&
        absl::StripAsciiWhitespace(std::string(line)).size() == fence.size()) {
      in_code_ = false;
      return absl::StrCat(mode_ == MarkdownMode::kColor ? kDim : "", "╰─",
                          mode_ == MarkdownMode::kColor ? kReset : "", "\n");
    }
    return Code(line) + "\n";
  }
  // A table: a row, then the delimiter, then rows; held until a line that is not a row.
  if (IsTableRow(line) && (table_.size() != 1 || IsTableDelimiter(line))) {
    table_.emplace_back(line);
    return "";
  }
  std::string out = Flush();
  if (IsTableRow(line)) {  // a row that did not start a table after all: maybe this one does
    table_.emplace_back(line);
    return out;
  }
  if (!fence.empty()) {
    in_code_ = true;
    fence_ = fence;
    std::string_view info = line.substr(line.find(fence) + fence.size());
    lang_ = std::string(absl::StripAsciiWhitespace(std::string(info)));
    size_t space = lang_.find(' ');
    if (space != std::string::npos) lang_.resize(space);
    bool color = mode_ == MarkdownMode::kColor;
    return absl::StrCat(out, color ? kDim : "", "╭─", lang_.empty() ? "" : " " + lang_,
                        color ? kReset : "", "\n");
  }
  return out + Rows(ProseRows(line));
}

std::string MarkdownStyler::Partial(std::string_view line) const {
  if (mode_ == MarkdownMode::kRaw) return std::string(line);
  if (in_code_) return Code(line);
  if (!FenceOf(line).empty()) {
    return mode_ == MarkdownMode::kColor ? absl::StrCat(kDim, std::string(line), kReset)
                                         : std::string(line);
  }
  return Prose(line);
}

std::vector<std::string> MarkdownStyler::Pending(std::string_view partial) const {
  // A long table streaming: its head and its last rows, so the live area fits a screen.
  constexpr size_t kHead = 3, kTail = 8;
  std::vector<std::string> rows = TableRows();
  if (rows.size() > kHead + kTail + 1) {
    std::string gap = absl::StrCat("  … ", rows.size() - kHead - kTail, " more rows");
    if (mode_ == MarkdownMode::kColor) gap = absl::StrCat(kDim, gap, kReset);
    rows.erase(rows.begin() + kHead, rows.end() - kTail);
    rows.insert(rows.begin() + kHead, gap);
  }
  if (partial.empty()) return rows;
  if (mode_ == MarkdownMode::kRaw || in_code_ || !FenceOf(partial).empty()) {
    rows.push_back(Partial(partial));
    return rows;
  }
  for (std::string& r : ProseRows(partial)) rows.push_back(std::move(r));
  return rows;
}

}  // namespace agent::client
