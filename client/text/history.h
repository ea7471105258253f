// The parts of a snapshot's transcript that the client shows, read with RapidJSON.
//
// Attaching to a long session parses its whole history (1.3 MB of JSON for 5,000 messages):
// nlohmann/json builds that tree in ~10 ms, RapidJSON in ~2.5 ms (the attach figures of
// `make bench`). Everything else keeps using common/json.h: this input is always the daemon's
// own serialisation, and nlohmann is the stricter parser for untrusted JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace agent::client {

struct HistoryCall {
  std::string name;
  std::string arguments;  // the JSON text the model wrote
};

struct HistoryMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  std::string content;
  std::vector<HistoryCall> calls;  // assistant messages only
};

// InvalidArgument when `transcript_json` is not a JSON array. Fields of another type than
// the OpenAI shape says read as empty, as GetString does.
absl::StatusOr<std::vector<HistoryMessage>> ParseHistory(std::string_view transcript_json);

}  // namespace agent::client
