// StreamAssembler: what the transport needs from the code that turns one provider's SSE
// events into a ModelReply. Implemented by OpenAiStreamAssembler (Chat Completions) and
// AnthropicStreamAssembler (Messages); MakeStreamAssembler (provider.h) picks one.
//
// Contract shared by the implementations:
// - OnEvent applies one event. The first error is final: the stream must be abandoned and
//   later calls return the same error. Codes: kUnavailable for an error the server reported
//   inside the stream that may clear (overload, server error, rate limit), kInvalidArgument
//   for other in-stream errors, kInternal "malformed chunk" for data that is not a JSON
//   object, kResourceExhausted only when the reply went over its cap (kMaxReplyBytes).
// - Complete(): the stream said it is finished ([DONE] / a finish_reason / message_stop).
// - OutputStarted(): text, reasoning or a tool call has reached the sink (or would have,
//   with a null sink); a retry would show the user things twice.
// - Finish(), once, at the end of the stream: the OnEvent error, or kUnavailable "stream
//   ended before the reply was complete" when !Complete(), or the reply.
// - Every string handed to the sink or put in the reply is valid UTF-8 when the events'
//   fields are, which SseParser guarantees.
//
// Thread-safety: none; one assembler per stream, used on the transport's thread.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/llm/error_text.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/sse_parser.h"

namespace agent::daemon::llm {

// The most a reply may hold before the request is ended (not retried): the bytes of content,
// reasoning, refusal, tool-call ids, names and arguments, thinking text and signatures, plus
// kReplySlotBytes for each tool call or content block (so a stream of empty blocks is
// bounded too). A long coding answer is well under 1 MiB; this only stops a runaway or hostile
// server from growing our memory without end.
inline constexpr size_t kMaxReplyBytes = size_t{32} << 20;  // 32 MiB
inline constexpr size_t kReplySlotBytes = 256;

class StreamAssembler {
 public:
  virtual ~StreamAssembler() = default;

  virtual absl::Status OnEvent(const SseEvent& ev) = 0;
  virtual bool Complete() const = 0;
  virtual bool OutputStarted() const = 0;
  virtual absl::StatusOr<ModelReply> Finish() = 0;
};

// The start of every Finish(): the OnEvent error, or kUnavailable for an unfinished stream, or
// kFailedPrecondition for a second call; sets `finished` when the reply may be built.
inline absl::Status CheckFinish(const absl::Status& error, bool complete, bool* finished) {
  if (!error.ok()) return error;
  if (!complete) return absl::UnavailableError("stream ended before the reply was complete");
  if (*finished) return absl::FailedPreconditionError("Finish called twice");
  *finished = true;
  return absl::OkStatus();
}

// Counts the bytes a reply holds against a cap. Assemblers ask before they append.
class ReplyBudget {
 public:
  explicit ReplyBudget(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Adds `bytes`; false (and nothing is added) when that would go over the cap.
  bool Take(size_t bytes) {
    if (bytes > max_bytes_ - used_) return false;
    used_ += bytes;
    return true;
  }
  // kResourceExhausted naming the cap.
  absl::Status Error() const { return CapExceededError("the reply", max_bytes_, "kMaxReplyBytes"); }

 private:
  size_t max_bytes_;
  size_t used_ = 0;
};

}  // namespace agent::daemon::llm
