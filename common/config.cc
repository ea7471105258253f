#include "common/config.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/atomic_file.h"
#include "common/json.h"
#include "common/paths.h"

namespace agent {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

template <typename T>
void IntFromEnv(const char* name, T* out) {
  int64_t v;
  std::string s = Env(name);
  if (!s.empty() && absl::SimpleAtoi(s, &v) && v >= 0) *out = static_cast<T>(v);
}

template <typename T>
void IntFromJson(const Json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it != j.end() && it->is_number_integer()) *out = it->get<T>();
}

// "tool_env": {"keep": [...], "drop": [...]}, each a list of name globs.
absl::Status ToolEnvFromJson(const Json& j, const std::string& path, ToolEnvPolicy* out) {
  auto it = j.find("tool_env");
  if (it == j.end()) return absl::OkStatus();
  const absl::Status bad = absl::InvalidArgumentError(
      path + ": \"tool_env\" must be {\"keep\": [...], \"drop\": [...]} with name globs");
  if (!it->is_object()) return bad;
  for (const auto& [key, list] : {std::pair{"keep", &out->keep}, std::pair{"drop", &out->drop}}) {
    auto f = it->find(key);
    if (f == it->end()) continue;
    if (!f->is_array()) return bad;
    for (const Json& g : *f) {
      if (!g.is_string() || g.get<std::string>().empty()) return bad;
      list->push_back(g.get<std::string>());
    }
  }
  return absl::OkStatus();
}

absl::Status CheckpointsFromJson(const Json& j, const std::string& path, CheckpointConfig* out) {
  auto it = j.find("checkpoints");
  if (it == j.end()) return absl::OkStatus();
  if (it->is_boolean()) {
    out->enabled = it->get<bool>();
    return absl::OkStatus();
  }
  if (!it->is_object()) {
    return absl::InvalidArgumentError(
        path +
        ": \"checkpoints\" must be false or {\"max_age_days\", \"max_count\", "
        "\"max_project_mb\", \"max_file_mb\", \"max_files\", \"max_store_mb\"}");
  }
  IntFromJson(*it, "max_age_days", &out->max_age_days);
  IntFromJson(*it, "max_count", &out->max_count);
  IntFromJson(*it, "max_project_mb", &out->max_project_mb);
  IntFromJson(*it, "max_file_mb", &out->max_file_mb);
  IntFromJson(*it, "max_files", &out->max_files);
  IntFromJson(*it, "max_store_mb", &out->max_store_mb);
  return absl::OkStatus();
}

std::string WithoutTrailingSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

bool IsPerClientSetting(std::string_view env_name) {
  for (const char* name :
       {"AGENT_BASE_URL", "AGENT_API_KEY", "AGENT_MODEL", "AGENT_PROVIDER", "AGENT_MAX_STEPS",
        "AGENT_MAX_ATTEMPTS", "AGENT_COMPACT_AT", "AGENT_CONTEXT_TOKENS", "AGENT_IDLE_TIMEOUT_MS",
        "AGENT_CONNECT_TIMEOUT_MS", "AGENT_BASH_TIMEOUT", "AGENT_CACHE_TTL"}) {
    if (env_name == name) return true;
  }
  return false;
}

ModelSettings ModelSettingsFromEnv() {
  ModelSettings m;
  m.base_url = Env("AGENT_BASE_URL");
  m.api_key = Env("AGENT_API_KEY");
  if (m.api_key.empty()) m.api_key = Env("OPENAI_API_KEY");
  if (m.api_key.empty()) m.api_key = Env("ANTHROPIC_API_KEY");
  m.model = Env("AGENT_MODEL");
  m.provider = Env("AGENT_PROVIDER");
  m.cache_ttl = Env("AGENT_CACHE_TTL");
  return m;
}

ModelSettings MergeModelSettings(const ModelSettings& primary, const ModelSettings& fallback) {
  ModelSettings m = primary;
  // A fallback key without a URL is a general one (config.json's "api_key" alone).
  const bool same_endpoint =
      m.base_url.empty() || fallback.base_url.empty() ||
      WithoutTrailingSlashes(m.base_url) == WithoutTrailingSlashes(fallback.base_url);
  if (m.base_url.empty()) m.base_url = fallback.base_url;
  if (m.api_key.empty() && same_endpoint) m.api_key = fallback.api_key;
  if (m.model.empty()) m.model = fallback.model;
  if (m.provider.empty() && same_endpoint) m.provider = fallback.provider;
  if (m.cache_ttl.empty()) m.cache_ttl = fallback.cache_ttl;
  if (m.provider.empty()) {
    m.provider = absl::StrContains(m.base_url, "anthropic.com") ? "anthropic" : "openai";
  }
  while (!m.base_url.empty() && m.base_url.back() == '/') m.base_url.pop_back();
  return m;
}

absl::StatusOr<Config> LoadConfig() {
  Config c;
  std::string path = ConfigDir() + "/config.json";
  auto text = ReadFileToString(path);
  if (text.ok()) {
    auto j = ParseJson(*text);
    if (!j.ok() || !j->is_object()) {
      return absl::InvalidArgumentError(
          path + ": " + (j.ok() ? "not a JSON object" : std::string(j.status().message())));
    }
    c.model.base_url = GetString(*j, "base_url");
    c.model.api_key = GetString(*j, "api_key");
    c.model.model = GetString(*j, "model");
    c.model.provider = GetString(*j, "provider");
    c.model.cache_ttl = GetString(*j, "cache_ttl");
    IntFromJson(*j, "compact_at", &c.compact_at_chars);
    IntFromJson(*j, "context_tokens", &c.context_tokens);
    IntFromJson(*j, "max_steps", &c.max_steps);
    IntFromJson(*j, "bash_timeout_s", &c.bash_timeout_s);
    if (absl::Status s = ToolEnvFromJson(*j, path, &c.tool_env); !s.ok()) return s;
    IntFromJson(*j, "session_idle_unload_s", &c.session_idle_unload_s);
    if (absl::Status s = CheckpointsFromJson(*j, path, &c.checkpoints); !s.ok()) return s;
    IntFromJson(*j, "subagent_max_concurrent", &c.subagent_max_concurrent);
    IntFromJson(*j, "subagent_max_depth", &c.subagent_max_depth);
    if (absl::Status s = SandboxConfigFromJson(*j, path, &c.sandbox); !s.ok()) return s;
  } else if (!absl::IsNotFound(text.status())) {
    return text.status();
  }
  c.model = MergeModelSettings(ModelSettingsFromEnv(), c.model);
  IntFromEnv("AGENT_COMPACT_AT", &c.compact_at_chars);
  IntFromEnv("AGENT_CONTEXT_TOKENS", &c.context_tokens);
  IntFromEnv("AGENT_MAX_STEPS", &c.max_steps);
  IntFromEnv("AGENT_BASH_TIMEOUT", &c.bash_timeout_s);
  IntFromEnv("AGENT_CONNECT_TIMEOUT_MS", &c.connect_timeout_ms);
  IntFromEnv("AGENT_IDLE_TIMEOUT_MS", &c.idle_timeout_ms);
  IntFromEnv("AGENT_MAX_ATTEMPTS", &c.max_attempts);
  IntFromEnv("AGENT_SESSION_IDLE_UNLOAD_S", &c.session_idle_unload_s);
  IntFromEnv("AGENT_SUBAGENT_MAX_CONCURRENT", &c.subagent_max_concurrent);
  IntFromEnv("AGENT_SUBAGENT_MAX_DEPTH", &c.subagent_max_depth);
  if (absl::Status s = SandboxConfigFromEnv(&c.sandbox); !s.ok()) return s;
  // Bounded: every level is a session and a thread, and an approval travels one hop per level.
  c.subagent_max_depth = std::clamp(c.subagent_max_depth, 0, kMaxSubagentDepth);
  c.subagent_max_concurrent = std::clamp(c.subagent_max_concurrent, 1, kMaxSubagentConcurrent);
  return c;
}

}  // namespace agent
