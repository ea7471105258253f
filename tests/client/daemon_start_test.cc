#include "client/link/daemon_start.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

using ::testing::ElementsAre;

TEST(DaemonEnvironmentTest, KeepsWhatTheDaemonNeedsAndDropsSecrets) {
  std::vector<std::string> env = {"PATH=/usr/bin",
                                  "HOME=/home/me",
                                  "XDG_RUNTIME_DIR=/run/user/1",
                                  "LANG=C.UTF-8",
                                  "LC_ALL=C.UTF-8",
                                  "TZ=UTC",
                                  "USER=me",
                                  "AGENT_MODEL=gpt",
                                  "AGENT_BASE_URL=http://first-client/v1",
                                  "AGENT_MAX_STEPS=1",
                                  "AGENT_SESSION_IDLE_UNLOAD_S=5",
                                  "AGENT_SOCKET=/run/a.sock",
                                  "AGENT_API_KEY=sk-1",
                                  "OPENAI_API_KEY=sk-2",
                                  "FOO_TOKEN=t",
                                  "AGENT_SECRET_X=s",
                                  "agent_password=p",
                                  "XDG_Api_Key=k",
                                  "EDITOR=vi",
                                  "SSH_AUTH_SOCK=/tmp/s",
                                  "https_proxy=http://proxy:3128",
                                  "GITHUB_TOKEN=ghp",
                                  "noequals",
                                  "=x"};
  EXPECT_THAT(DaemonEnvironment(env),
              ElementsAre("PATH=/usr/bin", "HOME=/home/me", "XDG_RUNTIME_DIR=/run/user/1",
                          "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC", "USER=me",
                          // Per-client settings stay with the client that started it.
                          "AGENT_SESSION_IDLE_UNLOAD_S=5", "AGENT_SOCKET=/run/a.sock",
                          "https_proxy=http://proxy:3128"));
}

}  // namespace
}  // namespace agent::client
