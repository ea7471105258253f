#include "daemon/policy/command_words.h"

#include <algorithm>

namespace agent::daemon::policy {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class WordScanner {
 public:
  explicit WordScanner(std::string_view s) : s_(s) {}

  // The target words of the output redirections seen by Run (`> f`, `>> f`, `&> f`, `2> f`,
  // `>| f`, `<> f`), in order.
  std::vector<ShellWord> TakeOutputTargets() { return std::move(targets_); }

  std::vector<ShellWord> Run() {
    // Each step consumes at least one character.
    while (i_ < s_.size() && s_[i_] != '\n') {
      const char c = s_[i_];
      if (c == ' ' || c == '\t') {
        Flush();
        ++i_;
      } else if ((c == '<' || c == '>') && At(i_ + 1) != '(') {
        SkipRedirection();
      } else {
        ScanChar();
      }
    }
    Flush();
    return std::move(words_);
  }

 private:
  char At(size_t pos) const { return pos < s_.size() ? s_[pos] : '\0'; }

  void Flush() {
    if (in_word_) {
      // `[…]` is a glob; `{a,b}` and `{1..3}` are brace expansions (`[`, `[[`, `{}` are not).
      const std::string& v = word_.value;
      if (open_bracket_ != std::string::npos && v.find(']', open_bracket_) != std::string::npos) {
        word_.globs = true;
      }
      if (open_brace_ != std::string::npos) {
        const size_t close = v.find('}', open_brace_);
        const std::string_view inside = std::string_view(v).substr(
            open_brace_, close == std::string::npos ? 0 : close - open_brace_);
        if (inside.find(',') != std::string_view::npos ||
            inside.find("..") != std::string_view::npos) {
          word_.globs = true;
        }
      }
      words_.push_back(std::move(word_));
    }
    word_ = ShellWord();
    in_word_ = false;
    open_bracket_ = open_brace_ = std::string::npos;
  }

  // One character (or quoted run, or expansion) of a word.
  void ScanChar() {
    in_word_ = true;
    const char c = s_[i_];
    switch (c) {
      case '\'': {
        word_.quoted = true;
        size_t close = s_.find('\'', i_ + 1);
        if (close == std::string_view::npos) close = s_.size();
        word_.value.append(s_.substr(i_ + 1, close - i_ - 1));
        i_ = close + 1;
        return;
      }
      case '"':
        word_.quoted = true;
        ScanDoubleQuoted();
        return;
      case '\\':
        word_.quoted = true;
        if (i_ + 1 < s_.size()) word_.value.push_back(s_[i_ + 1]);
        i_ += 2;
        return;
      case '$':
        if (At(i_ + 1) == '\'') {
          word_.quoted = true;
          ScanAnsiC();
        } else if (At(i_ + 1) == '"') {
          ++i_;  // $"…" is a double-quoted string
        } else {
          CopyExpansion();
        }
        return;
      case '`':
      case '<':  // process substitution
      case '>':
        CopyExpansion();
        return;
      case '*':
      case '?':
        word_.globs = true;
        break;
      case '[':
      case '{':  // a glob or brace expansion only with its closer (Flush decides)
        if (c == '[' && open_bracket_ == std::string::npos) open_bracket_ = word_.value.size();
        if (c == '{' && open_brace_ == std::string::npos) open_brace_ = word_.value.size();
        break;
      default:
        break;
    }
    word_.value.push_back(c);
    ++i_;
  }

  void ScanDoubleQuoted() {
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      const char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size() &&
          std::string_view("$`\"\\\n").find(s_[i_ + 1]) != std::string_view::npos) {
        if (s_[i_ + 1] != '\n') word_.value.push_back(s_[i_ + 1]);
        i_ += 2;
      } else if (c == '$' || c == '`') {
        CopyExpansion();
      } else {
        word_.value.push_back(c);
        ++i_;
      }
    }
    ++i_;
  }

  // `$…`, backticks, `<(…)`, `>(…)`: copied as written, balanced brackets and quotes included.
  void CopyExpansion() {
    word_.expands = true;
    const size_t start = i_;
    const char c = s_[i_];
    if (c == '`') {
      size_t j = i_ + 1;
      while (j < s_.size() && s_[j] != '`') j += (s_[j] == '\\') ? 2 : 1;
      i_ = std::min(j + 1, s_.size());
    } else if (c != '$' || At(i_ + 1) == '(' || At(i_ + 1) == '{') {
      i_ += (c == '$') ? 1 : 0;
      SkipBalanced();
    } else {
      ++i_;  // `$name`: the name follows as ordinary characters
    }
    word_.value.append(s_.substr(start, i_ - start));
  }

  // At `(` or `{`: past the matching closer, skipping quoted text.
  void SkipBalanced() {
    size_t depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\\') {
        i_ += 2;
        continue;
      }
      if (c == '\'' || c == '"') {
        size_t close = s_.find(c, i_ + 1);
        i_ = close == std::string_view::npos ? s_.size() : close + 1;
        continue;
      }
      ++i_;
      if (c == '(' || c == '{') ++depth;
      if ((c == ')' || c == '}') && --depth == 0) return;
    }
    i_ = std::min(i_, s_.size());
  }

  // `$'…'`: the escapes bash decodes there.
  void ScanAnsiC() {
    i_ += 2;
    while (i_ < s_.size() && s_[i_] != '\'') {
      if (s_[i_] != '\\' || i_ + 1 >= s_.size()) {
        word_.value.push_back(s_[i_++]);
        continue;
      }
      const char e = s_[i_ + 1];
      i_ += 2;
      switch (e) {
        case 'a':
          word_.value.push_back('\a');
          break;
        case 'b':
          word_.value.push_back('\b');
          break;
        case 'e':
        case 'E':
          word_.value.push_back('\x1b');
          break;
        case 'f':
          word_.value.push_back('\f');
          break;
        case 'n':
          word_.value.push_back('\n');
          break;
        case 'r':
          word_.value.push_back('\r');
          break;
        case 't':
          word_.value.push_back('\t');
          break;
        case 'v':
          word_.value.push_back('\v');
          break;
        case '\\':
        case '\'':
        case '"':
        case '?':
          word_.value.push_back(e);
          break;
        case 'x':
          DecodeNumber(16, 2, 0);
          break;
        default:
          if (e >= '0' && e <= '7') {
            DecodeNumber(8, 3, e - '0');
          } else {
            word_.unsure = true;  // \u, \U, \c and the unknown
            word_.value.push_back('\\');
            word_.value.push_back(e);
          }
      }
    }
    ++i_;
  }

  // Up to `max` more digits in `base` after the escape, `value` the first one's (octal).
  void DecodeNumber(int base, int max, int value) {
    int digits = base == 8 ? 1 : 0;
    while (digits < max && i_ < s_.size()) {
      const int d = HexValue(s_[i_]);
      if (d < 0 || d >= base) break;
      value = value * base + d;
      ++i_;
      ++digits;
    }
    if (digits == 0) {
      word_.unsure = true;
      return;
    }
    word_.value.push_back(static_cast<char>(value & 0xff));
  }

  // At an unquoted `<` or `>`: the operator, with a file-descriptor number just before it,
  // and its target word are no arguments of the command.
  void SkipRedirection() {
    // `2>`, and the `&` of `&>` (an ordinary character to this scanner).
    const bool fd_number =
        in_word_ && !word_.quoted && !word_.expands && !word_.globs && !word_.value.empty() &&
        (word_.value == "&" || word_.value.find_first_not_of("0123456789") == std::string::npos);
    if (fd_number) {
      Discard();
    } else {
      Flush();
    }
    bool writes = false;
    while (i_ < s_.size() && std::string_view("<>&|-").find(s_[i_]) != std::string_view::npos) {
      writes = writes || s_[i_] == '>';
      ++i_;
    }
    if (s_[i_ - 1] == '&' || s_[i_ - 1] == '-') {  // `>&2`, `2>&-`: the target is attached
      const size_t start = i_;
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
      if (i_ < s_.size() && s_[i_] == '-') ++i_;
      if (i_ > start && (i_ >= s_.size() || s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) {
        return;
      }
    }
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    // The target: one word, scanned like any other and dropped (kept aside when written to).
    while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '\t' && s_[i_] != '\n') ScanChar();
    if (writes && in_word_) targets_.push_back(word_);
    Discard();
  }

  void Discard() {
    word_ = ShellWord();
    in_word_ = false;
    open_bracket_ = open_brace_ = std::string::npos;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<ShellWord> words_;
  std::vector<ShellWord> targets_;
  ShellWord word_;
  bool in_word_ = false;
  size_t open_bracket_ = std::string::npos;  // first unquoted `[` / `{` in word_.value
  size_t open_brace_ = std::string::npos;
};

}  // namespace

std::vector<ShellWord> SplitWords(std::string_view part) { return WordScanner(part).Run(); }

bool TargetMayLeaveProject(const ShellWord& t) {
  if (t.expands || t.globs || t.unsure || t.value.empty()) return true;
  const std::string& v = t.value;
  if (v == "/dev/null" || v == "/dev/stdout" || v == "/dev/stderr") return false;
  if (v.rfind("/dev/fd/", 0) == 0 && v.size() > 8 &&
      v.find_first_not_of("0123456789", 8) == std::string::npos) {
    return false;
  }
  if (v.front() == '/' || v.front() == '~') return true;
  const std::string padded = "/" + v + "/";
  return padded.find("/../") != std::string::npos;
}

std::vector<ShellWord> OutputRedirectionTargets(std::string_view part) {
  WordScanner scanner(part);
  scanner.Run();
  return scanner.TakeOutputTargets();
}

}  // namespace agent::daemon::policy
