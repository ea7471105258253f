#include "daemon/policy/bash_split.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace agent::daemon::policy {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Characters that end an unquoted word.
bool IsWordEnd(char c) {
  return IsBlank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' ||
         c == '(' || c == ')';
}

// Reserved words that may lead a simple command; what follows them is the command that runs.
constexpr std::array<std::string_view, 12> kLeadingKeywords = {
    "if", "then", "elif", "else", "while", "until", "do", "time", "!", "fi", "done", "esac"};

bool IsKeyword(std::string_view word) {
  return std::find(kLeadingKeywords.begin(), kLeadingKeywords.end(), word) !=
         kLeadingKeywords.end();
}

// Drops `word` and the blanks after it from the front of `text` when it is a whole word there.
bool StripWord(std::string_view word, std::string_view* text) {
  if (text->substr(0, word.size()) != word ||
      (text->size() != word.size() && !IsBlank((*text)[word.size()]))) {
    return false;
  }
  text->remove_prefix(word.size());
  while (!text->empty() && IsBlank(text->front())) text->remove_prefix(1);
  return true;
}

// Drops leading reserved words (and the blanks after them). Quoted words are never keywords,
// which is what bash does too.
std::string_view StripKeywords(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  bool stripped = true;
  while (stripped) {
    stripped = false;
    for (std::string_view kw : kLeadingKeywords) {
      if (StripWord(kw, &text)) {
        // `time -p cmd`: the option belongs to the keyword, not to the command.
        if (kw == "time" && StripWord("-p", &text)) StripWord("--", &text);
        stripped = true;
        break;
      }
    }
  }
  return text;
}

// One recursive-descent scanner over one string. Sub-parsers (backtick contents, here-document
// bodies) share the output vector and carry the nesting depth on.
//
// Output slots: a simple command reserves its slot in `out_` when its first character (or
// first substitution) is seen, so the outer command of `echo $(date)` comes before `date`.
// Commands that turn out empty leave an empty slot, dropped at the end.
class Parser {
 public:
  Parser(std::string_view src, int depth, std::vector<std::string>* out)
      : s_(src), depth_(depth), out_(out) {}

  // Parses the whole source as a command list.
  bool Run() {
    if (depth_ > kMaxNestingDepth) return Fail("nested too deeply");
    return ParseList(/*closer=*/0);
  }

  // Scans a here-document body: only substitutions (and backslash escapes) are special.
  bool RunHeredocBody() {
    if (depth_ > kMaxNestingDepth) return Fail("nested too deeply");
    while (!failed_ && i_ < s_.size()) {
      if (!StepExpandingText()) return false;
    }
    return !failed_;
  }

  // One step over text in which only backslash escapes and substitutions are special (double
  // quotes, here-document bodies, `${…}`, `$((…))`); substitutions inside emit their parts.
  bool StepExpandingText() {
    switch (s_[i_]) {
      case '\\':
        i_ += 2;
        return true;
      case '$':
        return SkipDollar(/*in_dquote=*/true);
      case '`':
        return SkipBacktick();
      default:
        ++i_;
        return true;
    }
  }

  const std::string& error() const { return error_; }

 private:
  struct Cmd {
    std::string text;
    int slot = -1;
    bool word_start = true;   // the next character starts a word (a `#` there is a comment)
    bool prev_redir = false;  // the previous character was an unquoted `<` or `>`
    // Kept up to date word by word so that "is this still the command position?" costs O(1)
    // (recomputing it per character would make `! ! ! …{{{` quadratic).
    bool only_keywords = true;  // every word before `word_begin` is a leading keyword
    size_t word_begin = 0;      // where the current unquoted word starts in `text`
  };

  struct Heredoc {
    std::string delimiter;
    bool strip_tabs = false;
    bool expand = false;  // unquoted delimiter: the body undergoes substitution
    int slot = -1;
  };

  // Counts one level of nesting for the lifetime of the guard.
  class Nest {
   public:
    explicit Nest(Parser* p) : p_(p) { ++p_->nest_; }
    ~Nest() { --p_->nest_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser* p_;
  };

  int Depth() const { return depth_ + nest_; }

  bool Fail(std::string why) {
    if (!failed_) {
      failed_ = true;
      error_ = std::move(why);
    }
    return false;
  }

  char At(size_t pos) const { return pos < s_.size() ? s_[pos] : '\0'; }

  void EnsureSlot(Cmd& cmd) {
    if (cmd.slot < 0) {
      cmd.slot = static_cast<int>(out_->size());
      out_->emplace_back();
    }
  }

  void Append(Cmd& cmd, std::string_view text) {
    EnsureSlot(cmd);
    cmd.text.append(text);
  }

  // Nothing but leading keywords so far: the next word is in command position.
  static bool CmdIsEmpty(const Cmd& cmd) {
    if (!cmd.only_keywords) return false;
    std::string_view word = std::string_view(cmd.text).substr(cmd.word_begin);
    return word.empty() || IsKeyword(word);
  }

  // At an unquoted blank or newline: the current word is complete.
  bool EndWord(Cmd& cmd) {
    std::string_view word = std::string_view(cmd.text).substr(cmd.word_begin);
    if (cmd.only_keywords && !word.empty() && !IsKeyword(word)) {
      // `case` patterns end in an unbalanced `)`, which this scanner cannot follow.
      if (word == "case") return Fail("case statements are not supported");
      cmd.only_keywords = false;
    }
    return true;
  }

  void FinishCmd(Cmd& cmd) {
    std::string_view text = StripKeywords(cmd.text);
    while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
    if (!text.empty()) {
      EnsureSlot(cmd);
      (*out_)[cmd.slot] = std::string(text);
    }
    cmd = Cmd();
  }

  // The construct starting at i_ has been scanned (emitting the parts inside it); its raw text
  // goes into the command's text verbatim.
  void AppendRawSince(Cmd& cmd, size_t start) {
    Append(cmd, s_.substr(start, i_ - start));
    cmd.word_start = false;
    cmd.prev_redir = false;
  }

  // Appends the next `n` characters as ordinary word text; `redir` when they end in a
  // redirection operator (so a following `&`, `|` or `(` belongs to it).
  void TakeChars(Cmd& cmd, size_t n, bool redir = false) {
    Append(cmd, s_.substr(i_, n));
    i_ += n;
    cmd.word_start = false;
    cmd.prev_redir = redir;
  }

  // Ends the current command at an operator `n` characters long.
  bool EndCommand(Cmd& cmd, size_t n) {
    i_ += n;
    FinishCmd(cmd);
    return true;
  }

  // A construct scanned by `skip` (which emits the parts inside it) whose raw text joins the
  // command verbatim. `reserve` gives the command its slot first, so it precedes its parts.
  template <typename Skip>
  bool TakeConstruct(Cmd& cmd, bool reserve, Skip skip) {
    const size_t start = i_;
    if (reserve) EnsureSlot(cmd);
    if (!skip()) return false;
    AppendRawSince(cmd, start);
    return true;
  }

  bool ParseList(char closer) {
    Cmd cmd;
    // Every step consumes at least one character or fails, so the loop is bounded by the
    // input length.
    while (!failed_) {
      if (i_ >= s_.size()) {
        if (closer != 0) return Fail("unterminated ( or $(");
        FinishCmd(cmd);
        if (!pending_.empty()) return Fail("unterminated here-document");
        return true;
      }
      if (s_[i_] == ')') {
        if (closer != ')') return Fail("unbalanced )");
        return EndCommand(cmd, 1);
      }
      if (!Step(cmd)) return false;
    }
    return false;
  }

  // One token of a command list (anything but its end).
  bool Step(Cmd& cmd) {
    const char next = At(i_ + 1);
    switch (s_[i_]) {
      case ' ':
      case '\t':
        return OnBlank(cmd);
      case '\n':
        if (!EndWord(cmd)) return false;
        EndCommand(cmd, 1);
        return ReadHeredocBodies();
      case ';':
        return EndCommand(cmd, 1);
      case '&':
        return OnAmpersand(cmd);
      case '|':
        if (cmd.prev_redir) {  // `>|file`
          TakeChars(cmd, 1);
          return true;
        }
        return EndCommand(cmd, (next == '|' || next == '&') ? 2 : 1);
      case '(':
        return OnOpenParen(cmd);
      case '`':
        return TakeConstruct(cmd, true, [&] { return SkipBacktick(); });
      case '\'':
        return TakeConstruct(cmd, false, [&] { return SkipSingleQuote(); });
      case '"':
        return TakeConstruct(cmd, true, [&] { return SkipDoubleQuote(); });
      case '$':
        return TakeConstruct(cmd, true, [&] { return SkipDollar(/*in_dquote=*/false); });
      case '\\':
        if (next == '\n') {  // line continuation: both characters vanish
          i_ += 2;
        } else {
          TakeChars(cmd, 2);
        }
        return true;
      case '#':
        if (cmd.word_start) {  // comment up to (not including) the newline
          while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        } else {  // a `#` inside a word leaves prev_redir as it was
          Append(cmd, "#");
          ++i_;
        }
        return true;
      case '<':
        return OnLess(cmd);
      case '>':
        TakeChars(cmd, 1, /*redir=*/true);
        return true;
      case '{':
        if (CmdIsEmpty(cmd) && (IsBlank(next) || next == '\n')) {  // group: braces vanish
          ++i_;
        } else {
          TakeChars(cmd, 1);
        }
        return true;
      case '}':
        if (CmdIsEmpty(cmd) && (i_ + 1 >= s_.size() || IsWordEnd(next))) return EndCommand(cmd, 1);
        TakeChars(cmd, 1);
        return true;
      default:
        TakeChars(cmd, 1);
        return true;
    }
  }

  bool OnBlank(Cmd& cmd) {
    if (!EndWord(cmd)) return false;
    if (!cmd.text.empty()) cmd.text.push_back(' ');
    cmd.word_begin = cmd.text.size();
    ++i_;
    cmd.word_start = true;
    cmd.prev_redir = false;
    return true;
  }

  bool OnAmpersand(Cmd& cmd) {
    const char next = At(i_ + 1);
    if (cmd.prev_redir) {  // `>&2`, `<&0`
      TakeChars(cmd, 1);
      return true;
    }
    if (next == '>') {  // `&>file`: the `>` comes next
      Append(cmd, "&");
      ++i_;
      cmd.word_start = false;
      return true;
    }
    return EndCommand(cmd, next == '&' ? 2 : 1);  // `&&` or background
  }

  bool OnOpenParen(Cmd& cmd) {
    if (cmd.prev_redir) {  // process substitution `<(…)` / `>(…)`
      return TakeConstruct(cmd, true, [&] {
        ++i_;
        return ParseNestedList();
      });
    }
    if (!CmdIsEmpty(cmd)) return Fail("`(` after a word (function definition or array)");
    if (At(i_ + 1) == '(') {  // `(( … ))`: arithmetic, read like `$(( … ))`
      return TakeConstruct(cmd, true, [&] { return SkipArithmetic(/*opener=*/2); });
    }
    FinishCmd(cmd);  // subshell
    ++i_;
    if (!ParseNestedList()) return false;
    cmd = Cmd();  // what follows `)` (redirections) is a part of its own
    return true;
  }

  bool OnLess(Cmd& cmd) {
    const char next = At(i_ + 1);
    if (next == '<' && At(i_ + 2) == '<') {  // here-string: a word follows
      TakeChars(cmd, 3);
      return true;
    }
    if (next == '<') return ParseHeredocOperator(cmd);
    TakeChars(cmd, 1, /*redir=*/true);
    return true;
  }

  // After `(`, `$(`, `<(`: the list up to the matching `)`, one level deeper.
  bool ParseNestedList() {
    Nest nest(this);
    if (Depth() > kMaxNestingDepth) return Fail("nested too deeply");
    return ParseList(')');
  }

  bool SkipSingleQuote() {
    const size_t close = s_.find('\'', i_ + 1);
    if (close == std::string_view::npos) return Fail("unterminated single quote");
    i_ = close + 1;
    return true;
  }

  bool SkipDoubleQuote() {
    ++i_;
    while (!failed_ && i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (!StepExpandingText()) return false;
    }
    return Fail("unterminated double quote");
  }

  // At `$`: command substitution, arithmetic, parameter expansion, $'…', $"…" or a plain `$`.
  bool SkipDollar(bool in_dquote) {
    const char next = At(i_ + 1);
    if (next == '(' && At(i_ + 2) == '(') return SkipArithmetic();
    if (next == '(') {
      i_ += 2;
      return ParseNestedList();
    }
    if (next == '{') return SkipParameterExpansion();
    if (next == '\'' && !in_dquote) {  // ANSI-C quoting: backslash escapes anything
      i_ += 2;
      while (i_ < s_.size()) {
        if (s_[i_] == '\\') {
          i_ += 2;
        } else if (s_[i_] == '\'') {
          ++i_;
          return true;
        } else {
          ++i_;
        }
      }
      return Fail("unterminated $' quote");
    }
    if (next == '"' && !in_dquote) {
      ++i_;
      return SkipDoubleQuote();
    }
    ++i_;
    return true;
  }

  // `${…}`. Quotes and braces inside it follow rules too quirky to mirror safely (bash's
  // differ by context), so they fail closed; substitutions inside are parts.
  bool SkipParameterExpansion() {
    Nest nest(this);
    if (Depth() > kMaxNestingDepth) return Fail("nested too deeply");
    i_ += 2;
    while (!failed_ && i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '}') {
        ++i_;
        return true;
      }
      if (c == '\'' || c == '"' || c == '{') {
        return Fail("quotes or braces inside ${...} are not supported");
      }
      if (!StepExpandingText()) return false;
    }
    return Fail("unterminated ${");
  }

  // `$((…))` (or, with `opener` 2, the `((…))` command): parentheses are counted;
  // substitutions inside are parts; quotes fail closed.
  bool SkipArithmetic(size_t opener = 3) {
    Nest nest(this);
    if (Depth() > kMaxNestingDepth) return Fail("nested too deeply");
    i_ += opener;
    size_t open = 0;
    while (!failed_ && i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '(') {
        ++open;
        ++i_;
      } else if (c == ')') {
        if (open > 0) {
          --open;
          ++i_;
        } else if (At(i_ + 1) == ')') {
          i_ += 2;
          return true;
        } else {
          // `$((a) …)` is a subshell inside a substitution in bash; too ambiguous to follow.
          return Fail("ambiguous $((");
        }
      } else if (c == '\'' || c == '"') {
        return Fail("quotes inside $((...)) are not supported");
      } else if (!StepExpandingText()) {
        return false;
      }
    }
    return Fail("unterminated $((");
  }

  // Backticks: the contents run to the next unescaped backtick; `\\`, "\`" and `\$` lose
  // their backslash before the contents are parsed as a command list of their own.
  bool SkipBacktick() {
    size_t j = i_ + 1;
    while (j < s_.size() && s_[j] != '`') j += (s_[j] == '\\') ? 2 : 1;
    if (j >= s_.size()) return Fail("unterminated backtick");
    std::string inner;
    inner.reserve(j - i_);
    for (size_t k = i_ + 1; k < j; ++k) {
      if (s_[k] == '\\' && k + 1 < j &&
          (s_[k + 1] == '\\' || s_[k + 1] == '`' || s_[k + 1] == '$')) {
        ++k;
      }
      inner.push_back(s_[k]);
    }
    Parser sub(inner, Depth() + 1, out_);
    if (!sub.Run()) return Fail(sub.error());
    i_ = j + 1;
    return true;
  }

  // At `<<` or `<<-`: reads the delimiter word and queues the body for the next newline.
  bool ParseHeredocOperator(Cmd& cmd) {
    const size_t start = i_;
    i_ += 2;
    Heredoc h;
    if (At(i_) == '-') {
      h.strip_tabs = true;
      ++i_;
    }
    while (i_ < s_.size() && IsBlank(s_[i_])) ++i_;
    bool quoted = false;
    while (i_ < s_.size() && !IsWordEnd(s_[i_])) {
      const char c = s_[i_];
      if (c == '\'') {
        const size_t close = s_.find('\'', i_ + 1);
        if (close == std::string_view::npos) {
          return Fail("unterminated quote in here-document word");
        }
        h.delimiter.append(s_.substr(i_ + 1, close - i_ - 1));
        i_ = close + 1;
        quoted = true;
      } else if (c == '"') {
        size_t k = i_ + 1;
        while (k < s_.size() && s_[k] != '"') {
          if (s_[k] == '\\' && k + 1 < s_.size()) ++k;
          h.delimiter.push_back(s_[k]);
          ++k;
        }
        if (k >= s_.size()) return Fail("unterminated quote in here-document word");
        i_ = k + 1;
        quoted = true;
      } else if (c == '\\') {
        if (i_ + 1 < s_.size()) h.delimiter.push_back(s_[i_ + 1]);
        i_ += 2;
        quoted = true;
      } else {
        h.delimiter.push_back(c);
        ++i_;
      }
    }
    if (h.delimiter.empty()) return Fail("here-document without a delimiter");
    h.expand = !quoted;
    i_ = std::min(i_, s_.size());
    AppendRawSince(cmd, start);
    h.slot = cmd.slot;
    pending_.push_back(std::move(h));
    return true;
  }

  // Just after a newline: the bodies of the here-documents queued on the line before, each up
  // to its delimiter line. The body and delimiter join the text of the command that asked.
  bool ReadHeredocBodies() {
    for (const Heredoc& h : pending_) {
      const size_t body_start = i_;
      size_t body_end = std::string_view::npos;
      while (i_ < s_.size()) {
        const size_t eol = s_.find('\n', i_);
        const size_t line_end = eol == std::string_view::npos ? s_.size() : eol;
        std::string_view line = s_.substr(i_, line_end - i_);
        if (h.strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        const size_t line_start = i_;
        i_ = eol == std::string_view::npos ? s_.size() : eol + 1;
        if (line == h.delimiter) {
          body_end = line_start;
          (*out_)[h.slot].append("\n").append(s_.substr(body_start, line_end - body_start));
          break;
        }
      }
      if (body_end == std::string_view::npos) return Fail("unterminated here-document");
      if (h.expand) {
        Parser sub(s_.substr(body_start, body_end - body_start), Depth() + 1, out_);
        if (!sub.RunHeredocBody()) return Fail(sub.error());
      }
    }
    pending_.clear();
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
  int nest_ = 0;
  std::vector<std::string>* out_;
  std::vector<Heredoc> pending_;
  bool failed_ = false;
  std::string error_;
};

}  // namespace

std::string NormalizeCommandWhitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  enum class Quote { kNone, kSingle, kDouble } quote = Quote::kNone;
  bool pending_space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == Quote::kNone && (c == ' ' || c == '\t' || c == '\n')) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) {
      out.push_back(' ');
      pending_space = false;
    }
    out.push_back(c);
    if (quote == Quote::kSingle) {
      if (c == '\'') quote = Quote::kNone;
    } else if (c == '\\' && i + 1 < text.size()) {
      out.push_back(text[++i]);
    } else if (quote == Quote::kDouble) {
      if (c == '"') quote = Quote::kNone;
    } else if (c == '\'') {
      quote = Quote::kSingle;
    } else if (c == '"') {
      quote = Quote::kDouble;
    }
  }
  return out;
}

std::string StripLeadingAssignments(std::string_view text) {
  // Each iteration removes one word or stops, so it is bounded by the text length.
  while (true) {
    size_t i = 0;
    while (i < text.size() && IsBlank(text[i])) ++i;
    const size_t name_start = i;
    while (i < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
    }
    if (i == name_start || i >= text.size() || text[i] != '=' ||
        std::isdigit(static_cast<unsigned char>(text[name_start]))) {
      break;
    }
    // The value: up to the next unquoted blank.
    ++i;
    char quote = 0;
    while (i < text.size() && (quote != 0 || !IsBlank(text[i]))) {
      const char c = text[i];
      if (quote == '\'') {
        if (c == '\'') quote = 0;
      } else if (c == '\\') {
        ++i;
      } else if (quote == '"') {
        if (c == '"') quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      }
      ++i;
    }
    if (i >= text.size()) return "";  // assignments only
    text.remove_prefix(i);
  }
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  return std::string(text);
}

std::optional<std::vector<std::string>> SubstitutionsIn(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  std::vector<std::string> slots;
  Parser parser(text, /*depth=*/0, &slots);
  if (!parser.RunHeredocBody()) return std::nullopt;
  std::vector<std::string> out;
  for (const std::string& slot : slots) {
    std::string part = NormalizeCommandWhitespace(slot);
    if (!part.empty()) out.push_back(std::move(part));
  }
  return out;
}

BashCommandParts ParseBashCommand(std::string_view command) {
  BashCommandParts result;
  std::vector<std::string> slots;
  Parser parser(command, /*depth=*/0, &slots);
  // bash receives the command as a C string: whatever follows a NUL byte is not what runs.
  const bool has_nul = command.find('\0') != std::string_view::npos;
  const bool ok = !has_nul && parser.Run();
  std::vector<std::string>& dest = ok ? result.parts : result.fragments;
  for (std::string& slot : slots) {
    if (slot.empty()) continue;
    std::string part = NormalizeCommandWhitespace(slot);
    if (!part.empty()) dest.push_back(std::move(part));
  }
  if (!ok) {
    result.exact_only = true;
    result.error = has_nul ? "NUL byte in command" : parser.error();
    std::string whole = NormalizeCommandWhitespace(command);
    if (!whole.empty()) result.parts.push_back(std::move(whole));
  }
  return result;
}

}  // namespace agent::daemon::policy
