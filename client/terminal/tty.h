// The terminal and signals, for the interactive client's poll loop: the width now (never
// cached: the terminal may be resized at any moment), a cbreak mode for reading single keys,
// and signals turned into bytes on a pipe so that poll() wakes up for them.
#pragma once

#include <termios.h>

#include <vector>

namespace agent::client {

// Columns of the terminal on stdout now; 80 when it is not a terminal or does not say.
int TerminalColumns();

// Single keys without echo (ICANON and ECHO off, ISIG kept so Ctrl-C stays a signal), for
// as long as the object lives. Does nothing when stdin is not a terminal.
class CbreakMode {
 public:
  CbreakMode();
  ~CbreakMode();
  CbreakMode(const CbreakMode&) = delete;
  CbreakMode& operator=(const CbreakMode&) = delete;

 private:
  bool active_ = false;
  termios saved_{};
};

// SIGINT, SIGWINCH, SIGTERM, SIGHUP and SIGCONT are caught and written, one byte each, to a
// pipe the loop polls. Installed once per process; the handlers stay until exit.
class SignalPipe {
 public:
  static SignalPipe& Get();
  int fd() const { return read_fd_; }
  // The signals that arrived since the last call, in order.
  std::vector<int> Drain();

 private:
  SignalPipe();
  int read_fd_ = -1;
};

}  // namespace agent::client
