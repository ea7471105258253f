// SseParser: an incremental parser for the WHATWG "text/event-stream" format (WIRE.md §1).
//
// Bytes go in as the network delivers them, split anywhere (one byte at a time works);
// complete events come out. The parser splits lines on CR, LF and CRLF bytes (a CR at the end
// of one Feed and an LF at the start of the next are one line ending); those bytes never occur
// inside a multi-byte UTF-8 character, so a character cut by a read is put back together
// before anybody looks at it. A leading BOM is skipped, comment lines (":...") are ignored,
// `data:` with or without its one optional space, multi-line data joined with "\n", `event:`,
// `id:` and `retry:` are honoured.
//
// Bytes become text here, and only here: the fields of a dispatched event are valid UTF-8,
// each ill-formed part replaced by U+FFFD (common/utf8.h; the spec decodes the stream the same
// way). Since only complete events are decoded, the result is the same for any split.
//
// Memory is bounded: a line, or the data of one event, over Options::max_event_bytes stops the
// parser with kResourceExhausted (status()); it then ignores all further input and delivers
// nothing more.
//
// One deliberate departure from the spec: an event whose data is empty (no `data:` line, or
// only empty ones) is not delivered, because no provider gives meaning to an empty payload
// and the assemblers would only have to skip it.
//
// Thread-safety: none; one parser belongs to one stream on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace agent::daemon::llm {

// The longest SSE line, and the most data one event may carry, before the stream is refused.
// Real chunks are a few hundred bytes; a whole tool call in one chunk (Ollama, Groq) stays far
// below this. The cap stops a broken or hostile server from making us buffer without end.
inline constexpr size_t kMaxSseEventBytes = size_t{8} << 20;  // 8 MiB

struct SseEvent {
  std::string event;  // the `event:` field; empty when the server sent none ("message")
  std::string data;   // `data:` lines joined with "\n", final newline removed
  std::string id;     // the last event id seen so far in the stream (persists across events)

  bool operator==(const SseEvent&) const = default;
};

class SseParser {
 public:
  struct Options {
    // By the spec an event that is not ended by a blank line when the stream ends is
    // dropped. When true, Finish() delivers it anyway (its last line need not be ended
    // either), for callers that want to accept servers whose final event lacks the blank
    // line. HasPartialEvent() reports the situation either way.
    bool dispatch_unterminated_at_end = false;
    // See kMaxSseEventBytes; tests lower it.
    size_t max_event_bytes = kMaxSseEventBytes;
  };

  SseParser() = default;
  explicit SseParser(Options options) : options_(options) {}

  SseParser(const SseParser&) = delete;
  SseParser& operator=(const SseParser&) = delete;

  // Consumes `bytes` and appends every event they complete to `*out` (not cleared).
  // Must not be called after Finish(). Does nothing once status() is an error.
  void Feed(std::string_view bytes, std::vector<SseEvent>* out);

  // OK, or kResourceExhausted naming the cap once a line or an event's data went over
  // Options::max_event_bytes. Callers check it after each Feed and abandon the stream.
  const absl::Status& status() const { return status_; }

  // Marks the end of the stream. Per the spec nothing is delivered; with
  // Options::dispatch_unterminated_at_end the unterminated event is appended to `*out`.
  void Finish(std::vector<SseEvent>* out);

  // True when bytes of an event that has not been delivered are pending (a started line
  // that is not a comment, or field lines not yet ended by a blank line). After Finish() it
  // tells whether that was so when the stream ended, i.e. whether the stream looks cut.
  bool HasPartialEvent() const;

  // The last valid `retry:` value, in milliseconds.
  std::optional<int64_t> retry_ms() const { return retry_ms_; }

 private:
  void ProcessLine(std::string_view line, std::vector<SseEvent>* out);
  // Records the cap error and drops everything buffered.
  void Overflow();
  void Dispatch(std::vector<SseEvent>* out);
  bool PendingNow() const;

  Options options_;
  std::string line_;         // bytes of the current, not yet ended line
  bool pending_cr_ = false;  // the last byte was a CR: an LF right after it is swallowed
  bool bom_done_ = false;    // past the point where a BOM may appear
  int bom_matched_ = 0;      // BOM bytes matched so far at the very start

  // The event being built.
  std::string data_;
  std::string event_;
  bool has_fields_ = false;  // a data/event/id/retry line arrived since the last blank line

  std::string last_id_;
  std::optional<int64_t> retry_ms_;

  bool finished_ = false;
  bool partial_at_finish_ = false;
  absl::Status status_;
};

}  // namespace agent::daemon::llm
