#include "client/link/client_settings.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

struct Setting {
  const char* name;
  int64_t max;
  void (*set)(v1::ClientSettings*, int64_t);
};

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

const std::vector<Setting>& Settings() {
  static const std::vector<Setting>* s = new std::vector<Setting>{
      {"AGENT_MAX_STEPS", kInt32Max,
       [](v1::ClientSettings* c, int64_t v) { c->set_max_steps(static_cast<int32_t>(v)); }},
      {"AGENT_COMPACT_AT", std::numeric_limits<int64_t>::max(),
       [](v1::ClientSettings* c, int64_t v) { c->set_compact_at_chars(v); }},
      {"AGENT_CONTEXT_TOKENS", std::numeric_limits<int64_t>::max(),
       [](v1::ClientSettings* c, int64_t v) { c->set_context_tokens(v); }},
      {"AGENT_MAX_ATTEMPTS", kInt32Max,
       [](v1::ClientSettings* c, int64_t v) { c->set_max_attempts(static_cast<int32_t>(v)); }},
      {"AGENT_IDLE_TIMEOUT_MS", kInt32Max,
       [](v1::ClientSettings* c, int64_t v) { c->set_idle_timeout_ms(static_cast<int32_t>(v)); }},
      {"AGENT_CONNECT_TIMEOUT_MS", kInt32Max,
       [](v1::ClientSettings* c, int64_t v) {
         c->set_connect_timeout_ms(static_cast<int32_t>(v));
       }},
      {"AGENT_BASH_TIMEOUT", kInt32Max,
       [](v1::ClientSettings* c, int64_t v) { c->set_bash_timeout_s(static_cast<int32_t>(v)); }},
  };
  return *s;
}

}  // namespace

absl::StatusOr<v1::ClientSettings> ClientSettingsFromEnv(const EnvLookup& env) {
  v1::ClientSettings out;
  for (const Setting& s : Settings()) {
    const char* raw = env(s.name);
    if (raw == nullptr || raw[0] == '\0') continue;
    int64_t v = 0;
    if (!absl::SimpleAtoi(raw, &v) || v <= 0 || v > s.max) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.name, "=", raw, " is not a whole number from 1 to ", s.max));
    }
    s.set(&out, v);
  }
  return out;
}

const std::vector<std::string>& ClientSettingNames() {
  static const std::vector<std::string>* names = [] {
    auto* n = new std::vector<std::string>;
    for (const Setting& s : Settings()) n->push_back(s.name);
    return n;
  }();
  return *names;
}

}  // namespace agent::client
