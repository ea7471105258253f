#include "client/line_editor.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cwchar>
#include <functional>

#include "absl/strings/str_format.h"
#include "client/terminal_text.h"
#include "client/tty.h"
#include "common/atomic_file.h"
#include "common/paths.h"

namespace agent::client {
namespace {

constexpr wchar_t kQuotedInsert = 0x16;  // ^V: libedit inserts the next character as it is
constexpr wchar_t kEofKey = 0x04;        // ^D

std::string Narrow(const wchar_t* begin, const wchar_t* end) {
  std::string out;
  std::mbstate_t st{};
  char buf[MB_LEN_MAX];
  for (const wchar_t* p = begin; p < end; ++p) {
    size_t n = std::wcrtomb(buf, *p, &st);
    if (n != static_cast<size_t>(-1)) out.append(buf, n);
  }
  return out;
}

std::u32string Wide32(const wchar_t* begin, const wchar_t* end) {
  std::u32string out;
  for (const wchar_t* p = begin; p < end; ++p) out += static_cast<char32_t>(*p);
  return out;
}

}  // namespace

LineEditor::LineEditor(const std::string& project_dir) {
  std::string dir = StateDir() + "/history";
  (void)MakeDirs(dir);
  history_path_ = absl::StrFormat("%s/%016x", dir, std::hash<std::string>{}(project_dir));
  hist_ = history_init();
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, 1000);
  history(hist_, &ev, H_SETUNIQUE, 1);
  history(hist_, &ev, H_LOAD, history_path_.c_str());

  el_ = el_init("agent", stdin, stdout, stderr);
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_SIGNAL, 0);  // the UI's loop handles SIGINT, SIGWINCH, SIGTSTP
  el_set(el_, EL_PROMPT_ESC, &LineEditor::Prompt, '\1');
  el_set(el_, EL_HIST, history, hist_);
  el_set(el_, EL_GETCFN, &LineEditor::ReadChar);
  // What readline users expect, beyond libedit's emacs map.
  el_set(el_, EL_BIND, "^R", "em-inc-search-prev", nullptr);
  el_set(el_, EL_BIND, "\\e[1~", "ed-move-to-beg", nullptr);
  el_set(el_, EL_BIND, "\\e[4~", "ed-move-to-end", nullptr);
  el_set(el_, EL_BIND, "\\e[H", "ed-move-to-beg", nullptr);
  el_set(el_, EL_BIND, "\\e[F", "ed-move-to-end", nullptr);
  el_set(el_, EL_BIND, "\\e[3~", "ed-delete-next-char", nullptr);
  el_set(el_, EL_BIND, "\\e[1;5C", "em-next-word", nullptr);
  el_set(el_, EL_BIND, "\\e[1;5D", "ed-prev-word", nullptr);
  // Only the user's own ~/.editrc: el_source(NULL) would also read one from the project.
  if (const char* home = std::getenv("HOME")) {
    std::string rc = std::string(home) + "/.editrc";
    if (::access(rc.c_str(), R_OK) == 0) el_source(el_, rc.c_str());
  }
}

LineEditor::~LineEditor() {
  Stop();
  el_end(el_);
  history_end(hist_);
}

char* LineEditor::Prompt(EditLine* el) {
  LineEditor* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  static char empty[] = "";
  if (self == nullptr || self->hidden_) return empty;
  return self->prompt_.data();
}

void LineEditor::SetPrompt(const std::string& prompt) { prompt_ = prompt; }

bool LineEditor::Start() {
  if (started_) return true;
  if (!isatty(0) || !isatty(1)) return false;
  hidden_ = false;
  finished_rows_ = 0;
  el_set(el_, EL_UNBUFFERED, 1);  // raw mode, and draws the prompt
  started_ = true;
  return true;
}

void LineEditor::Stop() {
  if (!started_) return;
  hidden_ = true;
  el_set(el_, EL_UNBUFFERED, 0);  // cooked mode again
  started_ = false;
}

void LineEditor::Redraw() {
  hidden_ = false;
  finished_rows_ = 0;
  if (started_) el_set(el_, EL_REFRESH);
}

void LineEditor::Resized() { el_resize(el_); }

int LineEditor::CursorRow(int cols) const {
  if (!started_) return 0;
  if (hidden_) return finished_rows_;
  const LineInfoW* li = el_wline(el_);
  std::u32string text;
  for (char32_t c : DecodeUtf8(StripPromptMarkers())) text += c;
  text += Wide32(li->buffer, li->cursor);
  return EditorRowAfter(text, cols);
}

int LineEditor::Rows(int cols) const {
  if (!started_) return 0;
  if (hidden_) return finished_rows_;
  const LineInfoW* li = el_wline(el_);
  std::u32string text;
  for (char32_t c : DecodeUtf8(StripPromptMarkers())) text += c;
  text += Wide32(li->buffer, li->lastchar);
  return EditorRowAfter(text, cols) + 1;
}

std::string LineEditor::StripPromptMarkers() const {
  // Between "\1" markers are escapes of no width.
  std::string out;
  bool in = false;
  for (char c : prompt_) {
    if (c == '\1') {
      in = !in;
    } else if (!in) {
      out += c;
    }
  }
  return StripAnsi(out);
}

std::string LineEditor::Text() const {
  const LineInfoW* li = el_wline(el_);
  return Narrow(li->buffer, li->lastchar);
}

void LineEditor::Clear() {
  const LineInfoW* li = el_wline(el_);
  int after = static_cast<int>(li->lastchar - li->cursor);
  int len = static_cast<int>(li->lastchar - li->buffer);
  el_cursor(el_, after);
  if (len > 0) el_deletestr(el_, len);
}

void LineEditor::SetText(const std::string& text) {
  Clear();
  if (!text.empty()) el_insertstr(el_, text.c_str());
}

void LineEditor::AddHistory(const std::string& line) {
  HistEvent ev;
  history(hist_, &ev, H_ENTER, line.c_str());
  history(hist_, &ev, H_SAVE, history_path_.c_str());
}

int LineEditor::ReadChar(EditLine* el, wchar_t* out) {
  LineEditor* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  return self->NextChar(out);
}

// Hands libedit one character: from what was pushed back, else from the bytes fed, else
// (the rest of a sequence or of a UTF-8 character) read from the terminal, blocking.
int LineEditor::NextChar(wchar_t* out) {
  if (!pushed_.empty()) {
    *out = pushed_.front();
    pushed_.pop_front();
    return 1;
  }
  std::mbstate_t st{};
  std::string bytes;
  for (;;) {
    if (input_.empty()) {
      char buf[256];
      ssize_t n = ::read(0, buf, sizeof buf);
      if (n < 0 && errno == EINTR) return -1;  // a signal: let the loop see it
      if (n <= 0) {
        eof_ = true;
        return 0;
      }
      input_.insert(input_.end(), buf, buf + n);
    }
    bytes += input_.front();
    input_.pop_front();
    wchar_t wc;
    st = std::mbstate_t{};
    size_t r = std::mbrtowc(&wc, bytes.data(), bytes.size(), &st);
    if (r == static_cast<size_t>(-2)) continue;  // incomplete: one more byte
    if (r == static_cast<size_t>(-1)) {          // invalid: drop it
      bytes.clear();
      continue;
    }
    if (wc == L'\r' || wc == L'\n') {
      if (!input_.empty()) {
        // More input is already here: a paste. The newline is text, not Enter.
        *out = kQuotedInsert;
        pushed_.push_back(L'\n');
        return 1;
      }
      submitted_ = true;
    }
    last_was_eof_key_ = wc == kEofKey;
    *out = wc;
    return 1;
  }
}

void LineEditor::ResetLine() {
  // Leaving and re-entering unbuffered mode empties libedit's line; hidden, it draws nothing.
  hidden_ = true;
  el_set(el_, EL_UNBUFFERED, 0);
  el_set(el_, EL_UNBUFFERED, 1);
}

std::vector<LineEditor::Result> LineEditor::Feed(const std::string& bytes) {
  std::vector<Result> results;
  input_.insert(input_.end(), bytes.begin(), bytes.end());
  // Bounded: every call consumes at least one byte or ends the input.
  while ((!input_.empty() || !pushed_.empty()) && !eof_) {
    submitted_ = false;
    last_was_eof_key_ = false;
    int n = 0;
    const wchar_t* line = el_wgets(el_, &n);
    const LineInfoW* li = el_wline(el_);
    std::wstring text(li->buffer, li->lastchar);
    (void)line;
    if (submitted_ && !text.empty() && text.back() == L'\n') {
      text.pop_back();
      // libedit went below the line and wrote a newline: the cursor is under the line.
      std::u32string shown;
      for (char32_t c : DecodeUtf8(StripPromptMarkers())) shown += c;
      shown += Wide32(text.data(), text.data() + text.size());
      finished_rows_ = EditorRowAfter(shown, TerminalColumns()) + 1;
      results.push_back({Result::kLine, Narrow(text.data(), text.data() + text.size())});
      ResetLine();
    } else if (last_was_eof_key_ && text == std::wstring(1, kEofKey)) {
      results.push_back({Result::kEof, ""});
      finished_rows_ = 0;
      ResetLine();
      return results;
    }
  }
  if (eof_) results.push_back({Result::kEof, ""});
  return results;
}

}  // namespace agent::client
