#include "client/text/deny_message.h"

#include "client/terminal/show_controls.h"
#include "client/terminal/terminal_text.h"

namespace agent::client {

DenyMessageInput::Outcome DenyMessageInput::Feed(const std::string& bytes) {
  if (bytes == "\x1b") {
    Stop();
    return Outcome::kBack;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\r' || c == '\n') return Outcome::kSend;
    if (c == 0x1b) return Outcome::kTyping;  // an escape sequence: the rest is its bytes
    if (c == 0x7f || c == 0x08) {
      // Drop the last character: its continuation bytes, then its lead byte.
      while (!text_.empty() && (static_cast<unsigned char>(text_.back()) & 0xC0) == 0x80) {
        text_.pop_back();
      }
      if (!text_.empty()) text_.pop_back();
    } else if (c == 0x15) {
      text_.clear();
    } else if (c >= 0x20 && text_.size() < kMaxBytes) {
      text_.push_back(static_cast<char>(c));
    }
  }
  return Outcome::kTyping;
}

std::string DenyMessageInput::Line(int cols) const {
  const std::string& head = head_;
  const std::string tail = "\u258f (Enter sends, Esc goes back)";
  std::string shown = ShowControls(text_);
  // Bounded by the message's length: each pass drops one character from its start.
  while (!shown.empty() && cols > 0 && DisplayWidth(head + shown + tail) > cols - 1) {
    size_t next = 1;
    while (next < shown.size() && (static_cast<unsigned char>(shown[next]) & 0xC0) == 0x80) ++next;
    shown.erase(0, next);
  }
  return head + shown + tail;
}

}  // namespace agent::client
