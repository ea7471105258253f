// Starting tests/daemon/mcp/fake_mcp_server.py over the stdio transport.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/json.h"
#include "daemon/mcp/server_config.h"
#include "daemon/mcp/stdio_transport.h"

namespace agent::daemon::mcp {

inline std::string FakeServerScript() {
  return std::string(AGENT_SOURCE_DIR) + "/tests/daemon/mcp/fake_mcp_server.py";
}

inline ServerDef FakeServerDef(const std::string& mode, const std::string& log,
                               const std::string& name = "fake") {
  ServerDef d;
  d.name = name;
  d.scope = "user";
  d.command = "/usr/bin/python3";
  d.args = {FakeServerScript(), mode, log};
  d.cwd = "/";
  // Generous: a sanitizer build on a loaded machine moves a 5 MB result slowly. Tests of the
  // timeouts themselves set their own.
  d.startup_timeout_ms = 30000;
  d.timeout_ms = 30000;
  return d;
}

inline std::unique_ptr<StdioTransport> FakeTransport(const std::string& mode,
                                                     const std::string& log) {
  StdioOptions o;
  o.command = "/usr/bin/python3";
  o.args = {FakeServerScript(), mode, log};
  o.env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8"};
  o.cwd = "/";
  o.log_name = "fake";
  return std::make_unique<StdioTransport>(std::move(o));
}

// The messages the fake server received, in order.
inline std::vector<Json> ReceivedMessages(const std::string& log) {
  std::vector<Json> out;
  std::ifstream f(log);
  std::string line;
  while (std::getline(f, line)) {
    auto j = ParseJson(line);
    if (j.ok()) out.push_back(*j);
  }
  return out;
}

}  // namespace agent::daemon::mcp
