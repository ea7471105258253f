#include "client/commands/session_picker.h"

#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/commands/session_calls.h"
#include "client/terminal/tty.h"
#include "client/text/session_table.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

// A line of the list, without control characters from the title.
std::string Describe(const v1::Session& s, int64_t now_ms) {
  return absl::StrCat(s.id().substr(0, 8), "  ", StateName(s.state()), "  ", s.message_count(),
                      " msgs  ", Ago(s.updated_unix_ms(), now_ms), "  ", PrintableLine(s.title()));
}

bool WriteAll(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(1, s.data() + done, s.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Keys one by one, ISIG off so that Ctrl-C is a key here (the picker then restores the
// terminal itself instead of dying in raw mode).
class RawKeys {
 public:
  RawKeys() {
    if (::tcgetattr(0, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO | ISIG));
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(0, TCSANOW, &raw) == 0;
  }
  ~RawKeys() {
    if (active_) ::tcsetattr(0, TCSANOW, &saved_);
  }
  RawKeys(const RawKeys&) = delete;
  RawKeys& operator=(const RawKeys&) = delete;
  bool active() const { return active_; }

 private:
  termios saved_{};
  bool active_ = false;
};

// The next keys; a lone ESC waits briefly for the rest of an escape sequence. "" at EOF.
std::string ReadKeys() {
  char buf[64];
  ssize_t n = ::read(0, buf, sizeof buf);
  if (n <= 0) return "";
  size_t len = static_cast<size_t>(n);
  if (len == 1 && buf[0] == '\x1b') {
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      ssize_t more = ::read(0, buf + 1, sizeof buf - 1);
      if (more > 0) len += static_cast<size_t>(more);
    }
  }
  return std::string(buf, len);
}

}  // namespace

Picker::Picker(std::vector<v1::Session> sessions, int64_t now_ms, int rows)
    : sessions_(std::move(sessions)), now_ms_(now_ms), rows_(std::max(1, rows)) {}

void Picker::Move(int delta) {
  if (sessions_.empty()) return;
  int64_t next = static_cast<int64_t>(selected_) + delta;
  next = std::clamp<int64_t>(next, 0, static_cast<int64_t>(sessions_.size()) - 1);
  selected_ = static_cast<size_t>(next);
  if (selected_ < top_) top_ = selected_;
  if (selected_ >= top_ + static_cast<size_t>(rows_)) top_ = selected_ - rows_ + 1;
}

Picker::Result Picker::Feed(const std::string& keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string rest = keys.substr(i);
    if (rest.rfind("\x1b[A", 0) == 0 || rest.rfind("\x1bOA", 0) == 0) {
      Move(-1);
      i += 2;
    } else if (rest.rfind("\x1b[B", 0) == 0 || rest.rfind("\x1bOB", 0) == 0) {
      Move(1);
      i += 2;
    } else if (rest.rfind("\x1b[", 0) == 0 || rest.rfind("\x1bO", 0) == 0) {
      // Another sequence (Left, Home, ...): skipped to its final byte.
      size_t end = i + 2;
      while (end < keys.size() && !(keys[end] >= 0x40 && keys[end] <= 0x7e)) ++end;
      i = end;
    } else if (keys[i] == 'k' || keys[i] == 0x10) {  // k, Ctrl-P
      Move(-1);
    } else if (keys[i] == 'j' || keys[i] == 0x0e) {  // j, Ctrl-N
      Move(1);
    } else if (keys[i] == '\r' || keys[i] == '\n') {
      return sessions_.empty() ? Result::kCancelled : Result::kChosen;
    } else if (keys[i] == '\x1b' || keys[i] == 'q' || keys[i] == 0x03 || keys[i] == 0x04) {
      return Result::kCancelled;
    }
  }
  return Result::kNone;
}

std::vector<std::string> Picker::Lines(bool color, int cols) const {
  std::vector<std::string> out = {
      FitColumns("Resume which session? ↑/↓ choose, Enter opens, Esc leaves", cols)};
  size_t end = std::min(sessions_.size(), top_ + static_cast<size_t>(rows_));
  for (size_t i = top_; i < end; ++i) {
    std::string line = FitColumns(Describe(sessions_[i], now_ms_), cols - 2);
    if (i != selected_) {
      out.push_back("  " + line);
    } else {
      out.push_back(color ? "\x1b[7m› " + line + "\x1b[0m" : "› " + line);
    }
  }
  return out;
}

std::optional<std::string> RunPicker(std::vector<v1::Session> sessions, bool color) {
  Picker picker(std::move(sessions), absl::ToUnixMillis(absl::Now()));
  RawKeys raw;
  if (!raw.active()) return std::nullopt;
  size_t drawn = 0;
  auto draw = [&] {
    std::string frame = drawn > 0 ? absl::StrCat("\x1b[", drawn, "A\r\x1b[J") : "\r\x1b[J";
    std::vector<std::string> lines = picker.Lines(color, TerminalColumns());
    for (const std::string& l : lines) frame += l + "\r\n";
    drawn = lines.size();
    WriteAll(frame);
  };
  draw();
  Picker::Result r = Picker::Result::kNone;
  // Bounded by the user: every pass waits for a key; EOF leaves.
  while (r == Picker::Result::kNone) {
    std::string keys = ReadKeys();
    r = keys.empty() ? Picker::Result::kCancelled : picker.Feed(keys);
    if (r == Picker::Result::kNone) draw();
  }
  WriteAll(absl::StrCat("\x1b[", drawn, "A\r\x1b[J"));
  if (r != Picker::Result::kChosen) return std::nullopt;
  return picker.selected().id();
}

}  // namespace agent::client
