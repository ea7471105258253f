#include "client/commands/trust_command.h"

#include "gtest/gtest.h"

namespace agent::client {
namespace {

// A rule is repository content: what the person is asked to trust is shown with every
// character that could act on the terminal or hide text written as an escape.
TEST(UntrustedRulesListTest, EveryRuleIsShownWithEscapes) {
  agent::v1::TrustProjectRulesResponse listed;
  listed.set_settings_path("/p/.agent/settings.json");
  listed.add_untrusted("bash(make *)");
  listed.add_untrusted("bash(\x1b[2Jevil)");
  listed.add_untrusted(
      "bash(rm -rf \xe2\x80\xae"
      "fdp.txt)");  // right-to-left override
  EXPECT_EQ(UntrustedRulesList(listed),
            "/p/.agent/settings.json allows 3 rule(s) you have not trusted for this project:\n"
            "  bash(make *)\n"
            "  bash(\\x1b[2Jevil)\n"
            "  bash(rm -rf \\u202efdp.txt)\n");
}

}  // namespace
}  // namespace agent::client
