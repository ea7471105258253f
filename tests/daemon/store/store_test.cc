#include "daemon/store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "daemon/store/sessions_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fakes/scoped_env.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/temp_dir.h"

namespace agent::daemon {
namespace {

using ::agent::testing::IsOk;
using ::agent::testing::IsSymlink;
using ::agent::testing::ListDir;
using ::agent::testing::ReadFile;
using ::agent::testing::ScopedEnv;
using ::agent::testing::StatusIs;
using ::agent::testing::TempDir;
using ::agent::testing::WriteFile;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Json Messages() {
  return Json::array({{{"role", "system"}, {"content", "sys"}},
                      {{"role", "user"}, {"content", "hi"}},
                      {{"role", "assistant"}, {"content", "hello"}}});
}

class StoreTest : public ::testing::Test {
 protected:
  const std::string& workdir() const { return workdir_.path(); }
  void SetUp() override { env_.Set("XDG_STATE_HOME", state_.path()); }
  std::string Sessions() const { return ProjectSessionsDir(workdir()); }
  std::string ProjectState() const { return Sessions().substr(0, Sessions().rfind('/')); }
  std::string InSessions(const std::string& name) const { return Sessions() + "/" + name; }
  // A file outside the project; the code under test must never write it.
  std::string Victim(const std::string& name = "victim") {
    std::string p = outside_.Join(name);
    WriteFile(p, "precious\n");
    return p;
  }
  void MakeSessionsDir() { ASSERT_THAT(MakeDirs(Sessions()), IsOk()); }
  void Plant(const std::string& target, const std::string& link) {
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << link;
  }
  SessionMeta Meta(const std::string& id) {
    SessionMeta m;
    m.id = id;
    m.workdir = workdir();
    m.title = "a title";
    m.model = "m1";
    m.parent_id = "p";
    m.created_unix_ms = 1000;
    m.updated_unix_ms = 2000;
    m.message_count = 3;
    m.turns = 1;
    m.tool_calls = 4;
    m.compactions = 5;
    m.prompt_tokens = 6;
    m.completion_tokens = 7;
    return m;
  }

  TempDir workdir_;
  TempDir outside_;
  TempDir state_;
  ScopedEnv env_;
};

// ---- What the store keeps -----------------------------------------------------------------

TEST_F(StoreTest, TranscriptRoundTrip) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  auto t = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->messages(), Messages());

  ASSERT_THAT(t->AppendUser("more"), IsOk());
  ASSERT_THAT(SaveTranscript(workdir(), "s1", *t), IsOk());
  auto again = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->size(), 4u);
  EXPECT_EQ(ReadFile(TranscriptPath(workdir(), "s1")), t->FileText());
  EXPECT_THAT(ListDir(Sessions()), ElementsAre("s1.journal", "s1.json"));  // no temp file left
}

// ---- The journal (daemon/store/transcript_journal.h)
// ------------------------------------------------

TEST_F(StoreTest, MessagesAppendedToTheJournalAreLoadedAfterTheWholeFile) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  ASSERT_THAT(AppendJournal(workdir(), "s1",
                            "{\"role\":\"user\",\"content\":\"again\"}\n"
                            "{\"role\":\"assistant\",\"content\":\"sure\"}\n"),
              IsOk());
  auto t = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 5u);
  EXPECT_EQ(t->messages()[4]["content"], "sure");
  // Written whole again, the journal starts anew and nothing is loaded twice.
  ASSERT_THAT(SaveTranscript(workdir(), "s1", *t), IsOk());
  auto again = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->size(), 5u);
}

TEST_F(StoreTest, ATornLastJournalLineLosesThatMessageOnly) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  ASSERT_THAT(AppendJournal(workdir(), "s1",
                            "{\"role\":\"user\",\"content\":\"kept\"}\n"
                            "{\"role\":\"assistant\",\"cont"),
              IsOk());  // a kill -9 in the middle of an append
  auto t = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ(t->messages()[3]["content"], "kept");
}

TEST_F(StoreTest, AJournalOfAnOlderFileIsStaleAndIgnored) {
  // The file was written whole (it holds the journal's messages) and the daemon died before it
  // could start the new journal: the old one must not add them a second time.
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  const std::string old_journal =
      ReadFile(InSessions("s1.journal")) + "{\"role\":\"user\",\"content\":\"once\"}\n";
  Json more = Messages();
  more.push_back({{"role", "user"}, {"content", "once"}});
  ASSERT_THAT(SaveTranscript(workdir(), "s1", more), IsOk());
  WriteFile(InSessions("s1.journal"), old_journal);
  auto t = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->size(), 4u);
}

// ---- Journal records that parse but do not replay: kept, never a wiped session -------------

constexpr char kCall[] =
    R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",)"
    R"("function":{"name":"bash","arguments":"{}"}}]})"
    "\n";
constexpr char kResult[] = R"({"role":"tool","tool_call_id":"c1","content":"out"})"
                           "\n";
constexpr char kLater[] = R"({"role":"user","content":"later"})"
                          "\n";

// The set-aside files in the sessions folder.
std::vector<std::string> SetAside(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n.find(".journal-set-aside-") != std::string::npos) out.push_back(n);
  }
  return out;
}

TEST_F(StoreTest, ARecordWrittenTwiceIsReplayedOnce) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  ASSERT_THAT(AppendJournal(workdir(), "s1", absl::StrCat(kCall, kResult, kResult, kLater)),
              IsOk());
  JournalReport report;
  auto t = LoadTranscript(workdir(), "s1", &report);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 6u);  // nothing after the repeat is lost
  EXPECT_EQ(t->messages()[5]["content"], "later");
  EXPECT_EQ(report.replayed, 3);
  EXPECT_EQ(report.repeats, 1);
  EXPECT_TRUE(report.NeedsRewrite());
  EXPECT_THAT(report.Note("s1"), HasSubstr("written twice and replayed once"));
  EXPECT_THAT(SetAside(ListDir(Sessions())), IsEmpty());
}

TEST_F(StoreTest, ARepeatThatKeepsTheRuleIsAMessageOfItsOwn) {
  // The same prompt twice in a row is the person's, not a write done twice.
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  ASSERT_THAT(AppendJournal(workdir(), "s1", absl::StrCat(kLater, kLater)), IsOk());
  JournalReport report;
  auto t = LoadTranscript(workdir(), "s1", &report);
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->size(), 5u);
  EXPECT_EQ(report.repeats, 0);
  EXPECT_FALSE(report.NeedsRewrite());
}

struct BadRecord {
  const char* name;
  std::string line;
  const char* why;
};
void PrintTo(const BadRecord& r, std::ostream* os) { *os << r.name; }

class BadJournalRecordTest : public StoreTest, public ::testing::WithParamInterface<BadRecord> {};

TEST_P(BadJournalRecordTest, ReplaysUpToItAndKeepsTheRestBesideTheSession) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  const std::string rest = absl::StrCat(GetParam().line, kLater);
  ASSERT_THAT(AppendJournal(workdir(), "s1", absl::StrCat(kCall, kResult, rest)), IsOk());
  JournalReport report;
  auto t = LoadTranscript(workdir(), "s1", &report);
  ASSERT_THAT(t, IsOk());
  ASSERT_EQ(t->size(), 5u);  // the good records before the bad one
  EXPECT_EQ(t->messages()[4]["tool_call_id"], "c1");
  EXPECT_EQ(report.replayed, 2);
  EXPECT_EQ(report.set_aside_lines, 2);
  EXPECT_THAT(report.why, HasSubstr(GetParam().why));
  EXPECT_TRUE(report.NeedsRewrite());
  const std::vector<std::string> kept = SetAside(ListDir(Sessions()));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(report.set_aside_path, InSessions(kept[0]));
  EXPECT_EQ(ReadFile(report.set_aside_path), rest);
  const std::string note = report.Note("s1");
  EXPECT_THAT(note,
              AllOf(HasSubstr("2 lines of its journal could not be replayed"),
                    HasSubstr(report.set_aside_path), HasSubstr("append them to s1.journal")));

  // A second load (the session was not written whole in between) keeps a second copy: the
  // first is never overwritten.
  JournalReport again;
  ASSERT_THAT(LoadTranscript(workdir(), "s1", &again), IsOk());
  EXPECT_EQ(SetAside(ListDir(Sessions())).size(), 2u);
  EXPECT_EQ(ReadFile(report.set_aside_path), rest);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadJournalRecordTest,
    ::testing::Values(BadRecord{"ResultOfNoCall",
                                R"({"role":"tool","tool_call_id":"nope","content":"x"})"
                                "\n",
                                "answers no pending call"},
                      BadRecord{"UnknownShape",
                                R"({"kind":"checkpoint","at":3})"
                                "\n",
                                "unknown role"},
                      BadRecord{"CallIdUsedTwice", kCall, "duplicate tool call id c1"},
                      BadRecord{"NotJson", "{\"role\":\"user\",\n", "not a JSON message"}),
    [](const ::testing::TestParamInfo<BadRecord>& info) { return info.param.name; });

TEST_F(StoreTest, AMetaFileOlderThanTheTranscriptDoesNotGiveTheMessageCount) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  SessionMeta m = Meta("s1");
  ASSERT_THAT(SaveMeta(m), IsOk());
  EXPECT_EQ(SavedMessageCount(workdir(), m), 3);
  // The daemon died after two appends, before the meta file was written again.
  ASSERT_THAT(AppendJournal(workdir(), "s1", absl::StrCat(kCall, kResult)), IsOk());
  const struct timespec past[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, MetaPath(workdir(), "s1").c_str(), past, 0), 0);
  EXPECT_EQ(SavedMessageCount(workdir(), m), 5);
  // Written again after them, the meta file is believed (nothing is read).
  m.message_count = 5;
  ASSERT_THAT(SaveMeta(m), IsOk());
  ASSERT_THAT(AppendJournal(workdir(), "s1", kLater), IsOk());
  const struct timespec older[2] = {{2000, 0}, {2000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, InSessions("s1.journal").c_str(), older, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, InSessions("s1.json").c_str(), older, 0), 0);
  EXPECT_EQ(SavedMessageCount(workdir(), m), 5);
}

TEST_F(StoreTest, MetaRoundTripTakesIdAndWorkdirFromTheCall) {
  SessionMeta m = Meta("s1");
  ASSERT_THAT(SaveMeta(m), IsOk());
  auto loaded = LoadMeta(workdir(), "s1");
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(loaded->ToJson(), m.ToJson());

  // A file copied from another project still describes the session where it lies now.
  WriteFile(MetaPath(workdir(), "s2"), DumpJson(Meta("other").ToJson()));
  loaded = LoadMeta(workdir(), "s2");
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(loaded->id, "s2");
  EXPECT_EQ(loaded->workdir, workdir());
}

TEST_F(StoreTest, MissingFilesAreNotFound) {
  EXPECT_THAT(LoadTranscript(workdir(), "none"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(LoadMeta(workdir(), "none"), StatusIs(absl::StatusCode::kNotFound));
  MakeSessionsDir();
  EXPECT_THAT(LoadTranscript(workdir(), "none"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(InSessions("none.json"))));
}

TEST_F(StoreTest, ListsTheSessionsWithATranscriptSorted) {
  EXPECT_THAT(ListSessionIds(workdir()), IsEmpty());  // no sessions dir yet
  ASSERT_THAT(SaveTranscript(workdir(), "b", Messages()), IsOk());
  ASSERT_THAT(SaveTranscript(workdir(), "a", Messages()), IsOk());
  ASSERT_THAT(SaveMeta(Meta("c")), IsOk());  // meta alone is no session
  WriteFile(InSessions("d.compacted.jsonl"), "");
  WriteFile(InSessions("a.json.tmp.0123456789abcdef"), "");
  EXPECT_THAT(ListSessionIds(workdir()), ElementsAre("a", "b"));
}

TEST_F(StoreTest, DeleteRemovesEveryFileOfTheSessionAndNoOther) {
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  ASSERT_THAT(SaveMeta(Meta("s1")), IsOk());
  ASSERT_THAT(AppendCompacted(workdir(), "s1", Json::array(), "sum"), IsOk());
  { ASSERT_THAT(SessionLock::Acquire(workdir(), "s1"), IsOk()); }
  ASSERT_THAT(SaveTranscript(workdir(), "s2", Messages()), IsOk());
  ASSERT_THAT(DeleteSessionFiles(workdir(), "s1"), IsOk());
  EXPECT_THAT(ListDir(Sessions()), ElementsAre("s2.journal", "s2.json"));
  EXPECT_THAT(DeleteSessionFiles(workdir(), "s1"), IsOk());  // already gone
  TempDir empty;
  EXPECT_THAT(DeleteSessionFiles(empty.path(), "s1"), IsOk());  // no sessions dir at all
}

TEST_F(StoreTest, AppendCompactedAddsOneLinePerCompaction) {
  Json removed = Json::array({{{"role", "user"}, {"content", "old"}}});
  ASSERT_THAT(AppendCompacted(workdir(), "s1", removed, "first"), IsOk());
  ASSERT_THAT(AppendCompacted(workdir(), "s1", Json::array(), "second"), IsOk());
  std::string text = ReadFile(InSessions("s1.compacted.jsonl"));
  std::vector<Json> lines;
  for (size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    auto j = ParseJson(text.substr(pos, nl - pos));
    ASSERT_THAT(j, IsOk());
    lines.push_back(*j);
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["summary"], "first");
  EXPECT_EQ(lines[0]["removed"], removed);
  EXPECT_TRUE(lines[0]["unix_ms"].is_number_integer());
  EXPECT_EQ(lines[1]["summary"], "second");
}

// A read-only checkout works, and a repository neither receives nor ships a session.
TEST_F(StoreTest, EveryFileOfASessionIsInTheStateDirectoryAndNoneInTheProject) {
  ASSERT_THAT(SessionLock::Acquire(workdir(), "s1"), IsOk());
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  ASSERT_THAT(SaveMeta(Meta("s1")), IsOk());
  ASSERT_THAT(AppendCompacted(workdir(), "s1", Json::array(), "sum"), IsOk());
  EXPECT_THAT(ListDir(workdir()), IsEmpty());
  EXPECT_THAT(ListDir(Sessions()), ElementsAre("s1.compacted.jsonl", "s1.journal", "s1.json",
                                               "s1.lock", "s1.meta.json"));
  EXPECT_EQ(Sessions().rfind(state_.Join("agent/projects/"), 0), 0u) << Sessions();
  for (const std::string& dir : {state_.Join("agent/projects"), ProjectState(), Sessions()}) {
    struct stat st;
    ASSERT_EQ(::stat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << dir;
  }
  EXPECT_THAT(ListSessionIds(workdir()), ElementsAre("s1"));
  ASSERT_THAT(DeleteSessionFiles(workdir(), "s1"), IsOk());
  EXPECT_THAT(ListDir(Sessions()), IsEmpty());
}

// Readable (the project's base name) and one directory per project path, even for projects
// of one name; the same path always has the same key.
TEST_F(StoreTest, TheProjectKeyIsTheBaseNameAndAHashOfThePath) {
  EXPECT_EQ(ProjectKey("/home/u/src/agentd"), ProjectKey("/home/u/src/agentd"));
  EXPECT_NE(ProjectKey("/home/u/src/agentd"), ProjectKey("/home/u/old/agentd"));
  EXPECT_THAT(ProjectKey("/home/u/src/agentd"), ::testing::MatchesRegex("agentd-[0-9a-f]{16}"));
  EXPECT_THAT(ProjectKey("/"), ::testing::MatchesRegex("p-[0-9a-f]{16}"));
  EXPECT_THAT(ProjectKey("/x/.hidden dir;rm"),
              ::testing::MatchesRegex("p.hiddendirrm-[0-9a-f]{16}"));
  EXPECT_EQ(ProjectKey("/x/" + std::string(300, 'a')).size(), 40u + 1 + 16);
}

TEST_F(StoreTest, ALockIsHeldOncePerSession) {
  auto first = SessionLock::Acquire(workdir(), "s1");
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(SessionLock::Acquire(workdir(), "s1"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("another agentd"), HasSubstr(InSessions("s1.lock")))));
  EXPECT_THAT(SessionLock::Acquire(workdir(), "s2"), IsOk());
  SessionLock moved = *std::move(first);
  EXPECT_THAT(SessionLock::Acquire(workdir(), "s1"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  { SessionLock gone = std::move(moved); }
  EXPECT_THAT(SessionLock::Acquire(workdir(), "s1"), IsOk());
}

TEST_F(StoreTest, ADamagedTranscriptIsDataLossNamingTheFile) {
  MakeSessionsDir();
  for (const char* bad : {"{not json", "{\"role\": \"user\"}",
                          "[{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"r\"}]"}) {
    WriteFile(InSessions("s1.json"), bad);
    EXPECT_THAT(LoadTranscript(workdir(), "s1"),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(InSessions("s1.json"))))
        << bad;
  }
}

TEST_F(StoreTest, ADamagedMetaFileIsDataLossNamingTheFile) {
  MakeSessionsDir();
  for (const char* bad : {"", "{\"title\":", "[1]"}) {
    WriteFile(InSessions("s1.meta.json"), bad);
    EXPECT_THAT(LoadMeta(workdir(), "s1"),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(InSessions("s1.meta.json"))))
        << bad;
  }
}

// ---- Planted symlinks and foreign directories in the state directory ---------------------

// A directory below the state directory pointing elsewhere: every call is refused, naming the
// link, and nothing outside is written, created or removed.
void ExpectEveryCallRefused(const std::string& workdir, const std::string& link) {
  const auto kRefused = StatusIs(absl::StatusCode::kPermissionDenied,
                                 AllOf(HasSubstr(link), HasSubstr("symbolic link")));
  EXPECT_THAT(SaveTranscript(workdir, "s1", Messages()), kRefused);
  SessionMeta m;
  m.id = "s1";
  m.workdir = workdir;
  EXPECT_THAT(SaveMeta(m), kRefused);
  EXPECT_THAT(AppendCompacted(workdir, "s1", Json::array(), "sum"), kRefused);
  EXPECT_THAT(SessionLock::Acquire(workdir, "s1"), kRefused);
  EXPECT_THAT(LoadTranscript(workdir, "s1"), kRefused);
  EXPECT_THAT(LoadMeta(workdir, "s1"), kRefused);
  EXPECT_THAT(DeleteSessionFiles(workdir, "s1"), kRefused);
  EXPECT_THAT(ListSessionIds(workdir), IsEmpty());
}

TEST_F(StoreTest, TheProjectsDirAsASymlinkIsRefused) {
  WriteFile(outside_.Join("k/sessions/s1.json"), Messages().dump());
  ASSERT_THAT(MakeDirs(state_.Join("agent")), IsOk());
  Plant(outside_.path(), state_.Join("agent/projects"));
  ExpectEveryCallRefused(workdir(), state_.Join("agent/projects"));
  EXPECT_THAT(ListDir(outside_.path()), ElementsAre("k"));
  EXPECT_EQ(ReadFile(outside_.Join("k/sessions/s1.json")), Messages().dump());
}

TEST_F(StoreTest, TheProjectDirAsASymlinkIsRefused) {
  WriteFile(outside_.Join("sessions/s1.json"), Messages().dump());
  ASSERT_THAT(MakeDirs(state_.Join("agent/projects")), IsOk());
  Plant(outside_.path(), ProjectState());
  ExpectEveryCallRefused(workdir(), ProjectState());
  EXPECT_THAT(ListDir(outside_.Join("sessions")), ElementsAre("s1.json"));
}

TEST_F(StoreTest, SessionsDirAsASymlinkIsRefused) {
  WriteFile(outside_.Join("s1.json"), Messages().dump());
  ASSERT_THAT(MakeDirs(ProjectState()), IsOk());
  Plant(outside_.path(), Sessions());
  ExpectEveryCallRefused(workdir(), Sessions());
  EXPECT_THAT(ListDir(outside_.path()), ElementsAre("s1.json"));
  EXPECT_EQ(ReadFile(outside_.Join("s1.json")), Messages().dump());
}

TEST_F(StoreTest, SessionsDirThatIsAFileIsRefused) {
  WriteFile(Sessions(), "x");
  EXPECT_THAT(SaveTranscript(workdir(), "s1", Messages()),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr(Sessions()), HasSubstr("not a directory"))));
}

TEST_F(StoreTest, SessionsDirOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_THAT(MakeDirs(Sessions()), IsOk());
  ASSERT_EQ(::chown(Sessions().c_str(), 65534, 65534), 0);
  EXPECT_THAT(SaveTranscript(workdir(), "s1", Messages()),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr(Sessions()), HasSubstr("another user"))));
}

TEST_F(StoreTest, ATranscriptSymlinkIsNeitherWrittenNorRead) {
  std::string victim = Victim();
  MakeSessionsDir();
  Plant(victim, InSessions("s1.json"));
  EXPECT_THAT(SaveTranscript(workdir(), "s1", Messages()),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(InSessions("s1.json"))));
  EXPECT_THAT(LoadTranscript(workdir(), "s1"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(InSessions("s1.json"))));
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_TRUE(IsSymlink(InSessions("s1.json")));
}

TEST_F(StoreTest, AMetaSymlinkIsNeitherWrittenNorRead) {
  std::string victim = Victim();
  MakeSessionsDir();
  Plant(victim, InSessions("s1.meta.json"));
  EXPECT_THAT(SaveMeta(Meta("s1")),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(InSessions("s1.meta.json"))));
  EXPECT_THAT(LoadMeta(workdir(), "s1"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(InSessions("s1.meta.json"))));
  EXPECT_EQ(ReadFile(victim), "precious\n");
}

// The temp name used to be <name>.tmp.<pid>, which a repository could plant for a guessed pid.
TEST_F(StoreTest, ASymlinkAtTheOldTempNameIsNotWrittenThrough) {
  std::string victim = Victim();
  MakeSessionsDir();
  Plant(victim, InSessions(absl::StrCat("s1.json.tmp.", ::getpid())));
  ASSERT_THAT(SaveTranscript(workdir(), "s1", Messages()), IsOk());
  EXPECT_EQ(ReadFile(victim), "precious\n");
  auto t = LoadTranscript(workdir(), "s1");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->messages(), Messages());
}

TEST_F(StoreTest, ACompactedLogSymlinkIsNotAppendedTo) {
  std::string victim = Victim();
  MakeSessionsDir();
  Plant(victim, InSessions("s1.compacted.jsonl"));
  EXPECT_THAT(
      AppendCompacted(workdir(), "s1", Json::array(), "sum"),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(InSessions("s1.compacted.jsonl"))));
  EXPECT_EQ(ReadFile(victim), "precious\n");
}

TEST_F(StoreTest, ALockSymlinkIsNotOpened) {
  MakeSessionsDir();
  // Following the link would create this file.
  const std::string target = outside_.Join("created-through-the-link");
  Plant(target, InSessions("s1.lock"));
  EXPECT_THAT(SessionLock::Acquire(workdir(), "s1"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(InSessions("s1.lock"))));
  EXPECT_THAT(ListDir(outside_.path()), IsEmpty());
}

TEST_F(StoreTest, AnIdThatIsNotAFileNameIsRefused) {
  Victim("x.json");
  EXPECT_THAT(SaveTranscript(workdir(), "../../x", Messages()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(DeleteSessionFiles(workdir(), "../x"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace agent::daemon
