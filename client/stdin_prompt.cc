#include "client/stdin_prompt.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace agent::client {

absl::StatusOr<std::string> ReadInput(int fd, size_t cap, const std::function<void()>& on_wait,
                                      int hint_after_ms) {
  if (on_wait) {
    pollfd p{fd, POLLIN, 0};
    int r = 0;
    do {
      r = ::poll(&p, 1, hint_after_ms);
    } while (r < 0 && errno == EINTR);
    if (r == 0) on_wait();
  }
  std::string out;
  char buf[65536];
  for (;;) {  // ends at EOF, an error or the cap
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::InternalError(absl::StrCat("cannot read stdin: ", std::strerror(errno)));
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > cap) {
      std::string limit =
          cap >= (1 << 20) ? absl::StrCat(cap >> 20, " MiB") : absl::StrCat(cap, " bytes");
      return absl::ResourceExhaustedError(
          absl::StrCat("stdin holds more than ", limit,
                       ", the limit for a prompt; name the file in the prompt and let the agent "
                       "read it"));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  if (out.find('\0') != std::string::npos || !IsValidUtf8(out)) {
    return absl::InvalidArgumentError(
        "stdin is not text (it has NUL bytes or invalid UTF-8); only text can be a prompt");
  }
  return out;
}

std::string PromptWithInput(const std::string& question, const std::string& input) {
  if (input.empty()) return question;
  if (question.empty()) return input;
  size_t longest = 0, run = 0;
  for (char c : input) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string body = input;
  if (body.back() != '\n') body += '\n';
  return absl::StrCat(question, "\n\n", fence, "\n", body, fence, "\n");
}

}  // namespace agent::client
