#include "daemon/policy/protected_paths.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::policy {
namespace {

using ::testing::HasSubstr;

TEST(ProtectedPathReason, ProtectedPaths) {
  struct Case {
    const char* path;
    const char* reason;  // a substring of the reason
  };
  for (const Case& c : {
           Case{".agent", ".agent"},
           Case{".agent/settings.json", ".agent"},
           Case{"./.agent//settings.json", ".agent"},
           Case{".agent/deep/x", ".agent"},
           Case{"sub/.agent/settings.json", ".agent"},
           Case{".AGENT/settings.json", ".agent"},
           Case{".Agent./settings.json", ".agent"},
           Case{"AGENT~1/settings.json", ".agent"},
           Case{".git", "another repository"},
           Case{".git/", "another repository"},
           Case{"sub/.git", "another repository"},
           Case{".git/config", "run commands"},
           Case{".GIT/CONFIG", "run commands"},
           Case{".Git/config", "run commands"},
           Case{".git /config", "run commands"},
           Case{".git./config", "run commands"},
           Case{"GIT~1/config", "run commands"},
           Case{".g\u200cit/config", "run commands"},
           Case{"\ufeff.git/config", "run commands"},
           Case{"sub/.git/config", "run commands"},
           Case{"a/b/.git/config", "run commands"},
           Case{".git/hooks", "hooks"},
           Case{".git/hooks/pre-commit", "hooks"},
           Case{".git/HOOKS/pre-commit", "hooks"},
           Case{"a/b/.git/hooks/x", "hooks"},
           Case{".git/modules/sub/hooks/post-checkout", "own state"},
           Case{".git/modules/sub/config", "own state"},
           Case{".git/config/x", "own state"},
           Case{".git/info/attributes", "own state"},
           Case{".git/refs/heads/main", "own state"},
           Case{"", "workdir-relative"},
           Case{"/etc/passwd", "workdir-relative"},
           Case{".", "workdir itself"},
           Case{"a/../.git/config", "`..`"},
           Case{"../x", "`..`"},
       }) {
    const std::optional<std::string> reason = ProtectedPathReason(c.path);
    ASSERT_TRUE(reason.has_value()) << c.path;
    EXPECT_THAT(*reason, HasSubstr(c.reason)) << c.path;
  }
  EXPECT_TRUE(ProtectedPathReason(std::string("a\0/.git", 7)).has_value());
}

TEST(ProtectedPathReason, OrdinaryPaths) {
  for (const char* path : {
           "src/a.cc",
           "README.md",
           ".gitignore",
           ".gitmodules",
           ".gitattributes",
           ".github/workflows/ci.yml",
           ".git-blame-ignore-revs",
           "git/config",
           "docs/.gitkeep",
           "agent/settings.json",
           ".agents/x",
           "x.git/config",
           "hooks/pre-commit",
           "config",
       }) {
    EXPECT_EQ(ProtectedPathReason(path), std::nullopt) << path;
  }
}

}  // namespace
}  // namespace agent::daemon::policy
