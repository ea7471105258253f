// Line editing for the interactive client, on libedit's native API in its unbuffered mode:
// the UI's poll loop reads the terminal and feeds the bytes here, so events can be shown
// while a line is being typed (the UI erases the editor, writes, and asks it to redraw).
// History is kept per project in the state dir and shared by the project's terminals
// (prompt_history.h: re-read after each entry and at each search); Up/Down, Ctrl-R (our own
// incremental search, with a prompt that says what it is), Tab (completion.h),
// Unicode (the locale must be UTF-8: main sets one), multi-line input (a line ending in `\`
// continues; a newline that arrives with more input behind it, as in a paste, is inserted
// instead of ending the line).
// Not thread-safe: used from the main thread only. One LineEditor per process (libedit's
// terminal state is per process in practice: there is one terminal).
#pragma once

#include <histedit.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "client/input/completion.h"
#include "client/input/prompt_history.h"

namespace agent::client {

class LineEditor {
 public:
  // Input is fd 0, output stdout. `prompt` may hold escapes between "\1" markers.
  explicit LineEditor(const std::string& project_dir);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // Takes the terminal (raw mode) and draws the prompt at the cursor, which must be at
  // column 0 of a blank line. Returns false when the terminal cannot be edited.
  bool Start();
  // Gives the terminal back (cooked mode); the screen is left as it is.
  void Stop();
  bool started() const { return started_; }

  // Prompt shown from the next redraw; "\1…\1" encloses escapes that take no columns.
  void SetPrompt(const std::string& prompt);
  // Draws the prompt and the text at the cursor (column 0 of a blank line).
  void Redraw();
  // The row of the cursor counted from the editor's first row, at `cols` columns.
  int CursorRow(int cols) const;
  // Rows the editor takes at `cols` columns.
  int Rows(int cols) const;

  struct Result {
    enum Kind { kLine, kEof } kind;
    std::string text;
    bool queue = false;  // ended with Alt-Enter (Esc, Enter) rather than Enter
  };
  // Feeds bytes read from the terminal; libedit redraws the line as it edits. Returns the
  // lines finished (and end of input): after one, the editor is empty and drawn as nothing
  // (the cursor is at column 0 under the finished line) until the next Redraw.
  std::vector<Result> Feed(const std::string& bytes);
  // The text being edited.
  std::string Text() const;
  // Empties it, ending a history search (the caller erases and redraws the screen around this).
  void Clear();
  // Puts `text` in the editor with the cursor at its end.
  void SetText(const std::string& text);
  void AddHistory(const std::string& line);
  // Re-reads the history file (other terminals' entries).
  void ReloadHistory();

  // Tab: `complete` says what to insert for the text before the cursor; `show` gets the
  // choices when the word stays ambiguous (the caller shows them above the editor).
  void SetCompletion(std::function<Completion(const std::string& before)> complete,
                     std::function<void(const std::vector<std::string>&)> show);
  // libedit must learn the new width (SIGWINCH; we handle signals ourselves).
  void Resized();

 private:
  // Ctrl-R: what is searched, and where the editor was before.
  struct Search {
    std::string query;
    std::vector<std::string> entries;  // oldest first
    size_t match = 0;                  // index into entries; entries.size(): none yet
    bool failed = false;
    std::string saved_text;
    std::string saved_prompt;
  };

  static int ReadChar(EditLine* el, wchar_t* out);
  static unsigned char CompleteKey(EditLine* el, int ch);
  unsigned char DoComplete();
  // Consumes one key of input in search mode (or the Ctrl-R that starts it).
  void SearchKey();
  void FindMatch(bool older);
  void ShowSearch();
  void EndSearch(bool keep_match);
  // Erases the editor's rows, applies `change` (prompt, text) and lets libedit redraw.
  void Redisplay(const std::function<void()>& change);
  static char* Prompt(EditLine* el);
  int NextChar(wchar_t* out);
  void ResetLine();
  void EraseText();
  std::string StripPromptMarkers() const;

  EditLine* el_ = nullptr;
  History* hist_ = nullptr;
  PromptHistory history_;
  std::function<Completion(const std::string&)> complete_;
  std::function<void(const std::vector<std::string>&)> show_choices_;
  std::optional<Search> search_;
  std::string prompt_;
  bool hidden_ = false;  // draw nothing (between a finished line and the next Redraw)
  bool started_ = false;
  std::deque<char> input_;
  std::deque<wchar_t> pushed_;  // characters ReadChar hands out before new input
  bool submitted_ = false;      // ReadChar handed out a newline that ends the line
  bool queue_line_ = false;     // and it came as Alt-Enter
  bool eof_ = false;            // end of input on fd 0
  bool last_was_eof_key_ = false;
  int finished_rows_ = 0;  // rows of a finished line above the cursor, while hidden
};

}  // namespace agent::client
