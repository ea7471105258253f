#include "client/view/allow_warnings.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(AllowWarningsTest, ARuleThatAllowsEveryCommandIsNamedAsSuch) {
  for (const char* r : {"bash(*)", "bash", "Bash(*)", "bash(**)"}) {
    EXPECT_THAT(AllowRuleWarnings(r), ElementsAre(HasSubstr("allows every command"))) << r;
  }
  EXPECT_THAT(AllowRuleWarnings("bash(make *)"), IsEmpty());
}

TEST(AllowWarningsTest, AStarInAPathRuleIsExplainedWithTheGlobThatWasMeant) {
  EXPECT_THAT(
      AllowRuleWarnings("edit_file(*)"),
      ElementsAre(::testing::AllOf(HasSubstr("matches only files directly in the project's top"),
                                   HasSubstr("edit_file(**)"))));
  EXPECT_THAT(AllowRuleWarnings("write_file(src/*)"),
              ElementsAre(HasSubstr("directly in that folder")));
  EXPECT_THAT(AllowRuleWarnings("edit_file(src/**)"), IsEmpty());
  EXPECT_THAT(AllowRuleWarnings("edit_file(**)"), ElementsAre(HasSubstr("every file")));
}

}  // namespace
}  // namespace agent::client
