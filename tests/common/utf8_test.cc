#include "common/utf8.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent {
namespace {

const std::string kFffd(kReplacementChar);

// A validator written differently from the code under test: decode each code point with
// bit arithmetic, then reject overlongs, surrogates and values past U+10FFFF.
bool ReferenceValid(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string Fffd(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += kFffd;
  return out;
}

TEST(Utf8, ValidTextIsReturnedAsIs) {
  const std::string s = std::string("plain ascii, é, €, 😀 and a NUL: ") + '\0' + "!";
  EXPECT_TRUE(IsValidUtf8(s));
  EXPECT_EQ(ToValidUtf8(s), s);
  std::string in_place = s;
  MakeValidUtf8(&in_place);
  EXPECT_EQ(in_place, s);
  EXPECT_EQ(ToValidUtf8(""), "");
}

TEST(Utf8, BoundaryCodePointsAreValid) {
  for (const char* h :
       {"7F", "C280", "DFBF", "E0A080", "ED9FBF", "EE8080", "EFBFBF", "F0908080", "F48FBFBF"}) {
    EXPECT_TRUE(IsValidUtf8(Hex(h))) << h;
  }
}

TEST(Utf8, OverlongEncodingsAreReplaced) {
  EXPECT_FALSE(IsValidUtf8(Hex("C0AF")));
  EXPECT_EQ(ToValidUtf8(Hex("C0AF")), Fffd(2));      // "/" in two bytes
  EXPECT_EQ(ToValidUtf8(Hex("E080AF")), Fffd(3));    // in three
  EXPECT_EQ(ToValidUtf8(Hex("F08080AF")), Fffd(4));  // in four
  EXPECT_EQ(ToValidUtf8(Hex("C1BF") + "x"), Fffd(2) + "x");
}

TEST(Utf8, SurrogatesAndValuesPastTheLastCodePointAreReplaced) {
  EXPECT_EQ(ToValidUtf8(Hex("EDA080")), Fffd(3));    // U+D800
  EXPECT_EQ(ToValidUtf8(Hex("EDBFBF")), Fffd(3));    // U+DFFF
  EXPECT_EQ(ToValidUtf8(Hex("F4908080")), Fffd(4));  // U+110000
  EXPECT_EQ(ToValidUtf8(Hex("F8888080")), Fffd(4));  // old 5-byte form
  EXPECT_EQ(ToValidUtf8(Hex("FE") + Hex("FF")), Fffd(2));
}

TEST(Utf8, TruncatedSequencesBecomeOneReplacementEach) {
  EXPECT_EQ(ToValidUtf8(Hex("E282")), Fffd(1));
  EXPECT_EQ(ToValidUtf8(Hex("F09F98")), Fffd(1));
  EXPECT_EQ(ToValidUtf8("a" + Hex("F09F98") + "b"), "a" + Fffd(1) + "b");
  EXPECT_EQ(ToValidUtf8(Hex("80")), Fffd(1));  // a lone continuation byte
}

// Cases that came from daemon/llm's former stream_utf8_test (expected values from Python's
// bytes.decode("utf-8", "replace")).
TEST(Utf8, StrayBytesBecomeOneReplacementEach) {
  EXPECT_EQ(ToValidUtf8("a" + Hex("FF") + "b"), "a" + Fffd(1) + "b");
  EXPECT_EQ(ToValidUtf8(Hex("8080")), Fffd(2));
  EXPECT_EQ(ToValidUtf8(Hex("F5")), Fffd(1));
  EXPECT_EQ(ToValidUtf8(Hex("C3")), Fffd(1));
  EXPECT_EQ(ToValidUtf8(Hex("E282") + "x"), Fffd(1) + "x");
  EXPECT_TRUE(IsValidUtf8("\xE2\x80\xA8"));  // U+2028 LINE SEPARATOR
}

TEST(Utf8, MakeValidUtf8RepairsInPlace) {
  std::string s = "ok" + Hex("FF");
  MakeValidUtf8(&s);
  EXPECT_EQ(s, "ok" + kFffd);
}

TEST(Utf8, Utf8UnitAtStepsOverCharactersAndMaximalSubparts) {
  const std::string s = "a" + Hex("C3A9") + Hex("F09F98") + "b" + Hex("E0");
  EXPECT_EQ(Utf8UnitAt(s, 0).len, 1u);
  EXPECT_TRUE(Utf8UnitAt(s, 0).valid);
  EXPECT_EQ(Utf8UnitAt(s, 1).len, 2u);  // é
  EXPECT_TRUE(Utf8UnitAt(s, 1).valid);
  EXPECT_EQ(Utf8UnitAt(s, 3).len, 3u);  // a 4-byte character cut short by "b"
  EXPECT_FALSE(Utf8UnitAt(s, 3).valid);
  EXPECT_EQ(Utf8UnitAt(s, 7).len, 1u);  // a lead byte the text ends after
  EXPECT_FALSE(Utf8UnitAt(s, 7).valid);
  EXPECT_EQ(Utf8UnitAt(Hex("C0AF"), 0).len, 1u);  // C0 starts nothing
  EXPECT_FALSE(Utf8UnitAt(Hex("C0AF"), 0).valid);
}

TEST(Utf8, MaximalSubpartsAsInTheUnicodeStandardsExample) {
  // Unicode 15, section 3.9, "U+FFFD Substitution of Maximal Subparts" (Python agrees).
  EXPECT_EQ(ToValidUtf8(Hex("61F18080E180C2628063"
                            "80BF64")),
            "a" + Fffd(3) + "b" + Fffd(1) + "c" + Fffd(2) + "d");
}

TEST(Utf8Decoder, JoinsACharacterSplitAcrossChunks) {
  const std::string euro = "€";  // E2 82 AC
  Utf8Decoder d;
  EXPECT_EQ(d.Feed("x" + euro.substr(0, 1)), "x");
  EXPECT_EQ(d.pending(), 1u);
  EXPECT_EQ(d.Feed(euro.substr(1, 1)), "");
  EXPECT_EQ(d.pending(), 2u);
  EXPECT_EQ(d.Feed(euro.substr(2) + "y"), euro + "y");
  EXPECT_EQ(d.Finish(), "");
}

TEST(Utf8Decoder, HeldBytesThatTheNextChunkRefutesBecomeOneReplacement) {
  Utf8Decoder d;
  EXPECT_EQ(d.Feed(Hex("E282")), "");
  EXPECT_EQ(d.Feed("z"), kFffd + "z");
  EXPECT_EQ(d.Feed(Hex("F0")), "");
  EXPECT_EQ(d.Feed(Hex("F0") + "q"), kFffd + kFffd + "q");  // F0 F0: the first is refuted
}

TEST(Utf8Decoder, AStreamEndingInsideACharacterEndsWithAReplacement) {
  Utf8Decoder d;
  EXPECT_EQ(d.Feed("ok" + Hex("F09F")), "ok");
  EXPECT_EQ(d.Finish(), kFffd);
  EXPECT_EQ(d.pending(), 0u);
  EXPECT_EQ(d.Feed("again"), "again");  // ready for a new stream
}

TEST(Utf8Decoder, EmptyChunksChangeNothing) {
  Utf8Decoder d;
  EXPECT_EQ(d.Feed(""), "");
  EXPECT_EQ(d.Feed(Hex("E2")), "");
  EXPECT_EQ(d.Feed(""), "");
  EXPECT_EQ(d.Feed(Hex("82AC")), "€");
}

// Random bytes, biased towards the bytes that make UTF-8 interesting.
std::string RandomBytes(std::mt19937& rng, size_t n) {
  static constexpr unsigned char kInteresting[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                                   0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                                   0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  std::string s(n, '\0');
  for (char& c : s) {
    c = rng() % 2 == 0 ? static_cast<char>(rng() & 0xFF)
                       : static_cast<char>(kInteresting[rng() % sizeof kInteresting]);
  }
  return s;
}

TEST(Utf8, RandomBytesAlwaysComeOutValidAndChunkingNeverChangesTheResult) {
  std::mt19937 rng(20261201);  // fixed seed: a failure is reproducible
  for (int round = 0; round < 3000; ++round) {
    const std::string in = RandomBytes(rng, rng() % 64);
    const std::string whole = ToValidUtf8(in);
    ASSERT_TRUE(ReferenceValid(whole)) << round;
    ASSERT_EQ(IsValidUtf8(in), ReferenceValid(in)) << round;
    if (ReferenceValid(in)) {
      ASSERT_EQ(whole, in);
    }
    Utf8Decoder d;
    std::string streamed;
    size_t pos = 0;
    while (pos < in.size()) {
      const size_t n = std::min<size_t>(in.size() - pos, 1 + rng() % 4);
      if (rng() % 8 == 0) {
        ASSERT_EQ(d.Feed(""), "");
      }
      const std::string out = d.Feed(std::string_view(in).substr(pos, n));
      ASSERT_TRUE(ReferenceValid(out)) << round;
      streamed += out;
      pos += n;
    }
    streamed += d.Finish();
    ASSERT_EQ(streamed, whole) << round;
    // Walking unit by unit, replacing the ill-formed ones, also gives ToValidUtf8.
    std::string walked;
    for (size_t i = 0; i < in.size();) {
      const Utf8Unit u = Utf8UnitAt(in, i);
      ASSERT_GE(u.len, 1u);
      ASSERT_LE(u.len, 4u);
      walked += u.valid ? in.substr(i, u.len) : kFffd;
      i += u.len;
    }
    ASSERT_EQ(walked, whole) << round;
  }
}

}  // namespace
}  // namespace agent
