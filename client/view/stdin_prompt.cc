#include "client/view/stdin_prompt.h"

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

std::string PromptTitle(const std::string& question, const std::string& input) {
  const std::string& from =
      question.find_first_not_of(" \t\r\n") != std::string::npos ? question : input;
  std::string line;
  for (size_t at = 0; at < from.size() && line.empty();) {
    size_t nl = from.find('\n', at);
    if (nl == std::string::npos) nl = from.size();
    line = from.substr(at, nl - at);
    at = nl + 1;
    size_t first = line.find_first_not_of(" \t\r");
    line = first == std::string::npos ? "" : line.substr(first);
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) {
    line.pop_back();
  }
  if (line.size() <= kMaxTitleBytes) return line;
  size_t cut = kMaxTitleBytes;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return line.substr(0, cut);
}

}  // namespace agent::client
