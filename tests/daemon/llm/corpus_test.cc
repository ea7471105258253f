// Property test over the recorded streams in corpus/: every stream assembled whole, one byte
// at a time and at 200 seeded random split patterns gives exactly the reply in its
// .expected.json, and the sink hears the same things each time. `<name>.anthropic.sse` is
// assembled by AnthropicStreamAssembler, every other `<name>.sse` by OpenAiStreamAssembler.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "daemon/llm/anthropic_stream.h"
#include "daemon/llm/openai_stream.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::RunStream;
using ::agent::daemon::llm::testing::StreamRun;

const std::filesystem::path kCorpus =
    std::filesystem::path(AGENT_SOURCE_DIR) / "tests/daemon/llm/corpus";

struct CorpusEntry {
  std::string name;  // without .anthropic / .sse
  bool anthropic = false;
  std::filesystem::path sse;
  std::filesystem::path expected;
};

// So that gtest names the stream instead of dumping the struct's bytes.
void PrintTo(const CorpusEntry& e, std::ostream* os) { *os << e.sse.filename().string(); }

std::vector<CorpusEntry> ListCorpus() {
  std::vector<CorpusEntry> entries;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(kCorpus, ec)) {
    const std::string file = f.path().filename().string();
    if (file.size() < 5 || file.substr(file.size() - 4) != ".sse") continue;
    CorpusEntry e;
    e.name = file.substr(0, file.size() - 4);
    constexpr std::string_view kAnthropic = ".anthropic";
    if (e.name.size() > kAnthropic.size() &&
        e.name.substr(e.name.size() - kAnthropic.size()) == kAnthropic) {
      e.anthropic = true;
      e.name.resize(e.name.size() - kAnthropic.size());
    }
    e.sse = f.path();
    e.expected = kCorpus / (e.name + ".expected.json");
    entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(),
            [](const CorpusEntry& a, const CorpusEntry& b) { return a.name < b.name; });
  return entries;
}

std::string ReadOrDie(const std::filesystem::path& p) {
  absl::StatusOr<std::string> s = ReadFileToString(p.string());
  EXPECT_TRUE(s.ok()) << p << ": " << s.status();
  return s.ok() ? *s : std::string();
}

StreamRun RunCorpusStream(const CorpusEntry& e, std::string_view bytes,
                          const std::vector<size_t>& cuts) {
  return e.anthropic ? RunStream<AnthropicStreamAssembler>(bytes, cuts)
                     : RunStream<OpenAiStreamAssembler>(bytes, cuts);
}

void ExpectSameRun(const StreamRun& got, const StreamRun& want, const std::string& how) {
  EXPECT_EQ(got.reply, want.reply) << how;
  EXPECT_EQ(got.sink_text, want.sink_text) << how;
  EXPECT_EQ(got.sink_reasoning, want.sink_reasoning) << how;
  EXPECT_EQ(got.sink_started, want.sink_started) << how;
  EXPECT_EQ(got.output_started, want.output_started) << how;
  EXPECT_EQ(got.partial_at_end, want.partial_at_end) << how;
}

class Corpus : public ::testing::TestWithParam<CorpusEntry> {};

TEST_P(Corpus, AssemblesToExpectedReplyForEverySplit) {
  const CorpusEntry& e = GetParam();
  const std::string bytes = ReadOrDie(e.sse);
  ASSERT_FALSE(bytes.empty());
  const Json expected = Json::parse(ReadOrDie(e.expected), nullptr, false);
  ASSERT_FALSE(expected.is_discarded()) << e.expected;

  const StreamRun whole = RunCorpusStream(e, bytes, {});
  ASSERT_EQ(whole.reply, expected) << "got:\n" << whole.reply.dump(2);
  EXPECT_GT(whole.events, 0u);
  if (!whole.reply.contains("error")) {
    // What the user saw streaming is what ends up in the reply.
    EXPECT_EQ(whole.sink_text, whole.reply["content"]);
    EXPECT_EQ(whole.sink_reasoning, whole.reply["reasoning"]);
    EXPECT_EQ(whole.sink_started.size(), whole.reply["tool_calls"].size());
  }

  std::vector<size_t> every_byte;
  for (size_t i = 1; i < bytes.size(); ++i) every_byte.push_back(i);
  ExpectSameRun(RunCorpusStream(e, bytes, every_byte), whole, "one byte at a time");

  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    // From a few large cuts to many small ones.
    const size_t max_cuts = std::min<size_t>(bytes.size() - 1, 1 + seed * 2);
    std::uniform_int_distribution<size_t> n_dist(1, max_cuts);
    std::uniform_int_distribution<size_t> pos_dist(1, bytes.size() - 1);
    std::vector<size_t> cuts(n_dist(rng));
    for (size_t& c : cuts) c = pos_dist(rng);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    ExpectSameRun(RunCorpusStream(e, bytes, cuts), whole, "seed " + std::to_string(seed));
    if (::testing::Test::HasFailure()) break;  // one failing pattern is enough to debug
  }
}

TEST(CorpusLayout, EveryStreamHasItsExpectedReplyAndThereAreEnough) {
  const std::vector<CorpusEntry> entries = ListCorpus();
  EXPECT_GE(entries.size(), 25u);
  for (const CorpusEntry& e : entries) {
    EXPECT_TRUE(std::filesystem::exists(e.expected)) << e.expected;
  }
}

INSTANTIATE_TEST_SUITE_P(Streams, Corpus, ::testing::ValuesIn(ListCorpus()),
                         [](const ::testing::TestParamInfo<CorpusEntry>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace agent::daemon::llm
