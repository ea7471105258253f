// TurnSettings: the limits and timeouts one turn runs with. Each comes from the client whose
// prompt started the turn (ClientSettings sent with SendPrompt), else from the session's
// (what its creating client sent), else from the daemon's config (its environment, then
// config.json, then the built-in default). So what a person exported in one terminal applies
// to the turns that terminal starts and to no other client's. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "agent/v1/agent.pb.h"
#include "common/config.h"

namespace agent::daemon {

struct TurnSettings {
  int max_steps = 0;
  int max_attempts = 0;
  int64_t compact_at_chars = 0;
  int64_t context_tokens = 0;  // 0: unknown
  int idle_timeout_ms = 0;
  int connect_timeout_ms = 0;
  int bash_timeout_s = 0;
};

// The fields of `sent` that are set (> 0), over those of `base`.
agent::v1::ClientSettings OverlayClientSettings(const agent::v1::ClientSettings& base,
                                                const agent::v1::ClientSettings& sent);

// Every field: `sent`'s when set, else `session`'s, else `config`'s.
TurnSettings ResolveTurnSettings(const agent::v1::ClientSettings& sent,
                                 const agent::v1::ClientSettings& session, const Config& config);

}  // namespace agent::daemon
