// "No, and tell it…": at an approval question, `t` lets the person deny the call and type what
// the model should do instead, sent with the denial in one step (Claude Code's "no, and tell
// Claude what to do differently"); at the model's own question (ask_user), `t` types the
// answer. This is the small line input for that message; the SessionView owns one and feeds it
// the keys while it is active. Thread-compatible.
#pragma once

#include <string>
#include <utility>

namespace agent::client {

class DenyMessageInput {
 public:
  enum class Outcome { kTyping, kSend, kBack };

  bool active() const { return active_; }
  const std::string& text() const { return text_; }
  // `head`: what the line says before the text typed.
  void Start(std::string head = "No, and tell it: ") {
    active_ = true;
    text_.clear();
    head_ = std::move(head);
  }
  void Stop() {
    active_ = false;
    text_.clear();
  }

  // Takes the keys typed: printable text (UTF-8) is added, Backspace removes the last
  // character, Ctrl-U clears, Enter sends (kSend; the text stays until Stop), a lone Esc goes
  // back to the question (kBack, inactive again). Other controls and escape sequences (arrow
  // keys) are ignored. The message is capped at kMaxBytes.
  Outcome Feed(const std::string& bytes);

  // The line shown in place of the question while typing, at most `cols` - 1 columns: the
  // end of the message (where the cursor is) stays visible; controls shown as escapes.
  std::string Line(int cols) const;

  static constexpr size_t kMaxBytes = 2000;

 private:
  bool active_ = false;
  std::string text_;
  std::string head_;
};

}  // namespace agent::client
