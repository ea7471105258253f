#include "daemon/tools/background_jobs.h"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "common/process_table.h"
#include "test_util.h"

namespace agent::daemon::tools {
namespace {

using ::agent::daemon::tools::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

SubprocessOptions Command(const std::string& command, const std::string& cwd) {
  SubprocessOptions o;
  o.command = command;
  o.cwd = cwd;
  return o;
}

bool NamedProcessLives(const std::string& marker) {
  for (const ProcessEntry& p : ReadProcessTable()) {
    if (p.state == 'Z' || p.state == 'X') continue;
    std::ifstream f("/proc/" + std::to_string(p.pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) return true;
  }
  return false;
}

TEST(BackgroundJobsTest, AJobRunsOnAndItsOutputIsReadOnce) {
  TempDir dir;
  BackgroundJobs jobs;
  absl::StatusOr<int> id = jobs.Start(Command("echo one; echo two >&2", dir.path()), "echo");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 1);
  ASSERT_TRUE(jobs.WaitEnded(*id, 10s));
  absl::StatusOr<std::string> first = jobs.Read(*id);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(*first, HasSubstr("[job 1 ended (exit code 0): echo]"));
  EXPECT_THAT(*first, HasSubstr("one\n"));
  EXPECT_THAT(*first, HasSubstr("two\n"));
  absl::StatusOr<std::string> again = jobs.Read(*id);
  EXPECT_THAT(*again, HasSubstr("(no new output)"));
  EXPECT_THAT(*again, Not(HasSubstr("one")));
  EXPECT_EQ(jobs.Running(), 0);
  EXPECT_TRUE(absl::IsNotFound(jobs.Read(7).status()));
}

TEST(BackgroundJobsTest, AJobOutlivesTheThreadThatStartedIt) {
  TempDir dir;
  BackgroundJobs jobs;
  const std::string marker = dir.path() + "/outlives";
  int id = 0;
  std::thread starter(
      [&] { id = *jobs.Start(Command("exec -a '" + marker + "' sleep 30", dir.path()), "sleep"); });
  starter.join();  // a turn's thread that ends
  EXPECT_FALSE(jobs.WaitEnded(id, 200ms));
  EXPECT_EQ(jobs.Running(), 1);
  EXPECT_THAT(jobs.List(), HasSubstr("job 1 running: sleep"));
  absl::StatusOr<std::string> killed = jobs.Kill(id);
  ASSERT_TRUE(killed.ok());
  EXPECT_THAT(*killed, HasSubstr("[job 1 ended (killed): sleep]"));
  EXPECT_FALSE(NamedProcessLives(marker));
}

TEST(BackgroundJobsTest, KillAllEndsEveryJobWithWhatItStartedAndRefusesNewOnes) {
  TempDir dir;
  BackgroundJobs jobs;
  const std::string marker = dir.path() + "/child";
  ASSERT_TRUE(
      jobs.Start(Command("(exec -a '" + marker + "' sleep 30) & wait", dir.path()), "a").ok());
  ASSERT_TRUE(jobs.Start(Command("sleep 30", dir.path()), "b").ok());
  for (int i = 0; i < 500 && !NamedProcessLives(marker); ++i) {
    std::this_thread::sleep_for(10ms);  // the child starts in the background
  }
  ASSERT_TRUE(NamedProcessLives(marker));
  jobs.KillAll();
  EXPECT_EQ(jobs.Running(), 0);
  EXPECT_FALSE(NamedProcessLives(marker));
  EXPECT_THAT(jobs.List(), HasSubstr("job 2 ended (killed): b"));
  EXPECT_TRUE(absl::IsFailedPrecondition(jobs.Start(Command("true", dir.path()), "c").status()));
}

TEST(BackgroundJobsTest, OnlySoManyRunAtOnce) {
  TempDir dir;
  BackgroundJobs jobs;
  for (int i = 0; i < BackgroundJobs::kMaxRunning; ++i) {
    ASSERT_TRUE(jobs.Start(Command("sleep 30", dir.path()), "sleep").ok());
  }
  absl::Status refused = jobs.Start(Command("sleep 30", dir.path()), "one more").status();
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("\"kill\": true"));
  ASSERT_TRUE(jobs.Kill(1).ok());
  EXPECT_TRUE(jobs.Start(Command("true", dir.path()), "after").ok());
}

TEST(BackgroundJobsTest, UnreadOutputIsCappedToItsNewestBytes) {
  TempDir dir;
  BackgroundJobs jobs;
  // 200,000 bytes of 'a', then a last line: the newest 64 KiB are kept.
  int id = *jobs.Start(
      Command("head -c 200000 /dev/zero | tr '\\0' a; echo; echo last", dir.path()), "flood");
  ASSERT_TRUE(jobs.WaitEnded(id, 10s));
  std::string report = *jobs.Read(id);
  EXPECT_THAT(report, HasSubstr("bytes of output were not kept]"));
  EXPECT_THAT(report, HasSubstr("last\n"));
  EXPECT_LT(report.size(), BackgroundJobs::kMaxUnreadBytes + 200);
}

}  // namespace
}  // namespace agent::daemon::tools
