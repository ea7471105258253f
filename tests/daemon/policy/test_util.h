// Helpers shared by the policy tests: rule sets from text, verdicts for one call, and a
// fixture with a fresh temp directory for settings files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/atomic_file.h"
#include "common/json.h"
#include "daemon/policy/rules.h"
#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon::policy::testing {

// REQUIRES: every text parses (ParseRule).
inline RuleSet Rules(const std::vector<std::string>& allow,
                     const std::vector<std::string>& deny = {}) {
  RuleSet set;
  for (const std::string& text : allow) set.allow.push_back(ParseRule(text).value());
  for (const std::string& text : deny) set.deny.push_back(ParseRule(text).value());
  return set;
}

inline Verdict Bash(const RuleSet& rules, std::string_view command) {
  return Evaluate(rules, "bash", Json{{"command", std::string(command)}});
}

inline std::vector<std::string> Formatted(const std::vector<Rule>& rules) {
  std::vector<std::string> out;
  for (const Rule& r : rules) out.push_back(FormatRule(r));
  return out;
}

// Settings files in a temp directory of the test's own, removed after it.
class RulesDirTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.Join(name); }
  // Writes `content` to Path(name) and returns that path.
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = Path(name);
    EXPECT_TRUE(WriteFileAtomically(path, content).ok());
    return path;
  }

  agent::testing::TempDir dir_;
};

}  // namespace agent::daemon::policy::testing
