// The AGENT_* settings a client sends with CreateSession and SendPrompt (ClientSettings):
// what a person exported in this terminal is what the turns this client starts use. The
// daemon's environment and config.json only fill what the client did not send. Pure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/v1/agent.pb.h"

namespace agent::client {

// Looks a variable up; nullptr when unset (std::getenv's contract).
using EnvLookup = std::function<const char*(const char*)>;

// The settings set in `env`; fields left 0 where a variable is unset or empty. A value that
// is not a positive whole number in range is InvalidArgument naming the variable (a typo such
// as AGENT_MAX_STEPS=1O must not be silently ignored).
absl::StatusOr<agent::v1::ClientSettings> ClientSettingsFromEnv(const EnvLookup& env);

// The names ClientSettingsFromEnv reads, in the README's order.
const std::vector<std::string>& ClientSettingNames();

}  // namespace agent::client
