#include "client/input/line_editor.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cwchar>
#include <functional>

#include "absl/strings/str_format.h"
#include "client/terminal/terminal_text.h"
#include "client/terminal/tty.h"
#include "common/atomic_file.h"
#include "common/paths.h"

namespace agent::client {
namespace {

constexpr wchar_t kQuotedInsert = 0x16;  // ^V: libedit inserts the next character as it is
constexpr wchar_t kEofKey = 0x04;        // ^D
constexpr char kSearchKey = 0x12;        // ^R

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

// Per project: entries of one project stay with it.
std::string HistoryPath(const std::string& project_dir) {
  std::string dir = StateDir() + "/history";
  (void)MakeDirs(dir);
  return absl::StrFormat("%s/%016x.prompts", dir, std::hash<std::string>{}(project_dir));
}

// The file libedit kept before (overwritten by whoever left last): moved once into the shared one.
void MigrateOldHistory(History* hist, const std::string& path, const PromptHistory& shared) {
  std::string old = path.substr(0, path.size() - std::string(".prompts").size());
  if (::access(old.c_str(), R_OK) != 0 || ::access(path.c_str(), F_OK) == 0) return;
  HistEvent ev;
  if (history(hist, &ev, H_LOAD, old.c_str()) < 0) return;
  std::vector<std::string> entries;
  // Bounded by H_SETSIZE: oldest first, from H_LAST towards the newest.
  for (int r = history(hist, &ev, H_LAST); r != -1; r = history(hist, &ev, H_PREV)) {
    entries.emplace_back(ev.str);
  }
  for (std::string& e : entries) {
    while (!e.empty() && e.back() == '\n') e.pop_back();
    (void)shared.Append(e);
  }
  ::unlink(old.c_str());
}

}  // namespace

LineEditor::LineEditor(const std::string& project_dir) : history_(HistoryPath(project_dir)) {
  hist_ = history_init();
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, 1000);
  history(hist_, &ev, H_SETUNIQUE, 1);
  MigrateOldHistory(hist_, history_.path(), history_);
  ReloadHistory();

  el_ = el_init("agent", stdin, stdout, stderr);
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_SIGNAL, 0);  // the UI's loop handles SIGINT, SIGWINCH, SIGTSTP
  el_set(el_, EL_PROMPT_ESC, &LineEditor::Prompt, '\1');
  el_set(el_, EL_HIST, history, hist_);
  el_set(el_, EL_GETCFN, &LineEditor::ReadChar);
  // What readline users expect, beyond libedit's emacs map.
  // ^R never reaches libedit (SearchKey takes it); Tab completes.
  el_set(el_, EL_ADDFN, "agent-complete", "complete a command or a path", &LineEditor::CompleteKey);
  el_set(el_, EL_BIND, "^I", "agent-complete", nullptr);
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
  if (search_.has_value()) {
    prompt_ = search_->saved_prompt;
    search_.reset();
  }
  EraseText();
}

void LineEditor::EraseText() {
  const LineInfoW* li = el_wline(el_);
  int after = static_cast<int>(li->lastchar - li->cursor);
  int len = static_cast<int>(li->lastchar - li->buffer);
  el_cursor(el_, after);
  if (len > 0) el_deletestr(el_, len);
}

void LineEditor::SetText(const std::string& text) {
  EraseText();
  if (!text.empty()) el_insertstr(el_, text.c_str());
}

void LineEditor::AddHistory(const std::string& line) {
  if (history_.Append(line).ok()) {
    ReloadHistory();  // with what other terminals added meanwhile
  } else {
    HistEvent ev;
    history(hist_, &ev, H_ENTER, line.c_str());
  }
}

void LineEditor::ReloadHistory() {
  HistEvent ev;
  history(hist_, &ev, H_CLEAR);
  for (const std::string& e : history_.Load()) history(hist_, &ev, H_ENTER, e.c_str());
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
    // Alt-Enter (Esc, then Enter, in one write): ends the line as Enter does, marked to queue.
    if (bytes == "\x1b" && input_.size() == 1 &&
        (input_.front() == '\r' || input_.front() == '\n')) {
      input_.pop_front();
      submitted_ = true;
      queue_line_ = true;
      last_was_eof_key_ = false;
      *out = L'\r';
      return 1;
    }
    wchar_t wc;
    st = std::mbstate_t{};
    size_t r = std::mbrtowc(&wc, bytes.data(), bytes.size(), &st);
    if (r == static_cast<size_t>(-2)) continue;  // incomplete: one more byte
    if (r == static_cast<size_t>(-1)) {          // invalid: drop it
      bytes.clear();
      continue;
    }
    if (wc == L'\t' && !input_.empty()) {
      *out = kQuotedInsert;  // a pasted tab is text, not completion
      pushed_.push_back(L'\t');
      return 1;
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
    if (pushed_.empty() && (search_.has_value() || input_.front() == kSearchKey)) {
      SearchKey();  // consumes at least one byte, or leaves search mode
      continue;
    }
    submitted_ = false;
    queue_line_ = false;
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
      results.push_back(
          {Result::kLine, Narrow(text.data(), text.data() + text.size()), queue_line_});
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

namespace agent::client {

void LineEditor::SetCompletion(std::function<Completion(const std::string&)> complete,
                               std::function<void(const std::vector<std::string>&)> show) {
  complete_ = std::move(complete);
  show_choices_ = std::move(show);
}

unsigned char LineEditor::CompleteKey(EditLine* el, int) {
  LineEditor* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  return self->DoComplete();
}

unsigned char LineEditor::DoComplete() {
  if (!complete_) return CC_NORM;
  const LineInfoW* li = el_wline(el_);
  std::string before = Narrow(li->buffer, li->cursor);
  Completion c = complete_(before);
  if (c.erase > 0 || !c.insert.empty()) {
    c.erase = std::min(c.erase, before.size());
    int chars = static_cast<int>(DecodeUtf8(before.substr(before.size() - c.erase)).size());
    if (chars > 0) el_wdeletestr(el_, chars);
    if (!c.insert.empty()) el_insertstr(el_, c.insert.c_str());
    return CC_REFRESH;
  }
  if (!c.choices.empty() && show_choices_) show_choices_(c.choices);
  return CC_REFRESH;
}

void LineEditor::Redisplay(const std::function<void()>& change) {
  int row = started_ ? CursorRow(TerminalColumns()) : 0;
  std::string erase = "\r";
  if (row > 0) erase += absl::StrFormat("\x1b[%dA", row);
  erase += "\x1b[J";
  if (started_) std::fwrite(erase.data(), 1, erase.size(), stdout);
  change();
  if (started_) el_set(el_, EL_REFRESH);
}

// Like readline's reverse-i-search, with a prompt a person can read: typed characters narrow
// the search, ^R finds an older match, Backspace widens, Enter runs the match, Esc or ^G
// gives the line back as it was; any other key keeps the match and goes on editing.
void LineEditor::SearchKey() {
  unsigned char b = static_cast<unsigned char>(input_.front());
  if (!search_.has_value()) {
    input_.pop_front();
    Search s;
    ReloadHistory();
    s.entries = history_.Load();
    s.match = s.entries.size();
    s.saved_text = Text();
    s.saved_prompt = prompt_;
    search_ = std::move(s);
    ShowSearch();
    return;
  }
  if (b == kSearchKey) {
    input_.pop_front();
    FindMatch(/*older=*/true);
  } else if (b == 0x7F || b == 0x08) {
    input_.pop_front();
    std::string& q = search_->query;
    while (!q.empty() && (static_cast<unsigned char>(q.back()) & 0xC0) == 0x80) q.pop_back();
    if (!q.empty()) q.pop_back();
    search_->match = search_->entries.size();
    FindMatch(/*older=*/false);
  } else if (b == 0x07 || (b == 0x1b && (input_.size() == 1 || input_[1] != '['))) {
    input_.pop_front();
    EndSearch(/*keep_match=*/false);
    return;
  } else if (b >= 0x20) {
    // One whole UTF-8 character (the rest of it may come in the next read).
    size_t len = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    if (input_.size() < len) len = input_.size();
    for (size_t i = 0; i < len; ++i) {
      search_->query += input_.front();
      input_.pop_front();
    }
    FindMatch(/*older=*/false);
  } else {
    EndSearch(/*keep_match=*/true);  // the key (Enter, ^A, an arrow …) goes to libedit
    return;
  }
  ShowSearch();
}

// From the current match (or the one before it, `older`) towards the oldest entry. An
// empty query matches nothing, except that ^R then steps through the history.
void LineEditor::FindMatch(bool older) {
  Search& s = *search_;
  const size_t n = s.entries.size();
  if (s.query.empty() && !older) {
    s.match = n;
    s.failed = false;
    return;
  }
  size_t i = s.match >= n ? n : older ? s.match : s.match + 1;
  bool found = false;
  while (i > 0) {  // bounded by the entries
    --i;
    if (s.entries[i].find(s.query) != std::string::npos) {
      found = true;
      break;
    }
  }
  s.failed = !found;
  if (found) s.match = i;
}

void LineEditor::ShowSearch() {
  const Search& s = *search_;
  std::string prompt = absl::StrFormat("search history%s: %s ", s.failed ? " (no match)" : "",
                                       s.query.empty() ? "(type to search)" : s.query);
  prompt += "→ ";
  std::string text = s.match < s.entries.size() ? s.entries[s.match] : s.saved_text;
  Redisplay([&] {
    prompt_ = prompt;
    SetText(text);
  });
}

void LineEditor::EndSearch(bool keep_match) {
  Search s = std::move(*search_);
  search_.reset();
  std::string text = keep_match && s.match < s.entries.size() ? s.entries[s.match] : s.saved_text;
  Redisplay([&] {
    prompt_ = s.saved_prompt;
    SetText(text);
  });
}

}  // namespace agent::client
