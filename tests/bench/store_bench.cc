// Cost of the saves of a session, for transcripts of 100, 1,000 and 10,000 messages:
// BM_SaveMessage, what the daemon does after every message (the session's SessionSaver appends
// it to the journal and fsyncs), and BM_SaveTranscript, the whole write it does at idle,
// compaction and shutdown (temp file + fsync + rename, and a new journal). The transcripts look
// like real ones: a system prompt, user prompts, assistant text, assistant tool calls and tool
// results of a few hundred bytes with newlines, quotes and some non-ASCII text. Reports the time
// per save and the bytes written per save (counter "bytes", and SetBytesProcessed for MB/s). The
// CPU column is the thread's CPU time: serialisation and syscalls; the rest of the real time is
// waiting for fsync.
//
// The files go to a fresh directory under $TMPDIR (default /tmp), removed at exit, so the
// figure includes the fsync cost of that filesystem.
#include <benchmark/benchmark.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/json.h"
#include "common/transcript.h"
#include "daemon/session/files.h"
#include "daemon/session/saver.h"
#include "daemon/store/store.h"

namespace {

using agent::Json;

std::string FileBody(int i) {
  std::string s;
  for (int line = 0; line < 8; ++line) {
    s += "    if (count_" + std::to_string(i) + " > limit) { return \"too many\"; }  // ½ ok\n";
  }
  return s;
}

// One realistic message of each kind, cycling: user, assistant with a call, tool result,
// assistant text.
Json Message(int i) {
  switch (i % 4) {
    case 0:
      return Json{{"role", "user"},
                  {"content", "Please look at src/module_" + std::to_string(i) +
                                  ".cc and tell me why the \"limit\" check fails when the "
                                  "count reaches the configured maximum; then fix it."}};
    case 1: {
      std::string id = "call_" + std::to_string(i) + "_0";
      Json args{{"path", "src/module_" + std::to_string(i) + ".cc"}};
      return Json{
          {"role", "assistant"},
          {"content", "I will read the file first."},
          {"tool_calls",
           Json::array({Json{
               {"id", id},
               {"type", "function"},
               {"function", {{"name", "read_file"}, {"arguments", agent::DumpJson(args)}}}}})}};
    }
    case 2:
      return Json{{"role", "tool"},
                  {"tool_call_id", "call_" + std::to_string(i - 1) + "_0"},
                  {"content", FileBody(i)}};
    default:
      return Json{{"role", "assistant"},
                  {"content",
                   "The check compares with `>` where the contract says `>=`: at "
                   "exactly the maximum the loop runs once more than allowed. I "
                   "changed it and the tests in tests/module_test.cc pass → done."}};
  }
}

Json Transcript(int messages) {
  Json t = Json::array();
  t.push_back(
      Json{{"role", "system"}, {"content", std::string(2000, 's') + " You are a coding agent."}});
  for (int i = 1; i < messages; ++i) t.push_back(Message(i));
  // For a multiple of 4 messages the last is assistant text: every call is answered.
  return t;
}

std::string TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/store-bench-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  return made != nullptr ? std::string(made) : std::string();
}

void BM_SaveTranscript(benchmark::State& state) {
  std::string dir = TempDir();
  if (dir.empty()) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  // What the daemon saves: a Transcript, whose messages are serialised once when appended.
  auto t = agent::Transcript::FromJson(Transcript(static_cast<int>(state.range(0))));
  if (!t.ok()) {
    state.SkipWithError(std::string(t.status().message()).c_str());
    return;
  }
  // Sessions are saved in the state directory: a private one, never the user's.
  ::setenv("XDG_STATE_HOME", (dir + "/state").c_str(), 1);
  const std::string id = "0123456789abcdef";
  for (auto _ : state) {
    absl::Status s = agent::daemon::SaveTranscript(dir, id, *t);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  std::error_code ec;
  auto bytes = std::filesystem::file_size(agent::daemon::TranscriptPath(dir, id), ec);
  if (!ec) {
    state.counters["bytes"] = static_cast<double>(bytes);
    state.counters["messages"] = static_cast<double>(t->size());
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  }
  std::filesystem::remove_all(dir, ec);
}
BENCHMARK(BM_SaveTranscript)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SaveMessage(benchmark::State& state) {
  std::string dir = TempDir();
  if (dir.empty()) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  auto t = agent::Transcript::FromJson(Transcript(static_cast<int>(state.range(0))));
  if (!t.ok()) {
    state.SkipWithError(std::string(t.status().message()).c_str());
    return;
  }
  const std::string id = "0123456789abcdef";
  agent::daemon::SessionSaver saver(agent::daemon::DiskSessionFiles(dir, id), nullptr);
  saver.Queue(*t, /*whole=*/true);  // the session's first save
  (void)saver.Flush();
  int64_t bytes = 0;
  int i = 0;
  for (auto _ : state) {
    // The message joins the transcript untimed (a Debug build re-checks the rule over the whole
    // transcript after each change): the figure is the save alone.
    state.PauseTiming();
    Json m = Message(4 * (++i % 1000) + 2 + 1);  // assistant text: any place in the transcript
    (void)t->AppendAssistant(std::move(m));
    bytes += static_cast<int64_t>(t->serialized().back().size() + 1);
    state.ResumeTiming();
    saver.Queue(*t, /*whole=*/false);  // under the session's mutex
    (void)saver.Flush();               // once it is released: the append and its fsync
    if (saver.unsaved()) {
      state.SkipWithError(std::string(saver.last_error().message()).c_str());
      break;
    }
  }
  state.counters["bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
  state.counters["messages"] = static_cast<double>(state.range(0));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
BENCHMARK(BM_SaveMessage)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
