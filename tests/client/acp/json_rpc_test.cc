#include "client/acp/json_rpc.h"

#include "gtest/gtest.h"

namespace agent::client::acp {
namespace {

TEST(LineReaderTest, SplitsLinesInAnyChunkingAndSkipsBlankOnes) {
  LineReader r;
  std::vector<LineReader::Line> lines = r.Feed("{\"a\":1}\r\n\n  \n{\"b\"");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "{\"a\":1}");
  lines = r.Feed(":2}\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, "{\"b\":2}");
}

TEST(LineReaderTest, AnOverlongLineIsReportedOnceAndSkippedToItsEnd) {
  LineReader r(/*max_bytes=*/8);
  std::vector<LineReader::Line> lines = r.Feed("0123456789");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].too_long);
  lines = r.Feed(std::string(100, 'x'));  // still the same line: nothing kept, nothing said
  EXPECT_TRUE(lines.empty());
  lines = r.Feed("tail\n{}\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].too_long);
  EXPECT_EQ(lines[0].text, "{}");
}

TEST(ParseMessageTest, SortsRequestsNotificationsAndResponses) {
  Message m =
      ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/"}})");
  EXPECT_EQ(m.kind, Message::kRequest);
  EXPECT_EQ(m.id, Json(7));
  EXPECT_EQ(m.method, "session/new");
  EXPECT_EQ(m.params["cwd"], Json("/"));
  m = ParseMessage(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}})");
  EXPECT_EQ(m.kind, Message::kNotification);
  m = ParseMessage(R"({"jsonrpc":"2.0","id":"x","result":{"outcome":{"outcome":"cancelled"}}})");
  EXPECT_EQ(m.kind, Message::kResponse);
  EXPECT_EQ(m.id, Json("x"));
  m = ParseMessage(R"({"jsonrpc":"2.0","id":3,"method":"initialize"})");
  EXPECT_EQ(m.kind, Message::kRequest);
  EXPECT_TRUE(m.params.is_object());
}

TEST(ParseMessageTest, BadInputGetsTheProtocolsCodes) {
  EXPECT_EQ(ParseMessage("{not json").code, kParseError);
  EXPECT_EQ(ParseMessage("\"\xff\"").code, kParseError);  // invalid UTF-8
  EXPECT_EQ(ParseMessage("[1,2]").code, kInvalidRequest);
  EXPECT_EQ(ParseMessage("42").code, kInvalidRequest);
  EXPECT_EQ(ParseMessage(R"({"id":1,"method":"x"})").code, kInvalidRequest);  // no jsonrpc
  EXPECT_EQ(ParseMessage(R"({"jsonrpc":"2.0","id":1,"method":5})").code, kInvalidRequest);
  EXPECT_EQ(ParseMessage(R"({"jsonrpc":"2.0","id":{},"method":"x"})").code, kInvalidRequest);
  Message m = ParseMessage(R"({"jsonrpc":"2.0","id":4,"method":"x","params":[1]})");
  EXPECT_EQ(m.kind, Message::kInvalid);
  EXPECT_EQ(m.code, kInvalidParams);
  EXPECT_EQ(m.id, Json(4));  // answered to the request it was
}

TEST(JsonRpcLinesTest, AreOneLineEach) {
  std::string line = ErrorLine(nullptr, kParseError, "bad\nthing");
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  absl::StatusOr<Json> j = ParseJson(line);
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE((*j)["id"].is_null());
  EXPECT_EQ((*j)["error"]["code"], Json(kParseError));
  j = ParseJson(RequestLine(3, "session/request_permission", Json{{"a", 1}}));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["id"], Json(3));
  EXPECT_EQ((*j)["jsonrpc"], Json("2.0"));
}

}  // namespace
}  // namespace agent::client::acp
