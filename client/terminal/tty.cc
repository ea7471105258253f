#include "client/terminal/tty.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace agent::client {
namespace {

int g_signal_write_fd = -1;

void OnSignal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  if (g_signal_write_fd >= 0) {
    ssize_t n = ::write(g_signal_write_fd, &b, 1);
    (void)n;  // a full pipe already holds enough wake-ups
  }
  errno = saved;
}

}  // namespace

int TerminalColumns() {
  winsize ws{};
  if (::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

CbreakMode::CbreakMode() {
  if (!::isatty(0) || ::tcgetattr(0, &saved_) != 0) return;
  termios raw = saved_;
  raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  active_ = ::tcsetattr(0, TCSANOW, &raw) == 0;
}

CbreakMode::~CbreakMode() {
  if (active_) ::tcsetattr(0, TCSANOW, &saved_);
}

SignalPipe& SignalPipe::Get() {
  static SignalPipe* p = new SignalPipe();
  return *p;
}

SignalPipe::SignalPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
  read_fd_ = fds[0];
  g_signal_write_fd = fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking read returns EINTR and the loop looks
  for (int sig : {SIGINT, SIGWINCH, SIGTERM, SIGHUP, SIGCONT}) sigaction(sig, &sa, nullptr);
}

std::vector<int> SignalPipe::Drain() {
  std::vector<int> out;
  unsigned char buf[64];
  for (int i = 0; i < 16; ++i) {  // bounded: 1024 signals is more than a loop turn needs
    ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t k = 0; k < n; ++k) out.push_back(buf[k]);
  }
  return out;
}

}  // namespace agent::client
