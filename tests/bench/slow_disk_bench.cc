// One session's steps while another session of the daemon saves a 10,000-message transcript to
// a slow disk: no slower than with that other session idle (issue 23's goal). In one process,
// with the sessions' disk seam (SessionFiles) and a scripted model:
//   - session A: 10,000 messages (laid down on the real disk), then its files turn slow: every
//     write sleeps 50 ms before it reaches the disk (an fsync of a busy disk). A then runs
//     turns of one call, each followed by nothing until its writes are done (as a session
//     waiting for its model), so that it is always in the middle of a slow save.
//   - session B: on the real disk, a turn of --steps steps (one list_dir call each); a new
//     session for each timing.
// B's turn is timed alone and beside A, alternately, --rounds times each. Output: one JSON
// object, milliseconds per B step (medians) and how many slow writes A made meanwhile. The
// fake model keeps no copy of the requests (that would cost as much as the transcript).
//
//   slow_disk_bench [--steps 100] [--rounds 3] [--messages 10000] [--slow-ms 50]
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/session/files.h"
#include "daemon/session/opening.h"
#include "daemon/session/session.h"
#include "daemon/tools/tool_registry.h"
#include "tests/fakes/event_recorder.h"
#include "tests/fakes/fake_model_client.h"

namespace {

namespace v1 = agent::v1;
using agent::daemon::Session;
using agent::daemon::SessionDeps;
using agent::daemon::SessionFiles;
using agent::testing::CallsReply;
using agent::testing::EventRecorder;
using agent::testing::FakeModelClient;
using agent::testing::FakeScript;
using agent::testing::TextReply;

int g_slow_write_ms = 50;  // --slow-ms: what each write of A sleeps first

// What A's files have done: writes made while slow, and writes under way.
struct DiskState {
  std::atomic<bool> slow{false};
  std::atomic<int> slow_writes{0};
  std::atomic<int> in_flight{0};
};

// The real files; while `slow` is set every write first sleeps g_slow_write_ms.
class SlowFiles : public SessionFiles {
 public:
  SlowFiles(std::shared_ptr<DiskState> state, std::unique_ptr<SessionFiles> real)
      : state_(std::move(state)), real_(std::move(real)) {}
  absl::Status WriteTranscript(std::string_view text) override {
    return Slowly([&] { return real_->WriteTranscript(text); });
  }
  absl::Status AppendJournal(std::string_view lines) override {
    return Slowly([&] { return real_->AppendJournal(lines); });
  }
  absl::Status WriteMeta(const agent::daemon::SessionMeta& meta) override {
    return Slowly([&] { return real_->WriteMeta(meta); });
  }
  absl::Status Delete() override { return real_->Delete(); }

 private:
  template <typename Write>
  absl::Status Slowly(Write write) {
    ++state_->in_flight;
    if (state_->slow) {
      ++state_->slow_writes;
      std::this_thread::sleep_for(std::chrono::milliseconds(g_slow_write_ms));
    }
    absl::Status s = write();
    --state_->in_flight;
    return s;
  }
  std::shared_ptr<DiskState> state_;
  std::unique_ptr<SessionFiles> real_;
};

struct Bench {
  std::string workdir;
  agent::daemon::tools::ToolRegistry tools = agent::daemon::tools::ToolRegistry::CreateCore();
  std::shared_ptr<DiskState> disk = std::make_shared<DiskState>();

  std::shared_ptr<Session> NewSession(std::shared_ptr<FakeScript> script, bool slow_disk) {
    {
      agent::MutexLock l(&script->mu);
      script->record_requests = false;
    }
    SessionDeps d;
    d.epoch = "bench";
    d.tools = &tools;
    d.make_model_client = [script] { return std::make_unique<FakeModelClient>(script); };
    d.config.max_steps = 100000;
    d.config.compact_at_chars = 0;  // never: A keeps its 10,000 messages
    if (slow_disk) {
      d.files_for = [this](const std::string& w, const std::string& id) {
        return std::make_unique<SlowFiles>(disk, agent::daemon::DiskSessionFiles(w, id));
      };
    }
    agent::daemon::SessionSettings s;
    s.model.model = "scripted";
    s.policy = v1::POLICY_MODE_YES;
    auto created = CreateSession(workdir, s, "", d);
    if (!created.ok()) {
      std::fprintf(stderr, "slow_disk_bench: %s\n", created.status().ToString().c_str());
      std::exit(1);
    }
    return *created;
  }
};

// A reply of `calls` list_dir calls (ids unique by `tag`), answered by the session's tool.
agent::daemon::llm::ModelReply ListDirs(int calls, const std::string& tag) {
  std::vector<std::pair<std::string, std::string>> v(calls, {"list_dir", "{\"path\":\".\"}"});
  return CallsReply(v, tag);
}

// Runs one turn to its end; false when it did not end in time.
bool RunTurn(Session& s, EventRecorder& rec, int* turns, const std::string& prompt) {
  if (!s.SendPrompt(prompt, "bench").ok()) return false;
  return rec.WaitFor([](const v1::Event& e) { return e.has_turn_ended(); }, ++*turns,
                     absl::Minutes(5)) != nullptr;
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "slow_disk_bench: %s\n", what);
  std::_Exit(1);  // sessions may still run: no destructors
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 100, rounds = 3, messages = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--messages") (void)absl::SimpleAtoi(argv[i + 1], &messages);
    if (flag == "--steps") (void)absl::SimpleAtoi(argv[i + 1], &steps);
    if (flag == "--rounds") (void)absl::SimpleAtoi(argv[i + 1], &rounds);
    if (flag == "--slow-ms") (void)absl::SimpleAtoi(argv[i + 1], &g_slow_write_ms);
  }
  char tmpl[] = "/var/tmp/slow-disk-bench-XXXXXX";  // a real disk where /tmp is tmpfs
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  Bench bench;
  bench.workdir = std::filesystem::canonical(tmpl).string();
  setenv("XDG_STATE_HOME", (bench.workdir + "/state").c_str(), 1);
  std::filesystem::create_directories(bench.workdir + "/project");

  // A: --messages messages in replies of 256 calls (the cap), on the real disk.
  auto script_a = std::make_shared<FakeScript>();
  std::shared_ptr<Session> a = bench.NewSession(script_a, /*slow_disk=*/true);
  EventRecorder rec_a;
  a->Attach(&rec_a, "bench", false, "", 0);
  int turns_a = 0;
  // The prompt and the answer, and a reply of k calls is k + 1 messages.
  for (int left = messages - 2; left > 1;) {
    const int calls = std::min(256, left - 1);
    script_a->Add(ListDirs(calls, absl::StrCat("a", left, "_")));
    left -= calls + 1;
  }
  script_a->Add(TextReply("filled"));
  if (!RunTurn(*a, rec_a, &turns_a, "fill")) Fail("A's first turn did not end");
  const int64_t a_messages = a->Info().message_count();

  // B's turn: `steps` steps of one call each, then the answer; ms per step. Each timing has a
  // session B of its own, so that no timing inherits a longer transcript or event list.
  auto time_b = [&](int round) {
    auto script_b = std::make_shared<FakeScript>();
    std::shared_ptr<Session> b = bench.NewSession(script_b, /*slow_disk=*/false);
    EventRecorder rec_b;
    b->Attach(&rec_b, "bench", false, "", 0);
    int turns_b = 0;
    for (int i = 0; i < steps; ++i) script_b->Add(ListDirs(1, absl::StrCat("b", round, "_", i)));
    script_b->Add(TextReply("done"));
    const auto t0 = std::chrono::steady_clock::now();
    if (!RunTurn(*b, rec_b, &turns_b, "steps")) Fail("B's turn did not end");
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - t0;
    b->Detach(&rec_b);
    b->Shutdown("timed");
    return took.count() / (steps + 1);
  };

  std::vector<double> alone, beside;
  int writes_beside = 0;
  for (int round = 0; round < rounds; ++round) {
    alone.push_back(time_b(2 * round));
    // A saves slowly all through B's turn: a turn of one call, then (as a session waiting for
    // its model would) nothing until its writes are done, then the next turn. A turn's writes
    // start after it ends, so A waits for one to start before it waits for them to end.
    bench.disk->slow.store(true);
    std::atomic<bool> stop{false};
    const int before = bench.disk->slow_writes.load();
    std::thread busy([&] {
      for (int k = 0; !stop && k < 100000; ++k) {
        const int writes = bench.disk->slow_writes.load();
        script_a->Add(ListDirs(1, absl::StrCat("busy", round, "_", k)));
        script_a->Add(TextReply("ok"));
        if (!RunTurn(*a, rec_a, &turns_a, "again")) break;
        for (int i = 0; i < 400 && bench.disk->slow_writes.load() == writes; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        for (int i = 0; i < 400 && bench.disk->in_flight.load() > 0; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
    });
    // B starts once A is in the middle of a slow write.
    for (int i = 0; i < 200 && bench.disk->slow_writes.load() == before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    beside.push_back(time_b(2 * round + 1));
    stop = true;
    busy.join();
    writes_beside += bench.disk->slow_writes.load() - before;
    bench.disk->slow.store(false);
  }
  a->Detach(&rec_a);
  a->Shutdown("bench ends");
  a.reset();
  std::filesystem::remove_all(bench.workdir);

  std::printf(
      "{\"steps\": %d, \"rounds\": %d, \"a_messages\": %lld, \"alone_ms_per_step\": %.3f, "
      "\"beside_ms_per_step\": %.3f, \"slow_writes\": %d}\n",
      steps, rounds, static_cast<long long>(a_messages), Median(alone), Median(beside),
      writes_beside);
  return 0;
}
