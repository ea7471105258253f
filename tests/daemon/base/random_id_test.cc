#include "daemon/base/random_id.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

TEST(RandomIdTest, SixteenLowercaseHexDigitsPerWordAndNoRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = RandomHexId(2);
    ASSERT_EQ(id.size(), 32u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
  EXPECT_EQ(RandomHexId(1).size(), 16u);
}

}  // namespace
}  // namespace agent::daemon
