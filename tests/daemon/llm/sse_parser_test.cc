#include "daemon/llm/sse_parser.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<SseEvent> ParseChunks(const std::vector<std::string>& chunks,
                                  SseParser* parser = nullptr) {
  SseParser local;
  SseParser* p = parser != nullptr ? parser : &local;
  std::vector<SseEvent> out;
  for (const std::string& c : chunks) p->Feed(c, &out);
  p->Finish(&out);
  return out;
}

std::vector<std::string> Datas(const std::vector<SseEvent>& events) {
  std::vector<std::string> d;
  for (const SseEvent& e : events) d.push_back(e.data);
  return d;
}

std::vector<SseEvent> OneByteAtATime(std::string_view s) {
  SseParser p;
  std::vector<SseEvent> out;
  for (char c : s) p.Feed(std::string_view(&c, 1), &out);
  p.Finish(&out);
  return out;
}

TEST(SseParser, LfTerminatedEvents) {
  EXPECT_THAT(Datas(ParseChunks({"data: a\n\ndata: b\n\n"})), ElementsAre("a", "b"));
}

TEST(SseParser, CrlfTerminatedEvents) {
  EXPECT_THAT(Datas(ParseChunks({"data: a\r\n\r\ndata: b\r\n\r\n"})), ElementsAre("a", "b"));
}

TEST(SseParser, LoneCrTerminatedEvents) {
  EXPECT_THAT(Datas(ParseChunks({"data: a\r\rdata: b\r\r"})), ElementsAre("a", "b"));
}

TEST(SseParser, CrAndLfSplitAcrossFeeds) {
  // If the LF after a CR that ended the previous Feed counted as a second line ending, the
  // blank line would dispatch "a" alone and "b" would become its own event.
  EXPECT_THAT(Datas(ParseChunks({"data: a\r", "\ndata: b\r", "\n\r", "\n"})), ElementsAre("a\nb"));
  // rexxars/eventsource-parser#17: CR LF CR | LF must not produce an extra event.
  EXPECT_THAT(Datas(ParseChunks({"data: x\r\n\r", "\ndata: y\r\n\r\n"})), ElementsAre("x", "y"));
}

TEST(SseParser, CrAtEndOfFeedThenNonLf) {
  EXPECT_THAT(Datas(ParseChunks({"data: a\r", "\rdata: b\r", "\r"})), ElementsAre("a", "b"));
}

TEST(SseParser, MultiByteUtf8SplitAcrossFeeds) {
  const std::string text = "data: 日本😀\n\n";  // 日 = E6 97 A5, 😀 = F0 9F 98 80
  for (size_t cut = 1; cut < text.size(); ++cut) {
    auto events = ParseChunks({text.substr(0, cut), text.substr(cut)});
    ASSERT_EQ(events.size(), 1u) << cut;
    EXPECT_EQ(events[0].data, "日本😀") << cut;
  }
  EXPECT_THAT(Datas(OneByteAtATime(text)), ElementsAre("日本😀"));
}

// Bytes become text at dispatch: ill-formed UTF-8 is replaced (common/utf8.h), a character
// split over reads is not.
TEST(SseParser, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_THAT(Datas(ParseChunks({"data: \xff\xfe\xc3\n\n"})), ElementsAre(r + r + r));
  std::vector<SseEvent> events = ParseChunks({"event: e\xff\nid: i\xfe\ndata: x\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "e" + r);
  EXPECT_EQ(events[0].id, "i" + r);
}

TEST(SseParser, InvalidUtf8GivesTheSameTextForAnySplit) {
  const std::string bytes = "data: a\xE2\x82\n\ndata: \xF0\x9F\x98\x80\xF0\x9F\n\n";
  const std::vector<SseEvent> whole = ParseChunks({bytes});
  EXPECT_THAT(Datas(whole), ElementsAre("a\xEF\xBF\xBD", "\xF0\x9F\x98\x80\xEF\xBF\xBD"));
  EXPECT_EQ(OneByteAtATime(bytes), whole);
}

TEST(SseParser, LineSeparatorU2028DoesNotEndALine) {
  EXPECT_THAT(Datas(ParseChunks({"data: a\xE2\x80\xA8"
                                 "b\xE2\x80\xA9"
                                 "c\n\n"})),
              ElementsAre("a\xE2\x80\xA8"
                          "b\xE2\x80\xA9"
                          "c"));
}

TEST(SseParser, OneByteAtATimeGivesSameEvents) {
  const std::string s =
      "\xEF\xBB\xBF: hi\r\nevent: e1\r\ndata: one\r\ndata:two\r\nid: 7\r\n\r\n"
      "data: three\r\rdata: four\n\n";
  EXPECT_EQ(OneByteAtATime(s), ParseChunks({s}));
  EXPECT_EQ(ParseChunks({s}).size(), 3u);
}

TEST(SseParser, LeadingBomSkipped) {
  EXPECT_THAT(Datas(ParseChunks({"\xEF\xBB\xBF"
                                 "data: a\n\n"})),
              ElementsAre("a"));
}

TEST(SseParser, LeadingBomSplitAcrossFeeds) {
  EXPECT_THAT(Datas(ParseChunks({"\xEF", "\xBB",
                                 "\xBF"
                                 "da",
                                 "ta: a\n\n"})),
              ElementsAre("a"));
}

TEST(SseParser, BomOnlySkippedAtStart) {
  // A BOM later in the stream is content: this line's name is "\xEF\xBB\xBF" "data".
  EXPECT_THAT(ParseChunks({"data: a\n\n\xEF\xBB\xBF"
                           "data: b\n\n"})
                  .size(),
              1u);
}

TEST(SseParser, PartialBomPrefixIsData) {
  // EF BB followed by something else is not a BOM; the bytes belong to the first line.
  auto events = ParseChunks({"\xEF\xBB", "X\ndata: a\n\n"});
  EXPECT_THAT(Datas(events), ElementsAre("a"));
}

TEST(SseParser, CommentsIgnored) {
  EXPECT_THAT(Datas(ParseChunks({": keep-alive\n\n:\ndata: a\n: mid\n\n"})), ElementsAre("a"));
}

TEST(SseParser, DataWithoutSpace) {
  EXPECT_THAT(Datas(ParseChunks({"data:{\"a\":1}\n\n"})), ElementsAre("{\"a\":1}"));
}

TEST(SseParser, ExactlyOneSpaceRemoved) {
  EXPECT_THAT(Datas(ParseChunks({"data:  two\n\n"})), ElementsAre(" two"));
}

TEST(SseParser, MultiLineDataJoinedWithNewline) {
  EXPECT_THAT(Datas(ParseChunks({"data: {\ndata:   \"a\": 1\ndata: }\n\n"})),
              ElementsAre("{\n  \"a\": 1\n}"));
}

TEST(SseParser, EventFieldSetsTypeForOneEvent) {
  auto events = ParseChunks({"event: error\ndata: x\n\ndata: y\n\nevent:ping\ndata: z\n\n"});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event, "error");
  EXPECT_EQ(events[1].event, "");
  EXPECT_EQ(events[2].event, "ping");
}

TEST(SseParser, IdPersistsAcrossEvents) {
  auto events = ParseChunks({"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n"});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, "1");
  EXPECT_EQ(events[1].id, "1");
  EXPECT_EQ(events[2].id, "2");
}

TEST(SseParser, IdWithNulIgnored) {
  auto events = ParseChunks({"id: 1\ndata: a\n\n", std::string("id: 2\0x\ndata: b\n\n", 17)});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].id, "1");
}

TEST(SseParser, RetryOnlyAllDigits) {
  SseParser p;
  ParseChunks({"retry: 1500\n\nretry: 12x\n\nretry: -5\n\n"}, &p);
  EXPECT_EQ(p.retry_ms(), 1500);
  SseParser q;
  ParseChunks({"retry: 99999999999999999999999\n\n"}, &q);
  EXPECT_TRUE(q.retry_ms().has_value());  // saturated, not overflowed
}

TEST(SseParser, EmptyDataEventsSkipped) {
  EXPECT_THAT(ParseChunks({"data:\n\ndata: \n\nevent: x\n\n\n\n"}), IsEmpty());
  // A following event does not inherit the type of a skipped one.
  auto events = ParseChunks({"event: x\n\ndata: a\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "");
}

TEST(SseParser, TwoEmptyDataLinesAreOneNewline) {
  EXPECT_THAT(Datas(ParseChunks({"data:\ndata:\n\n"})), ElementsAre("\n"));
}

TEST(SseParser, FieldWithoutColonHasEmptyValue) {
  EXPECT_THAT(Datas(ParseChunks({"data\ndata: x\n\n"})), ElementsAre("\nx"));
}

TEST(SseParser, UnknownFieldIgnored) {
  EXPECT_THAT(Datas(ParseChunks({"foo: bar\ndata: a\nDATA: b\n\n"})), ElementsAre("a"));
}

TEST(SseParser, UnterminatedEventNotDispatchedButReported) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: a\n\ndata: {\"cut", &out);
  EXPECT_TRUE(p.HasPartialEvent());
  p.Finish(&out);
  EXPECT_THAT(Datas(out), ElementsAre("a"));
  EXPECT_TRUE(p.HasPartialEvent());

  SseParser q;
  out.clear();
  q.Feed("data: a\n\ndata: b\n", &out);  // the line ended, the event did not
  q.Finish(&out);
  EXPECT_THAT(Datas(out), ElementsAre("a"));
  EXPECT_TRUE(q.HasPartialEvent());
}

TEST(SseParser, NoPartialEventAfterCleanEnd) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: a\n\n: trailing comment", &out);
  EXPECT_FALSE(p.HasPartialEvent());
  p.Finish(&out);
  EXPECT_FALSE(p.HasPartialEvent());
  EXPECT_THAT(Datas(out), ElementsAre("a"));
}

TEST(SseParser, DispatchUnterminatedAtEndOption) {
  SseParser p(SseParser::Options{.dispatch_unterminated_at_end = true});
  std::vector<SseEvent> out;
  p.Feed("data: a\n\nevent: last\ndata: b", &out);
  p.Finish(&out);
  ASSERT_THAT(Datas(out), ElementsAre("a", "b"));
  EXPECT_EQ(out[1].event, "last");
  EXPECT_TRUE(p.HasPartialEvent());
}

TEST(SseParser, FinishTwiceIsHarmless) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: a\n\n", &out);
  p.Finish(&out);
  p.Finish(&out);
  EXPECT_EQ(out.size(), 1u);
}

SseParser::Options SmallCap(size_t bytes) {
  SseParser::Options options;
  options.max_event_bytes = bytes;
  return options;
}

TEST(SseParser, DataLineOverTheCapStopsTheParser) {
  SseParser parser(SmallCap(16));
  std::vector<SseEvent> out;
  parser.Feed("data: ok\n\ndata: " + std::string(17, 'x') + "\n\ndata: later\n\n", &out);
  EXPECT_THAT(Datas(out), ElementsAre("ok"));  // what came before the cap is delivered
  EXPECT_EQ(parser.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(parser.status().message()), ::testing::HasSubstr("kMaxSseEventBytes"));
  EXPECT_THAT(std::string(parser.status().message()), ::testing::HasSubstr("16 bytes"));
  parser.Feed("data: more\n\n", &out);  // ignored from now on
  parser.Finish(&out);
  EXPECT_THAT(Datas(out), ElementsAre("ok"));
}

TEST(SseParser, UnendedLineOverTheCapStopsTheParserWhileBuffering) {
  SseParser parser(SmallCap(16));
  std::vector<SseEvent> out;
  for (int i = 0; i < 5 && parser.status().ok(); ++i) parser.Feed("data: xxxx", &out);
  EXPECT_EQ(parser.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(out.empty());
}

TEST(SseParser, EventOfManyDataLinesOverTheCapStopsTheParser) {
  SseParser parser(SmallCap(16));
  std::vector<SseEvent> out;
  parser.Feed("data: 12345\ndata: 12345\ndata: 12345\n\n", &out);
  EXPECT_EQ(parser.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(out.empty());
}

TEST(SseParser, EventJustUnderTheCapPasses) {
  SseParser parser(SmallCap(16));
  std::vector<SseEvent> out;
  parser.Feed("data: " + std::string(10, 'x') + "\n\n", &out);  // the line is 16 bytes
  EXPECT_TRUE(parser.status().ok());
  EXPECT_THAT(Datas(out), ElementsAre(std::string(10, 'x')));
}

TEST(SseParser, DefaultCapIsEightMiB) {
  EXPECT_EQ(kMaxSseEventBytes, size_t{8} << 20);
  SseParser parser;
  std::vector<SseEvent> out;
  const std::string big(kMaxSseEventBytes, 'x');
  parser.Feed("data: ", &out);
  parser.Feed(big, &out);
  EXPECT_EQ(parser.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(parser.status().message()), ::testing::HasSubstr("8 MiB"));
}

}  // namespace
}  // namespace agent::daemon::llm
