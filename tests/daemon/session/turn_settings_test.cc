#include "daemon/session/turn_settings.h"

#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

namespace v1 = agent::v1;

Config Daemon() {
  Config c;
  c.max_steps = 50;
  c.max_attempts = 5;
  c.compact_at_chars = 400000;
  c.context_tokens = 0;
  c.idle_timeout_ms = 120000;
  c.connect_timeout_ms = 10000;
  c.bash_timeout_s = 120;
  return c;
}

TEST(ResolveTurnSettings, ThePromptsClientWinsThenTheSessionThenTheDaemon) {
  v1::ClientSettings session;
  session.set_max_steps(50);
  session.set_bash_timeout_s(7);
  v1::ClientSettings sent;
  sent.set_max_steps(1);
  sent.set_max_attempts(2);
  sent.set_context_tokens(8000);
  TurnSettings t = ResolveTurnSettings(sent, session, Daemon());
  EXPECT_EQ(t.max_steps, 1);
  EXPECT_EQ(t.max_attempts, 2);
  EXPECT_EQ(t.context_tokens, 8000);
  EXPECT_EQ(t.bash_timeout_s, 7);
  EXPECT_EQ(t.compact_at_chars, 400000);
  EXPECT_EQ(t.idle_timeout_ms, 120000);
  EXPECT_EQ(t.connect_timeout_ms, 10000);
}

TEST(ResolveTurnSettings, NothingSentTakesTheDaemonsDefaults) {
  TurnSettings t = ResolveTurnSettings({}, {}, Daemon());
  EXPECT_EQ(t.max_steps, 50);
  EXPECT_EQ(t.max_attempts, 5);
  EXPECT_EQ(t.bash_timeout_s, 120);
}

TEST(OverlayClientSettings, OnlySetFieldsReplace) {
  v1::ClientSettings base;
  base.set_max_steps(3);
  base.set_idle_timeout_ms(100);
  v1::ClientSettings sent;
  sent.set_idle_timeout_ms(200);
  sent.set_connect_timeout_ms(-1);  // not a setting: ignored
  v1::ClientSettings out = OverlayClientSettings(base, sent);
  EXPECT_EQ(out.max_steps(), 3);
  EXPECT_EQ(out.idle_timeout_ms(), 200);
  EXPECT_EQ(out.connect_timeout_ms(), 0);
}

}  // namespace
}  // namespace agent::daemon
