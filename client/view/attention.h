// Attention: tells the person at a terminal that a session it shows waits for them (an
// approval) or finished a turn, while the terminal is not focused: the bell, plus a desktop
// notification escape (OSC 9, which iTerm2, WezTerm, Windows Terminal, kitty and others show;
// OSC 777 for urxvt, foot and VTE terminals). Focus comes from the terminal's focus reports
// (mode 1004: ESC [ I focused, ESC [ O not), which Filter takes out of the input before the
// line editor sees it; a terminal that sends none is taken as not focused, so it still rings.
// Off with AGENT_NOTIFY=0 or `"notify": false` in config.json. Pure; not thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace agent::client {

class Attention {
 public:
  explicit Attention(bool enabled) : enabled_(enabled) {}

  // Whether this client should alert at all: AGENT_NOTIFY, else config.json's "notify",
  // else on.
  static bool EnabledByConfig();

  // What turns focus reporting on and off (empty when disabled).
  std::string Begin() const { return enabled_ ? "\x1b[?1004h" : ""; }
  std::string End() const { return enabled_ ? "\x1b[?1004l" : ""; }

  // `input` without the focus reports in it, noting the last one.
  std::string Filter(std::string_view input);

  // The bytes that alert the person, `body` naming why ("needs your approval: bash"), or
  // empty when disabled or the terminal is focused. Control characters in `body` are dropped.
  std::string Alert(std::string_view body) const;

  bool focused() const { return focused_; }

 private:
  bool enabled_;
  bool focused_ = false;
};

}  // namespace agent::client
