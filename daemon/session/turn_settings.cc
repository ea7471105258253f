#include "daemon/session/turn_settings.h"

namespace agent::daemon {

namespace v1 = agent::v1;

v1::ClientSettings OverlayClientSettings(const v1::ClientSettings& base,
                                         const v1::ClientSettings& sent) {
  v1::ClientSettings out = base;
  if (sent.max_steps() > 0) out.set_max_steps(sent.max_steps());
  if (sent.max_attempts() > 0) out.set_max_attempts(sent.max_attempts());
  if (sent.compact_at_chars() > 0) out.set_compact_at_chars(sent.compact_at_chars());
  if (sent.context_tokens() > 0) out.set_context_tokens(sent.context_tokens());
  if (sent.idle_timeout_ms() > 0) out.set_idle_timeout_ms(sent.idle_timeout_ms());
  if (sent.connect_timeout_ms() > 0) out.set_connect_timeout_ms(sent.connect_timeout_ms());
  if (sent.bash_timeout_s() > 0) out.set_bash_timeout_s(sent.bash_timeout_s());
  return out;
}

TurnSettings ResolveTurnSettings(const v1::ClientSettings& sent, const v1::ClientSettings& session,
                                 const Config& config) {
  const v1::ClientSettings s = OverlayClientSettings(session, sent);
  auto pick = [](auto value, auto fallback) {
    return value > 0 ? value : static_cast<decltype(value)>(fallback);
  };
  TurnSettings t;
  t.max_steps = pick(s.max_steps(), config.max_steps);
  t.max_attempts = pick(s.max_attempts(), config.max_attempts);
  t.compact_at_chars = pick(s.compact_at_chars(), config.compact_at_chars);
  t.context_tokens = pick(s.context_tokens(), config.context_tokens);
  t.idle_timeout_ms = pick(s.idle_timeout_ms(), config.idle_timeout_ms);
  t.connect_timeout_ms = pick(s.connect_timeout_ms(), config.connect_timeout_ms);
  t.bash_timeout_s = pick(s.bash_timeout_s(), config.bash_timeout_s);
  return t;
}

}  // namespace agent::daemon
