#include "daemon/llm/model_list.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ParseModelIds, ReadsTheOpenAiAndAnthropicShapeSortedAndUnique) {
  EXPECT_THAT(ParseModelIds(R"({"object":"list","data":[{"id":"b"},{"id":"a"},{"id":"b"}]})"),
              ElementsAre("a", "b"));
  EXPECT_THAT(ParseModelIds(R"({"data":[{"id":"claude-x","type":"model"}],"has_more":false})"),
              ElementsAre("claude-x"));
}

TEST(ParseModelIds, ReadsOllamasTagList) {
  EXPECT_THAT(ParseModelIds(R"({"models":[{"name":"qwen3:8b"},{"name":"llama3"}]})"),
              ElementsAre("llama3", "qwen3:8b"));
}

TEST(ParseModelIds, AnythingElseIsEmpty) {
  for (const char* body : {"", "[]", "not json", R"({"data":{}})", R"({"data":[1,"x",{}]})",
                           R"({"error":{"message":"no"}})"}) {
    EXPECT_THAT(ParseModelIds(body), IsEmpty()) << body;
  }
}

TEST(ListProviderModels, WithoutAnEndpointSaysSo) {
  ModelList list = ListProviderModels(ModelSettings{}, 1000, 1000);
  EXPECT_THAT(list.models, IsEmpty());
  EXPECT_THAT(list.message, HasSubstr("AGENT_BASE_URL"));
}

TEST(ListProviderModels, NothingListeningOnLoopbackIsNamed) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);  // free again: nothing listens there
  const std::string base = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1";
  ModelList list = ListProviderModels(ModelSettings{base, "", "", "openai", ""}, 2000, 2000);
  EXPECT_THAT(list.models, IsEmpty());
  EXPECT_THAT(list.message, HasSubstr("nothing listens on " + base + "/models"));
}

}  // namespace
}  // namespace agent::daemon::llm
