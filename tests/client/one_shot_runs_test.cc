#include "client/link/one_shot_runs.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/fakes/temp_dir.h"

namespace agent::client {
namespace {

TEST(OneShotRunsTest, RemembersIdsAndKeepsTheNewestWithinABound) {
  agent::testing::TempDir dir;
  const std::string path = dir.Join("state/one-shot-sessions");
  EXPECT_TRUE(OneShotSessions(path).empty());  // no file yet
  RememberOneShot(path, "aaa");
  RememberOneShot(path, "bbb");
  RememberOneShot(path, "bad\nid");  // never a line of its own
  EXPECT_EQ(OneShotSessions(path), (std::set<std::string>{"aaa", "bbb"}));
  for (size_t i = 0; i < 2 * kMaxOneShotIds; ++i) {
    RememberOneShot(path, "session-" + std::to_string(i) + std::string(40, 'x'));
  }
  std::set<std::string> ids = OneShotSessions(path);
  EXPECT_LE(ids.size(), kMaxOneShotIds + 3000);
  EXPECT_EQ(ids.count("aaa"), 0u);  // the oldest went
  EXPECT_EQ(ids.count("session-" + std::to_string(2 * kMaxOneShotIds - 1) + std::string(40, 'x')),
            1u);
  EXPECT_LT(std::filesystem::file_size(path), 512u << 10);
}

}  // namespace
}  // namespace agent::client
