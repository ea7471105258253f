#include "daemon/llm/request_body.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

// Reads the whole body `chunk` bytes at a time, as libcurl's read callback does.
std::string ReadAll(const RequestBody& body, size_t chunk) {
  RequestBody::Reader reader(body);
  std::string out;
  std::string buf(chunk, '\0');
  for (int guard = 0; guard < 100000; ++guard) {
    const size_t n = reader.Read(buf.data(), chunk);
    if (n == 0) break;
    out.append(buf, 0, n);
  }
  return out;
}

RequestBody Sample() {
  auto owner = std::make_shared<const std::string>("0123456789");
  RequestBody body("{");
  body.Append(owner, std::string_view(*owner).substr(2, 3));  // "234"
  body.Append(owner, std::string_view(*owner).substr(5, 2));  // "56": joins the piece before
  body.Append(std::string("}"));
  return body;
}

TEST(RequestBodyTest, PiecesReadInOrderInAnyChunkSize) {
  const RequestBody body = Sample();
  EXPECT_EQ(body.Text(), "{23456}");
  EXPECT_EQ(body.size(), 7u);
  EXPECT_EQ(body.pieces(), 3u);  // contiguous views of one owner are one piece
  for (size_t chunk : {1, 2, 3, 7, 64}) EXPECT_EQ(ReadAll(body, chunk), "{23456}") << chunk;
}

TEST(RequestBodyTest, InsertSplitsAPieceAndLeavesTheOwnersText) {
  auto owner = std::make_shared<const std::string>("abcdef");
  RequestBody body;
  body.Append(owner, *owner);
  body.Insert(3, "XY");
  body.Insert(0, "<");
  body.Insert(body.size(), ">");
  EXPECT_EQ(body.Text(), "<abcXYdef>");
  EXPECT_EQ(ReadAll(body, 2), "<abcXYdef>");
  EXPECT_EQ(*owner, "abcdef");
}

TEST(RequestBodyTest, TruncateAndSubstr) {
  RequestBody body = Sample();
  EXPECT_EQ(body.Substr(1, 4), "2345");
  EXPECT_EQ(body.Substr(5, 100), "6}");
  EXPECT_EQ(body.Substr(9, 1), "");
  body.Truncate(3);
  EXPECT_EQ(body.Text(), "{23");
  EXPECT_EQ(body.pieces(), 2u);
  body.Append(std::string("!"));
  EXPECT_EQ(ReadAll(body, 1), "{23!");
}

TEST(RequestBodyTest, SeekRewindsTheReader) {
  const RequestBody body = Sample();
  RequestBody::Reader reader(body);
  char buf[8] = {};
  ASSERT_EQ(reader.Read(buf, 5), 5u);
  ASSERT_TRUE(reader.Seek(2));
  ASSERT_EQ(reader.Read(buf, 8), 5u);
  EXPECT_EQ(std::string(buf, 5), "3456}");
  EXPECT_TRUE(reader.Seek(7));
  EXPECT_EQ(reader.Read(buf, 8), 0u);
  EXPECT_FALSE(reader.Seek(8));
}

}  // namespace
}  // namespace agent::daemon::llm
