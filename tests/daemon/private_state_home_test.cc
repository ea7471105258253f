// Every test of this binary gets a private $XDG_STATE_HOME unless it sets its own: sessions
// are saved in the state directory (daemon/store/sessions_dir.h), which must never be the home
// directory of the person running the tests.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace {

class PrivateStateHome : public ::testing::Environment {
 public:
  void SetUp() override {
    char tmpl[] = "/tmp/agent-test-state-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    ::setenv("XDG_STATE_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::string dir_;
};

// Registered before main runs RUN_ALL_TESTS (gtest owns and deletes the environment).
[[maybe_unused]] ::testing::Environment* const kPrivateStateHome =
    ::testing::AddGlobalTestEnvironment(new PrivateStateHome);

}  // namespace

TEST(PrivateStateHomeTest, TheStateDirectoryIsPrivateToTheseTests) {
  const char* state = ::getenv("XDG_STATE_HOME");
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(std::string(state).rfind("/tmp/", 0), 0u) << state;
}
