// The checkpoint commands: the text they show (file lists, coloured diffs, the prompts to
// rewind to), what they parse (answers, turn numbers, the flags of `agent undo|diff`), and
// the questions of /undo and /rewind against an in-process stand-in for agentd.
#include "client/commands/checkpoint_commands.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/terminal/yes_no.h"
#include "client/text/checkpoint_text.h"
#include "client/view/checkpoint_dialog.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;
using ::testing::Not;

v1::FileChange Change(const std::string& path, const std::string& change, bool since = false) {
  v1::FileChange f;
  f.set_path(path);
  f.set_change(change);
  f.set_changed_since(since);
  return f;
}

// ---- text ----------------------------------------------------------------------------------

TEST(FileChangeList, OneLinePerFileWithTheChangedSinceMark) {
  std::vector<v1::FileChange> files = {Change("src/a.cc", "modified"), Change("new.txt", "created"),
                                       Change("old.txt", "deleted"), Change("run.sh", "mode"),
                                       Change("notes.md", "modified", true)};
  EXPECT_EQ(FileChangeList(files, false),
            "  modified  src/a.cc\n"
            "  created   new.txt\n"
            "  deleted   old.txt\n"
            "  mode      run.sh\n"
            "  modified  notes.md  (changed since the turn)\n");
  EXPECT_EQ(ChangedSince(files), 1);
  EXPECT_THAT(FileChangeList(files, true), HasSubstr("\x1b[33m(changed since the turn)\x1b[0m"));
}

TEST(FileChangeList, APathCannotDriveTheTerminal) {
  std::string out = FileChangeList({Change("evil\x1b]0;owned\x07\x1b[2J\n.txt", "created")}, false);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST(ColoredDiff, HeadersBoldAddedGreenRemovedRed) {
  std::string diff = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n";
  std::string out = ColoredDiff(diff, true);
  EXPECT_THAT(out, HasSubstr("\x1b[1mdiff --git a/f b/f\x1b[0m\n"));
  EXPECT_THAT(out, HasSubstr("\x1b[1m--- a/f\x1b[0m\n"));
  EXPECT_THAT(out, HasSubstr("\x1b[1m+++ b/f\x1b[0m\n"));
  EXPECT_THAT(out, HasSubstr("\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n"));
  EXPECT_THAT(out, HasSubstr("\n same\n"));
  EXPECT_THAT(out, HasSubstr("\x1b[31m-old\x1b[0m\n"));
  EXPECT_THAT(out, HasSubstr("\x1b[32m+new\x1b[0m\n"));
  EXPECT_EQ(ColoredDiff(diff, false), diff);  // a pipe gets it unchanged
}

TEST(ColoredDiff, FileContentCannotDriveTheTerminal) {
  std::string out = ColoredDiff("+a\x1b]52;c;aGk=\x07\x1b[31mb\x08\n", true);
  EXPECT_EQ(out, "\x1b[32m+ab^H\x1b[0m\n");
  EXPECT_EQ(TerminalSafe("tab\tok\nline\r"), "tab\tok\nline^M");
}

TEST(StoreSizeLine, BytesInTheLargestUnitUnder1024) {
  EXPECT_EQ(StoreSizeLine(0), "checkpoints: 0 B on disk");
  EXPECT_EQ(StoreSizeLine(1023), "checkpoints: 1023 B on disk");
  EXPECT_EQ(StoreSizeLine(1536), "checkpoints: 1.5 KiB on disk");
  EXPECT_EQ(StoreSizeLine(5LL << 20), "checkpoints: 5.0 MiB on disk");
  EXPECT_EQ(StoreSizeLine(3LL << 30), "checkpoints: 3.0 GiB on disk");
}

TEST(ParseTurnCount, EmptyIsOneAndOnlyPlainNumbersCount) {
  EXPECT_EQ(ParseTurnCount(""), 1);
  EXPECT_EQ(ParseTurnCount(" 3 "), 3);
  EXPECT_EQ(ParseTurnCount("1000"), 1000);
  for (const char* bad : {"0", "-1", "+3", "x", "2x", "1001", "99999999999999"}) {
    EXPECT_EQ(ParseTurnCount(bad), std::nullopt) << bad;
  }
}

TEST(IsYes, OnlyYOrYes) {
  for (const char* yes : {"y", "Y", "yes", " YES\n"}) EXPECT_TRUE(IsYes(yes)) << yes;
  for (const char* no : {"", "n", "no", "yeah", "sure", "y y"}) EXPECT_FALSE(IsYes(no)) << no;
}

TEST(RewindPoints, UserMessagesWithTheTurnsThatChangedFilesAfterThem) {
  std::vector<HistoryMessage> history = {
      {"system", "you are", {}},
      {"user", "fix the bug\nin a.cc", {}},
      {"assistant", "done", {}},
      {"user", "add \x1b[2Ja test", {}},
      {"assistant", "", {{"bash", "{}"}}},
      {"tool", "ok", {}},
      {"assistant", "added", {}},
      {"user", "thanks", {}},
      {"assistant", "bye", {}},
      // The daemon's note after an undo: not a prompt to go back to.
      {"user", "[The user restored the project's files to their state before turn 2", {}},
  };
  v1::Checkpoint first, second, empty;
  first.set_at_message(1);
  first.set_files_changed(2);
  second.set_at_message(3);
  second.set_files_changed(1);
  empty.set_at_message(7);  // a turn that changed nothing counts for nothing
  std::vector<RewindPoint> points = RewindPoints(history, {first, second, empty});
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].at_message, 1);
  EXPECT_EQ(points[0].prompt, "fix the bug");
  EXPECT_EQ(points[0].files_turns, 2);
  EXPECT_EQ(points[1].at_message, 3);
  EXPECT_EQ(points[1].prompt.find('\x1b'), std::string::npos);
  EXPECT_EQ(points[1].files_turns, 1);
  EXPECT_EQ(points[2].at_message, 7);
  EXPECT_EQ(points[2].files_turns, 0);
  EXPECT_EQ(RewindList(points, false),
            "  1  fix the bug  (files: 2 turns since)\n"
            "  2  add \\x1b[2Ja test  (files: 1 turn since)\n"
            "  3  thanks\n");
  // A long session: the last prompts, and how many came before.
  EXPECT_EQ(RewindList(points, false, 2),
            "  (prompt 1 is not shown; its number works too)\n"
            "  2  add \\x1b[2Ja test  (files: 1 turn since)\n"
            "  3  thanks\n");
  EXPECT_THAT(RewindList(points, false, 1),
              HasSubstr("(prompts 1 to 2 are not shown; their numbers work too)\n  3  thanks"));
}

TEST(ParseChoice, ANumberInRange) {
  EXPECT_EQ(ParseChoice("2", 3), 2);
  EXPECT_EQ(ParseChoice(" 3\n", 3), 3);
  for (const char* bad : {"", "0", "4", "-1", "1.5", "one", "99999999999"}) {
    EXPECT_EQ(ParseChoice(bad, 3), std::nullopt) << bad;
  }
}

// ---- flags ---------------------------------------------------------------------------------

// Parses `words` (after "agent") as CLI11 would for the subcommand; false on a usage error.
bool Parse(std::vector<std::string> words, CheckpointArgs& a) {
  a.cmd = words.front();
  CLI::App app{"test"};
  AddCheckpointFlags(app, a);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return false;
  }
  return true;
}

TEST(CheckpointFlags, UndoTakesAnIdTurnsYesAndOverwrite) {
  CheckpointArgs a;
  ASSERT_TRUE(Parse({"undo"}, a));
  EXPECT_EQ(a.id, "");
  EXPECT_EQ(a.turns, 1);
  EXPECT_FALSE(a.yes);
  CheckpointArgs b;
  ASSERT_TRUE(Parse({"undo", "3f2a", "--turns", "2", "--yes", "--overwrite"}, b));
  EXPECT_EQ(b.id, "3f2a");
  EXPECT_EQ(b.turns, 2);
  EXPECT_TRUE(b.yes);
  EXPECT_TRUE(b.overwrite);
  CheckpointArgs c;
  EXPECT_TRUE(Parse({"undo", "-y"}, c));
  EXPECT_TRUE(c.yes);
  for (std::vector<std::string> bad : {std::vector<std::string>{"undo", "--turns", "0"},
                                       {"undo", "--turns", "x"},
                                       {"undo", "--turn", "2"},
                                       {"undo", "a", "b"}}) {
    CheckpointArgs x;
    EXPECT_FALSE(Parse(bad, x)) << bad.back();
  }
}

TEST(CheckpointFlags, DiffTakesAnIdAndATurn) {
  CheckpointArgs a;
  ASSERT_TRUE(Parse({"diff", "abc", "--turn", "3"}, a));
  EXPECT_EQ(a.id, "abc");
  EXPECT_EQ(a.turn, 3);
  CheckpointArgs b;
  ASSERT_TRUE(Parse({"diff"}, b));
  EXPECT_EQ(b.turn, 0);
  for (std::vector<std::string> bad : {std::vector<std::string>{"diff", "--turn", "0"},
                                       {"diff", "--yes"},
                                       {"diff", "--turns", "2"}}) {
    CheckpointArgs x;
    EXPECT_FALSE(Parse(bad, x)) << bad.back();
  }
}

// ---- the interactive questions -------------------------------------------------------------

class FakeDaemon final : public v1::AgentDaemon::Service {
 public:
  grpc::Status Undo(grpc::ServerContext*, const v1::UndoRequest* req,
                    v1::UndoResponse* resp) override {
    absl::MutexLock l(&mu_);
    undos_.push_back(*req);
    *resp->add_files() = Change("a.cc", "modified");
    *resp->add_files() = Change("b.cc", "created", /*since=*/true);
    if (!req->dry_run()) {
      resp->set_restored(true);
      resp->set_message(req->overwrite() ? "restored 2 files" : "restored 1 file; kept 1");
    }
    return grpc::Status::OK;
  }
  grpc::Status GetSession(grpc::ServerContext*, const v1::GetSessionRequest* req,
                          v1::GetSessionResponse* resp) override {
    resp->mutable_session()->set_id(req->id());
    resp->set_transcript_json(
        R"([{"role":"system","content":"sys"},{"role":"user","content":"first"},)"
        R"({"role":"assistant","content":"ok"},{"role":"user","content":"second"},)"
        R"({"role":"assistant","content":"ok"}])");
    return grpc::Status::OK;
  }
  grpc::Status ListCheckpoints(grpc::ServerContext*, const v1::ListCheckpointsRequest*,
                               v1::ListCheckpointsResponse* resp) override {
    v1::Checkpoint* c = resp->add_checkpoints();
    c->set_turn(2);
    c->set_at_message(3);
    c->set_files_changed(1);
    return grpc::Status::OK;
  }
  grpc::Status ForkSession(grpc::ServerContext*, const v1::ForkSessionRequest* req,
                           v1::Session* out) override {
    absl::MutexLock l(&mu_);
    forks_.push_back(*req);
    out->set_id("s-rewound-5678");
    return grpc::Status::OK;
  }
  grpc::Status Diff(grpc::ServerContext*, const v1::DiffRequest* req,
                    v1::DiffResponse* resp) override {
    if (req->turn() == 9) return grpc::Status::OK;
    resp->set_unified_diff("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n");
    return grpc::Status::OK;
  }
  std::vector<v1::UndoRequest> undos() {
    absl::MutexLock l(&mu_);
    return undos_;
  }
  std::vector<v1::ForkSessionRequest> forks() {
    absl::MutexLock l(&mu_);
    return forks_;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::UndoRequest> undos_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ForkSessionRequest> forks_ ABSL_GUARDED_BY(mu_);
};

class CheckpointDialogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agt-ck-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + dir_ + "/s.sock", grpc::InsecureServerCredentials());
    b.RegisterService(&daemon_);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::AgentDaemon::NewStub(
        grpc::CreateChannel("unix:" + dir_ + "/s.sock", grpc::InsecureChannelCredentials()));
    turn_.session_id = "s-original";
  }
  void TearDown() override {
    server_->Shutdown();
    (void)std::system(("rm -rf " + dir_).c_str());
  }
  CheckpointDialog::Outcome Start(const std::string& line) {
    return dialog_.Start(*stub_, *ParseSlashCommand(line), turn_, renderer_, false, "agent-1");
  }
  CheckpointDialog::Outcome Answer(const std::string& line) {
    return dialog_.Answer(*stub_, line, turn_, renderer_);
  }

  std::string dir_;
  FakeDaemon daemon_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::AgentDaemon::Stub> stub_;
  CheckpointDialog dialog_;
  TurnState turn_;
  Renderer renderer_{RenderOptions{}};
};

TEST_F(CheckpointDialogTest, UndoListsAsksAndAsksAgainBeforeOverwriting) {
  CheckpointDialog::Outcome out = Start("/undo 2");
  EXPECT_THAT(out.text, HasSubstr("undoing the last 2 turns restores 2 files:"));
  EXPECT_THAT(out.text, HasSubstr("  modified  a.cc\n"));
  EXPECT_THAT(out.text, HasSubstr("b.cc  (changed since the turn)"));
  EXPECT_THAT(out.text, HasSubstr("? restore these files? [y/N]"));
  ASSERT_TRUE(dialog_.Asking());
  ASSERT_EQ(daemon_.undos().size(), 1u);
  EXPECT_TRUE(daemon_.undos()[0].dry_run());
  EXPECT_EQ(daemon_.undos()[0].turns(), 2);
  EXPECT_EQ(daemon_.undos()[0].client_name(), "agent-1");

  out = Answer("y");
  EXPECT_THAT(out.text, HasSubstr("1 file was changed after the turn: overwrite it too? [y/N]"));
  EXPECT_TRUE(dialog_.Asking());
  EXPECT_EQ(daemon_.undos().size(), 1u);  // nothing restored before the second answer

  out = Answer("");  // Enter: the default, no
  EXPECT_FALSE(dialog_.Asking());
  ASSERT_EQ(daemon_.undos().size(), 2u);
  EXPECT_FALSE(daemon_.undos()[1].dry_run());
  EXPECT_FALSE(daemon_.undos()[1].overwrite());
  EXPECT_EQ(daemon_.undos()[1].turns(), 2);
  EXPECT_THAT(out.text, HasSubstr("restored 1 file; kept 1"));
}

TEST_F(CheckpointDialogTest, UndoOverwritesOnlyOnAYes) {
  Start("/undo");
  Answer("yes");
  CheckpointDialog::Outcome out = Answer("Y");
  ASSERT_EQ(daemon_.undos().size(), 2u);
  EXPECT_TRUE(daemon_.undos()[1].overwrite());
  EXPECT_EQ(daemon_.undos()[1].turns(), 1);
  EXPECT_THAT(out.text, HasSubstr("restored 2 files"));
}

TEST_F(CheckpointDialogTest, UndoAnsweredNoRestoresNothing) {
  Start("/undo");
  CheckpointDialog::Outcome out = Answer("fix it differently");  // not a yes
  EXPECT_FALSE(dialog_.Asking());
  EXPECT_EQ(daemon_.undos().size(), 1u);
  EXPECT_THAT(out.text, HasSubstr("nothing restored"));
  EXPECT_THAT(Start("/undo zero").text, HasSubstr("/undo takes a number of turns"));
  EXPECT_EQ(daemon_.undos().size(), 1u);
}

TEST_F(CheckpointDialogTest, AnAnswerAfterTheViewSwitchedSessionDoesNothing) {
  Start("/undo");
  turn_.session_id = "s-other";  // the view shows another session now
  CheckpointDialog::Outcome out = Answer("y");
  EXPECT_THAT(out.text, HasSubstr("about session s-origin, no longer on screen: nothing done"));
  EXPECT_EQ(daemon_.undos().size(), 1u);  // the dry run only
  EXPECT_FALSE(dialog_.Asking());
}

TEST_F(CheckpointDialogTest, RewindForksBeforeThePickedPromptAndRestoresWhenAsked) {
  CheckpointDialog::Outcome out = Start("/rewind");
  EXPECT_THAT(out.text, HasSubstr("  1  first  (files: 1 turn since)\n  2  second  (files: 1 "));
  EXPECT_THAT(out.text, HasSubstr("before which prompt? [1-2, Enter: none]"));
  out = Answer("2");
  EXPECT_THAT(out.text, HasSubstr("restore the files too (undoing 1 turn that changed them)?"));
  EXPECT_TRUE(daemon_.forks().empty());
  out = Answer("y");
  ASSERT_EQ(daemon_.forks().size(), 1u);
  EXPECT_EQ(daemon_.forks()[0].session_id(), "s-original");
  EXPECT_EQ(daemon_.forks()[0].at_message(), 3);
  EXPECT_TRUE(daemon_.forks()[0].restore_files());
  EXPECT_EQ(out.attach_to, "s-rewound-5678");
  EXPECT_EQ(turn_.session_id, "s-rewound-5678");
  EXPECT_THAT(out.text, HasSubstr("with the files as they were then"));
  EXPECT_THAT(out.text, HasSubstr("agent attach s-origin"));
}

TEST_F(CheckpointDialogTest, RewindWithoutRestoringAndCancelled) {
  Start("/rewind");
  EXPECT_THAT(Answer("").text, HasSubstr("not rewound"));
  EXPECT_THAT(Start("/rewind").text, HasSubstr("first"));
  EXPECT_THAT(Answer("3").text, HasSubstr("not rewound"));  // out of range
  Start("/rewind");
  Answer("1");
  CheckpointDialog::Outcome out = Answer("n");
  ASSERT_EQ(daemon_.forks().size(), 1u);
  EXPECT_EQ(daemon_.forks()[0].at_message(), 1);
  EXPECT_FALSE(daemon_.forks()[0].restore_files());
  EXPECT_THAT(out.text, Not(HasSubstr("files as they were")));
  EXPECT_EQ(out.attach_to, "s-rewound-5678");
}

TEST_F(CheckpointDialogTest, DiffShowsTheDiffOrSaysThereIsNone) {
  CheckpointDialog::Outcome out = Start("/diff");
  EXPECT_EQ(out.text, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n");
  EXPECT_FALSE(dialog_.Asking());
  EXPECT_THAT(Start("/diff 9").text, HasSubstr("turn 9 changed no files"));
  EXPECT_THAT(Start("/diff x").text, HasSubstr("/diff takes a turn number"));
}

}  // namespace
}  // namespace agent::client
