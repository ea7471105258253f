// The prompt of a run whose stdin is not a terminal, as `claude -p` and `codex exec` take it:
// `agent "question" < file` sends the question followed by the whole input, fenced, and
// `agent < task.md` (or `agent -`) sends the whole input as one prompt. Pure, except
// ReadInput, which reads a file descriptor to its end.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace agent::client {

// The most stdin may hold: beyond any model's window, below gRPC's 4 MB message limit.
inline constexpr size_t kMaxStdinBytes = 2 << 20;

// All of `fd` up to its end. ResourceExhausted past `cap` bytes (reading stops there), and
// InvalidArgument for input that is not text (a NUL byte or invalid UTF-8), each with a
// message for the user. When nothing (not even the end) has come after `hint_after_ms`,
// `on_wait` runs once and reading goes on: a stdin left open by mistake (ssh without -t, a
// CI runner) then says why nothing happens instead of hanging silently.
absl::StatusOr<std::string> ReadInput(int fd, size_t cap = kMaxStdinBytes,
                                      const std::function<void()>& on_wait = nullptr,
                                      int hint_after_ms = 2000);

// `question`, then `input` in a Markdown fence longer than any backtick run inside it (so the
// input cannot close it); just `question` when `input` is empty, just `input` when
// `question` is.
std::string PromptWithInput(const std::string& question, const std::string& input);

// The title of a session started with PromptWithInput(question, input): the person's own
// words (the question's first line), not the fenced input; without a question, the input's
// first non-blank line. At most kMaxTitleBytes, cut at a character boundary.
inline constexpr size_t kMaxTitleBytes = 80;
std::string PromptTitle(const std::string& question, const std::string& input);

}  // namespace agent::client
