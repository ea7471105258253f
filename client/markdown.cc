#include "client/markdown.h"

#include <cctype>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

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

// `restore` is what a span's end must switch back on (bold, when inside **…**).
std::string StyleSpans(std::string_view s, const char* restore) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '`') {
      size_t end = s.find('`', i + 1);
      if (end != std::string_view::npos && end > i + 1) {
        absl::StrAppend(&out, kCode, std::string(s.substr(i + 1, end - i - 1)), kReset, restore);
        i = end + 1;
        continue;
      }
    } else if (s.substr(i, 2) == "**") {
      size_t end = s.find("**", i + 2);
      if (end != std::string_view::npos && end > i + 2) {
        absl::StrAppend(&out, kBold, StyleSpans(s.substr(i + 2, end - i - 2), kBold), kReset,
                        restore);
        i = end + 2;
        continue;
      }
    }
    out += s[i];
    ++i;
  }
  return out;
}

}  // namespace

std::string StyleInline(std::string_view s) { return StyleSpans(s, ""); }

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
}

std::string MarkdownStyler::Code(std::string_view line) const {
  return absl::StrCat(kDim, "│ ", kReset, HighlightCode(line, lang_));
}

std::string MarkdownStyler::Prose(std::string_view line) const {
  size_t indent = LeadingSpaces(line);
  std::string_view rest = line.substr(indent);
  std::string pad(line.substr(0, indent));
  if (rest.empty()) return std::string(line);
  // Headings: "# x" … "###### x".
  size_t hashes = 0;
  while (hashes < rest.size() && rest[hashes] == '#') ++hashes;
  if (indent < 4 && hashes >= 1 && hashes <= 6 && hashes < rest.size() && rest[hashes] == ' ') {
    return absl::StrCat(pad, kHeading, StyleSpans(rest.substr(hashes + 1), kHeading), kReset);
  }
  // Rules: "---", "***", "___".
  if (rest.size() >= 3 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '_') &&
      rest.find_first_not_of(std::string(1, rest[0]) + " ") == std::string_view::npos) {
    return absl::StrCat(kDim, "────────────────────────────────", kReset);
  }
  // Bullets: "- x", "* x", "+ x".
  if (rest.size() >= 2 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+') && rest[1] == ' ') {
    return absl::StrCat(pad, kBold, "•", kReset, " ", StyleInline(rest.substr(2)));
  }
  // Numbered: "12. x" / "3) x".
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits > 0 && digits + 1 < rest.size() && (rest[digits] == '.' || rest[digits] == ')') &&
      rest[digits + 1] == ' ') {
    return absl::StrCat(pad, kBold, std::string(rest.substr(0, digits + 1)), kReset,
                        StyleInline(rest.substr(digits + 1)));
  }
  // Quotes: "> x".
  if (rest[0] == '>') {
    std::string_view q = rest.substr(1);
    if (!q.empty() && q[0] == ' ') q = q.substr(1);
    return absl::StrCat(pad, kDim, "│ ", StyleSpans(q, kDim), kReset);
  }
  return pad + StyleInline(rest);
}

std::string MarkdownStyler::Line(std::string_view line) {
  if (!color_) return std::string(line);
  std::string fence = FenceOf(line);
  if (in_code_) {
    // A closing fence is at least as long as the opening one, of the same character, alone.
    if (!fence.empty() && fence[0] == fence_[0] && fence.size() >= fence_.size() &&
        absl::StripAsciiWhitespace(std::string(line)).size() == fence.size()) {
      in_code_ = false;
      return absl::StrCat(kDim, "╰─", kReset);
    }
    return Code(line);
  }
  if (!fence.empty()) {
    in_code_ = true;
    fence_ = fence;
    std::string_view info = line.substr(line.find(fence) + fence.size());
    lang_ = std::string(absl::StripAsciiWhitespace(std::string(info)));
    size_t space = lang_.find(' ');
    if (space != std::string::npos) lang_.resize(space);
    return absl::StrCat(kDim, "╭─", lang_.empty() ? "" : " " + lang_, kReset);
  }
  return Prose(line);
}

std::string MarkdownStyler::Partial(std::string_view line) const {
  if (!color_) return std::string(line);
  if (in_code_) return Code(line);
  if (!FenceOf(line).empty()) return absl::StrCat(kDim, std::string(line), kReset);
  return Prose(line);
}

}  // namespace agent::client
