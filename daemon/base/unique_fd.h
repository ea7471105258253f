// An owned file descriptor, closed when it goes; move-only.
#pragma once

#include <unistd.h>

#include <utility>

namespace agent::daemon {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { Close(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void Reset(int fd = -1) {
    Close();
    fd_ = fd;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Gives the descriptor up: the caller closes it.
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace agent::daemon
