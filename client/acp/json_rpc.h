// JSON-RPC 2.0 as the Agent Client Protocol frames it on stdio: one JSON object per line
// (newline-delimited, no batches), requests and notifications both ways. This file reads
// lines (bounded: an editor's runaway message is refused, never buffered without end),
// sorts what arrives and writes the answers. Pure; not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace agent::client::acp {

// The error codes of JSON-RPC 2.0 and the one ACP adds.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;

// Largest message read from the editor (a prompt with embedded files fits easily).
inline constexpr size_t kMaxMessageBytes = 16u << 20;

// Splits stdin's bytes into lines. A line longer than the cap is dropped up to its newline
// and reported once as too long, so one huge message costs no more than the cap in memory.
class LineReader {
 public:
  explicit LineReader(size_t max_bytes = kMaxMessageBytes) : max_(max_bytes) {}
  struct Line {
    std::string text;
    bool too_long = false;
  };
  // The lines completed by `bytes` (without their "\n" or "\r\n"); blank lines are skipped.
  std::vector<Line> Feed(std::string_view bytes);

 private:
  size_t max_;
  std::string partial_;
  bool skipping_ = false;  // inside an over-long line: bytes are dropped until its newline
};

// One message from the editor, sorted.
struct Message {
  enum Kind { kRequest, kNotification, kResponse, kInvalid } kind = kInvalid;
  Json id;              // requests and responses; null when unknown
  std::string method;   // requests and notifications
  Json params;          // an object, or null when absent
  Json result;          // a response's result (null for an error response)
  Json error;           // a response's error object (null for a result)
  int code = 0;         // kInvalid: the error to answer with (id null unless it was readable)
  std::string problem;  // kInvalid: the error's message
};

// Sorts one line. Malformed JSON is kParseError; a batch, a non-object or a message
// without "jsonrpc":"2.0", a string method or a valid id is kInvalidRequest; params that are
// neither an object nor absent are kInvalidParams.
Message ParseMessage(std::string_view line);

// The lines to write (each ends in "\n").
std::string ResultLine(const Json& id, Json result);
// `data` (when not null) is the error's "data" member.
std::string ErrorLine(const Json& id, int code, std::string_view message, Json data = nullptr);
std::string RequestLine(int64_t id, std::string_view method, Json params);
std::string NotificationLine(std::string_view method, Json params);

}  // namespace agent::client::acp
