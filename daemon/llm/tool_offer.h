// ToolOffer: the tool definitions a session's requests carry, in an order that does not move.
// Providers cache a request's prefix, and the tool definitions come first in it (before the
// system prompt on Anthropic, before the messages on OpenAI), so a tool that changes place
// makes every later byte a cache miss.
//
// - A tool keeps its place from the first request that offered it; a tool gone from the
//   registry leaves (one miss), a new one (an MCP server that started late or changed its
//   list) is added at the end.
// - Tools new in one call are placed: the daemon's own (core) tools in the registry's order,
//   then MCP tools ("mcp__server__tool") sorted by name, so a fresh session, a reloaded one
//   and one after a daemon restart offer the same tools in the same order.
// - At most Limits::max_tools tools and Limits::max_bytes of definitions are offered (OpenAI
//   refuses more than 128 tools; a server with thousands would fill the context); the ones
//   left out are the last in the order, and Arrange says which, once per change.
// Thread-compatible: the owning session calls it under its mutex.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/json.h"

namespace agent::daemon::llm {

class ToolOffer {
 public:
  struct Limits {
    size_t max_tools = 128;
    size_t max_bytes = 128 * 1024;
  };
  ToolOffer() = default;
  explicit ToolOffer(Limits limits) : limits_(limits) {}

  // The schemas to send (OpenAI function schemas, `schemas` being the registry's, each with
  // function.name). `notice` is set, when the set left out changed, to a line naming them
  // (or saying they are all offered again), else cleared.
  Json Arrange(const Json& schemas, std::string* notice);

 private:
  Limits limits_;
  std::vector<std::string> order_;     // names in the order first offered
  std::vector<std::string> left_out_;  // what the last Arrange left out
};

// The tool's name in an OpenAI function schema ("" when it has none).
std::string ToolName(const Json& schema);

}  // namespace agent::daemon::llm
