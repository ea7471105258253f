#include "common/transcript.h"

#include <cstdlib>
#include <fstream>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/status_matchers.h"

namespace agent {
namespace {

using ::agent::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Json Call(const std::string& id, const std::string& name = "read_file",
          const std::string& args = R"({"path":"a"})") {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}

Json AssistantWithCalls(std::vector<std::string> ids) {
  Json calls = Json::array();
  for (const auto& id : ids) calls.push_back(Call(id));
  return {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}};
}

TEST(TranscriptImages, AUserMessageWithImagesIsAListOfPartsCountedByWhatAModelCharges) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("look", {"data:image/png;base64," + std::string(100000, 'A')}).ok());
  EXPECT_EQ(t.messages()[0]["content"],
            Json::parse(R"([{"type":"text","text":"look"},{"type":"image_url",
              "image_url":{"url":"data:image/png;base64,)" +
                        std::string(100000, 'A') + R"("}}])"));
  EXPECT_EQ(t.CharCount(), 4 + kImagePartChars);  // not the base64's 100,000
  EXPECT_EQ(ContentAsText(t.messages()[0]["content"]), "look\n[image]");
  // Loaded back from its file: the same message, the same count.
  absl::StatusOr<Transcript> back = Transcript::FromFileText(t.FileText());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->messages(), t.messages());
  EXPECT_EQ(back->CharCount(), t.CharCount());
}

TEST(Transcript, AppendsInOrderAndValidates) {
  Transcript t;
  ASSERT_TRUE(t.AppendSystem("sys").ok());
  ASSERT_TRUE(t.AppendUser("hi").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"c1", "c2"})).ok());
  EXPECT_EQ(t.PendingCallIds(), (std::vector<std::string>{"c1", "c2"}));
  EXPECT_THAT(t.ValidateForRequest(), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_TRUE(t.AppendToolResult("c1", "r1").ok());
  ASSERT_TRUE(t.AppendToolResult("c2", "r2").ok());
  EXPECT_TRUE(t.ValidateForRequest().ok());
  EXPECT_THAT(t.Validate(), IsEmpty());
}

TEST(Transcript, RefusesUserMessageWhileCallsArePending) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("hi").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"c1"})).ok());
  absl::Status s = t.AppendUser("again");
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::IsFailedPrecondition(t.AppendAssistant({{"content", "x"}})));
}

TEST(Transcript, RefusesResultForUnknownOrOutOfOrderCall) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("hi").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(t.AppendToolResult("nope", "x")));
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"c1", "c2"})).ok());
  EXPECT_THAT(std::string(t.AppendToolResult("c2", "x").message()), HasSubstr("out of order"));
  ASSERT_TRUE(t.AppendToolResult("c1", "x").ok());
  ASSERT_TRUE(t.AppendToolResult("c2", "x").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(t.AppendToolResult("c2", "again")));
}

TEST(Transcript, RefusesDuplicateCallIdsAcrossMessages) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("hi").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"c1"})).ok());
  ASSERT_TRUE(t.AppendToolResult("c1", "x").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(t.AppendAssistant(AssistantWithCalls({"c1"}))));
  EXPECT_TRUE(absl::IsInvalidArgument(t.AppendAssistant(AssistantWithCalls({"d", "d"}))));
}

TEST(Transcript, RefusesMalformedCalls) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("hi").ok());
  Json bad = AssistantWithCalls({"c1"});
  bad["tool_calls"][0]["function"]["arguments"] = Json::object();
  EXPECT_TRUE(absl::IsInvalidArgument(t.AppendAssistant(bad)));
  Json noid = AssistantWithCalls({""});
  EXPECT_TRUE(absl::IsInvalidArgument(t.AppendAssistant(noid)));
}

TEST(Transcript, SealAnswersEveryPendingCallWithTheReason) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("hi").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"c1", "c2", "c3"})).ok());
  ASSERT_TRUE(t.AppendToolResult("c1", "done").ok());
  EXPECT_EQ(t.Seal("cancelled by the user"), 2);
  EXPECT_TRUE(t.ValidateForRequest().ok());
  EXPECT_THAT(GetString(t.messages().back(), "content"), HasSubstr("cancelled by the user"));
  EXPECT_EQ(t.Seal("again"), 0);
}

TEST(Transcript, FromJsonAcceptsOpenTailAndRecomputesPending) {
  Json msgs = Json::array({{{"role", "user"}, {"content", "hi"}},
                           AssistantWithCalls({"a", "b"}),
                           {{"role", "tool"}, {"tool_call_id", "b"}, {"content", "x"}}});
  auto t = Transcript::FromJson(msgs);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->PendingCallIds(), std::vector<std::string>{"a"});
  EXPECT_EQ(t->Seal("interrupted"), 1);
  EXPECT_TRUE(t->ValidateForRequest().ok());
}

TEST(Transcript, FromJsonRejectsBrokenRule) {
  Json orphan = Json::array({{{"role", "user"}, {"content", "hi"}},
                             {{"role", "tool"}, {"tool_call_id", "x"}, {"content", "r"}}});
  EXPECT_THAT(std::string(Transcript::FromJson(orphan).status().message()),
              HasSubstr("answers no pending call"));
  Json separated = Json::array({{{"role", "user"}, {"content", "hi"}},
                                AssistantWithCalls({"a"}),
                                {{"role", "user"}, {"content", "interrupt"}},
                                {{"role", "tool"}, {"tool_call_id", "a"}, {"content", "r"}}});
  EXPECT_THAT(Transcript::FromJson(separated), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Transcript::FromJson(Json::object()), StatusIs(absl::StatusCode::kInvalidArgument));
  Json late_system =
      Json::array({{{"role", "user"}, {"content", "hi"}}, {{"role", "system"}, {"content", "x"}}});
  EXPECT_THAT(Transcript::FromJson(late_system), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Transcript, FromFileTextKeepsEachLineOfASavedFileAsItsSerialisation) {
  // As TranscriptFileText writes it, with a line a person edited (spaces) left alone.
  std::string text =
      "[\n"
      "  {\"role\":\"user\",\"content\":\"hi\"},\n"
      "  {\"role\": \"assistant\",  \"content\": \"hello\"}\n"
      "]\n";
  auto t = Transcript::FromFileText(text);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->size(), 2u);
  EXPECT_EQ(t->messages()[1]["content"], "hello");
  EXPECT_EQ(t->FileText(), text);
  // Appending serialises only the new message.
  ASSERT_TRUE(t->AppendUser("more").ok());
  EXPECT_EQ(t->FileText(),
            text.substr(0, text.size() - 3) + ",\n  {\"content\":\"more\",\"role\":\"user\"}\n]\n");
}

TEST(Transcript, FromFileTextReadsALargeFileOnTwoThreadsInOrder) {
  Transcript t;
  ASSERT_TRUE(t.AppendSystem("sys").ok());
  const std::string filler(300, 'x');
  for (int i = 0; i < 700; ++i) {  // ~450 KB: past the size read on two threads
    ASSERT_TRUE(t.AppendUser("question " + std::to_string(i) + filler).ok());
    ASSERT_TRUE(t.AppendAssistant({{"content", "answer " + std::to_string(i) + filler}}).ok());
  }
  std::string text = t.FileText();
  ASSERT_GT(text.size(), 256u * 1024);
  auto loaded = Transcript::FromFileText(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->messages(), t.messages());
  EXPECT_EQ(loaded->FileText(), text);
  // A broken line in the first half fails the load as a whole.
  std::string broken = text;
  broken.erase(broken.find("\"question 10x"), 1);  // an unquoted string
  EXPECT_TRUE(absl::IsInvalidArgument(Transcript::FromFileText(broken).status()));
}

TEST(Transcript, FromFileTextParsesOtherLayoutsWholeAndNamesWhatIsWrong) {
  Json msgs = Json::array({{{"role", "user"}, {"content", "hi"}}, AssistantWithCalls({"a"})});
  auto pretty = Transcript::FromFileText(msgs.dump(2));
  ASSERT_TRUE(pretty.ok()) << pretty.status();
  EXPECT_EQ(pretty->messages(), msgs);
  EXPECT_EQ(pretty->PendingCallIds(), std::vector<std::string>{"a"});
  EXPECT_EQ(*ParseJson(pretty->FileText()), msgs);

  EXPECT_TRUE(absl::IsInvalidArgument(Transcript::FromFileText("[\n  {\"role\":\n").status()));
  EXPECT_THAT(std::string(Transcript::FromFileText("{}").status().message()),
              HasSubstr("not a JSON array"));
  std::string orphan = "[\n  {\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"r\"}\n]\n";
  EXPECT_THAT(std::string(Transcript::FromFileText(orphan).status().message()),
              HasSubstr("breaks the transcript rule"));
}

TEST(Transcript, CutPointMovesPastToolMessagesAndKeepsSystem) {
  Transcript t;
  ASSERT_TRUE(t.AppendSystem("sys").ok());
  ASSERT_TRUE(t.AppendUser("u1").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"a", "b", "c", "d"})).ok());
  for (const char* id : {"a", "b", "c", "d"}) ASSERT_TRUE(t.AppendToolResult(id, "r").ok());
  ASSERT_TRUE(t.AppendAssistant({{"content", "done"}}).ok());
  ASSERT_TRUE(t.AppendUser("u2").ok());
  size_t cut = t.CutPoint();
  ASSERT_GT(cut, 1u);
  std::string role = GetString(t.messages()[cut], "role");
  EXPECT_TRUE(role == "user" || role == "assistant") << role;
  auto removed = t.ReplacePrefix(cut, "summary");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(GetString(t.messages()[0], "role"), "system");
  EXPECT_EQ(GetString(t.messages()[1], "content"), "summary");
  EXPECT_TRUE(t.ValidateForRequest().ok());
}

TEST(Transcript, ReplacePrefixRefusesACutAtAToolMessage) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("u1").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"a"})).ok());
  ASSERT_TRUE(t.AppendToolResult("a", "r").ok());
  ASSERT_TRUE(t.AppendAssistant({{"content", "x"}}).ok());
  EXPECT_THAT(t.ReplacePrefix(2, "s"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(Transcript, TruncateToSealsWhatItLeavesOpen) {
  Transcript t;
  ASSERT_TRUE(t.AppendUser("u1").ok());
  ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls({"a", "b"})).ok());
  ASSERT_TRUE(t.AppendToolResult("a", "r").ok());
  ASSERT_TRUE(t.AppendToolResult("b", "r").ok());
  t.TruncateTo(3);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_TRUE(t.ValidateForRequest().ok());
}

// Random sequences of what a session does to its transcript: prompts, streamed replies with
// calls, results in order, cancels (seal) at any point, compaction, and crash-and-reload
// (serialise, FromJson, seal). After every step the rule holds; at the end the transcript
// can be sent. With AGENT_TRANSCRIPT_DUMP set, the final transcripts are written there as
// JSON lines so the strict scripted model server can check them too.
TEST(TranscriptRandomized, EveryOperationSequenceKeepsTheRule) {
  std::mt19937 rng(20261201);
  std::ofstream dump;
  if (const char* path = std::getenv("AGENT_TRANSCRIPT_DUMP")) dump.open(path);
  int next_id = 0;
  for (int run = 0; run < 2000; ++run) {
    Transcript t;
    ASSERT_TRUE(t.AppendSystem("sys").ok());
    int steps = 5 + static_cast<int>(rng() % 40);
    for (int step = 0; step < steps; ++step) {
      switch (rng() % 7) {
        case 0:  // a prompt arrives (only between turns)
          if (!t.HasPending()) {
            ASSERT_TRUE(t.AppendUser("prompt").ok());
          }
          break;
        case 1: {  // a reply, with 0..3 calls
          if (t.HasPending()) break;
          int n = static_cast<int>(rng() % 4);
          if (n == 0) {
            ASSERT_TRUE(t.AppendAssistant({{"content", "text"}}).ok());
          } else {
            std::vector<std::string> ids;
            for (int i = 0; i < n; ++i) ids.push_back("call_" + std::to_string(next_id++));
            ASSERT_TRUE(t.AppendAssistant(AssistantWithCalls(ids)).ok());
          }
          break;
        }
        case 2:
        case 3:  // a tool finishes
          if (t.HasPending()) {
            ASSERT_TRUE(t.AppendToolResult(t.PendingCallIds()[0], "r").ok());
          }
          break;
        case 4:  // cancel
          t.Seal("cancelled by the user");
          break;
        case 5: {  // compaction (the turn loop compacts only before a request: nothing pending)
          if (t.HasPending()) break;
          size_t cut = t.CutPoint();
          if (cut > t.FirstCompactable()) {
            ASSERT_TRUE(t.ReplacePrefix(cut, "summary").ok());
          }
          break;
        }
        case 6: {  // crash and reload
          auto reloaded = Transcript::FromJson(Json::parse(DumpJson(t.messages())));
          ASSERT_TRUE(reloaded.ok()) << reloaded.status();
          t = *std::move(reloaded);
          t.Seal("interrupted");
          break;
        }
      }
      ASSERT_THAT(t.Validate(), IsEmpty()) << DumpJson(t.messages());
    }
    t.Seal("end of test");
    if (t.size() == 1) {
      ASSERT_TRUE(t.AppendUser("prompt").ok());
    }
    ASSERT_TRUE(t.ValidateForRequest().ok()) << DumpJson(t.messages());
    if (dump.is_open()) dump << DumpJson(t.messages()) << "\n";
  }
}

TEST(ValidateMessages, ReportsEachProblem) {
  Json msgs = Json::array({{{"role", "user"}, {"content", "hi"}},
                           AssistantWithCalls({"a", "b"}),
                           {{"role", "tool"}, {"tool_call_id", "a"}, {"content", "x"}},
                           {{"role", "user"}, {"content", "next"}},
                           {{"role", "tool"}, {"tool_call_id", "zzz"}, {"content", "x"}},
                           {{"role", "wizard"}}});
  auto problems = ValidateMessages(msgs, true);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[0], HasSubstr("b has no tool result"));
  EXPECT_THAT(problems[1], HasSubstr("zzz"));
  EXPECT_THAT(problems[2], HasSubstr("unknown role"));
  EXPECT_THAT(ValidateMessages(Json::array(), false), IsEmpty());
  EXPECT_THAT(ValidateMessages(Json::array({AssistantWithCalls({"q"})}), false), Not(IsEmpty()));
}

}  // namespace
}  // namespace agent
