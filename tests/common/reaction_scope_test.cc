#include "common/reaction_scope.h"

#include <filesystem>
#include <string>

#include "common/atomic_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::TempDir;

TEST(ReactionScopeTest, ScopesNestAndEnd) {
  EXPECT_FALSE(ReactionScope::Active());
  {
    ReactionScope outer;
    {
      ReactionScope inner;
      EXPECT_TRUE(ReactionScope::Active());
    }
    EXPECT_TRUE(ReactionScope::Active());
  }
  EXPECT_FALSE(ReactionScope::Active());
}

TEST(ReactionScopeTest, FilesAreWrittenOutsideAReaction) {
  TempDir dir;
  EXPECT_THAT(WriteFileAtomically(dir.Join("a"), "x", Durability::kUnsynced), IsOk());
  EXPECT_THAT(AppendToFile(dir.Join("b"), "x"), IsOk());
}

#ifndef NDEBUG
using ReactionScopeDeathTest = ::testing::Test;

// The debug check that keeps the disk off gRPC's callback threads (agent_service*.cc).
TEST(ReactionScopeDeathTest, AWriteInsideAReactionAbortsNamingTheFile) {
  TempDir dir;
  const std::string path = dir.Join("written-from-a-reaction");
  EXPECT_DEATH(
      {
        ReactionScope reaction;
        (void)WriteFileAtomically(path, "x", Durability::kUnsynced);
      },
      "written-from-a-reaction on a gRPC callback thread");
  EXPECT_DEATH(
      {
        ReactionScope reaction;
        (void)AppendToFile(path, "x");
      },
      "append to .*written-from-a-reaction");
  EXPECT_FALSE(std::filesystem::exists(path));
}
#endif

}  // namespace
}  // namespace agent
