#include "daemon/prompt/front_matter.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using Kind = FrontMatter::Kind;

TEST(FrontMatterTest, KeysInOrderAndTheBodyAfterTheClosingLine) {
  FrontMatter fm = SplitFrontMatter("---\r\nname: a\nno colon here\n tools : x, y\n---\nBody\n");
  EXPECT_EQ(fm.kind, Kind::kClosed);
  EXPECT_THAT(fm.fields, ElementsAre(Pair("name", " a"), Pair("tools", " x, y")));
  EXPECT_EQ(fm.body, "Body\n");
}

TEST(FrontMatterTest, WithoutAnOpeningOrAClosingLineTheBodyIsTheWholeText) {
  FrontMatter none = SplitFrontMatter("Just a prompt\n---\n");
  EXPECT_EQ(none.kind, Kind::kNone);
  EXPECT_EQ(none.body, "Just a prompt\n---\n");
  FrontMatter open = SplitFrontMatter("---\ndescription: x\nbody, never closed\n");
  EXPECT_EQ(open.kind, Kind::kUnclosed);
  EXPECT_EQ(open.body, "---\ndescription: x\nbody, never closed\n");
  EXPECT_EQ(SplitFrontMatter("").kind, Kind::kNone);
}

}  // namespace
}  // namespace agent::daemon
