// Settings: environment first, then $XDG_CONFIG_HOME/agent/config.json, then defaults.
// Loaded once per process (daemon) or per command (client); plain data afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/sandbox_config.h"
#include "common/tool_env.h"

namespace agent {

struct ModelSettings {
  std::string base_url;  // e.g. https://api.openai.com/v1
  std::string api_key;   // never written anywhere by us
  std::string model;
  std::string provider;  // "openai" or "anthropic"; derived from base_url when empty
  // Anthropic prompt-cache lifetime: "" or "5m" (the default), "1h" (writes cost 2x input).
  std::string cache_ttl = "";
};

// "checkpoints": false, or {"max_age_days", "max_count", "max_project_mb"}: file checkpoints
// before each turn (daemon/checkpoints/), pruned by age and count; a project whose recorded
// files exceed max_project_mb gets none.
struct CheckpointConfig {
  bool enabled = true;
  int max_age_days = 14;
  int max_count = 100;
  int64_t max_project_mb = 200;  // the files a snapshot records, together
  int64_t max_file_mb = 20;      // a larger file is left out of the checkpoints
  int64_t max_files = 50000;     // a project with more files gets no checkpoint
  int64_t max_store_mb = 200;    // the project's store on disk, loose objects included
};

// Upper bounds of the subagent settings, whatever the config says.
inline constexpr int kMaxSubagentDepth = 4;
inline constexpr int kMaxSubagentConcurrent = 16;

struct Config {
  ModelSettings model;
  int64_t compact_at_chars = 400000;  // AGENT_COMPACT_AT
  int64_t context_tokens = 0;         // AGENT_CONTEXT_TOKENS; 0: unknown
  int max_steps = 50;                 // AGENT_MAX_STEPS
  int bash_timeout_s = 120;           // AGENT_BASH_TIMEOUT
  int connect_timeout_ms = 10000;     // AGENT_CONNECT_TIMEOUT_MS
  int idle_timeout_ms = 120000;       // AGENT_IDLE_TIMEOUT_MS: no byte for this long
  int max_attempts = 5;               // AGENT_MAX_ATTEMPTS: model request attempts
  // "tool_env": {"keep": [globs], "drop": [globs]}: adjusts which of the client's variables
  // tool commands see (common/tool_env.h). A malformed value is an error, not ignored.
  ToolEnvPolicy tool_env;
  // AGENT_SESSION_IDLE_UNLOAD_S: a session with no client, turn or queued prompt is unloaded
  // from memory after this long (it stays on disk); 0: never.
  int session_idle_unload_s = 600;
  CheckpointConfig checkpoints;
  // Subagents (the `task` tool): children running at once per parent
  // (AGENT_SUBAGENT_MAX_CONCURRENT), and how deep children may nest (AGENT_SUBAGENT_MAX_DEPTH;
  // 0: no `task` tool at all).
  int subagent_max_concurrent = 4;
  int subagent_max_depth = 1;
  // How tool commands are confined (common/sandbox_config.h, daemon/sandbox/).
  SandboxConfig sandbox;
};

// Only the model settings found in the environment (AGENT_BASE_URL, AGENT_API_KEY falling
// back to OPENAI_API_KEY or ANTHROPIC_API_KEY, AGENT_MODEL, AGENT_PROVIDER); empty fields
// where unset. The client sends these with CreateSession.
ModelSettings ModelSettingsFromEnv();

// The full configuration. A malformed config.json is InvalidArgument naming the file.
absl::StatusOr<Config> LoadConfig();

// Fills the empty fields of `primary` from `fallback`, then derives `provider`. A key belongs
// to its endpoint: when `primary` names another base_url than `fallback`, neither the
// fallback's api_key nor its provider is taken (a client's URL must not receive the key
// configured for another server).
ModelSettings MergeModelSettings(const ModelSettings& primary, const ModelSettings& fallback);

// Whether `env_name` is a setting each client reads and sends with its requests (the model
// connection, ClientSettings): a daemon a client starts must not inherit that client's value,
// or every later client would get it as the daemon's default.
bool IsPerClientSetting(std::string_view env_name);

}  // namespace agent
