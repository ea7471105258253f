// CPU of one step's request for a transcript of 100, 1,000 and 10,000 messages: what the
// session does to its transcript per step (append the reply and the tool result, check the
// compaction threshold and that nothing is pending, build the wire body), with the body built
// from the per-message cache (daemon/llm/request_cache.h, as the session does) and, for
// scale, the old way (a whole-transcript validation, a deep copy of the messages, filtered
// and serialised whole).
// The transcripts are store_bench's. Each iteration appends two messages; every 32 steps the
// transcript is cut back to N (untimed, the cache brought up to date), so its size stays
// between N and N + 64 and each step is measured as a session makes it: after appends only.
#include <benchmark/benchmark.h>

#include <string>

#include "common/json.h"
#include "common/transcript.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/request_cache.h"

namespace {

using agent::Json;
namespace llm = agent::daemon::llm;

std::string FileBody(int i) {
  std::string s;
  for (int line = 0; line < 8; ++line) {
    s += "    if (count_" + std::to_string(i) + " > limit) { return \"too many\"; }  // ½ ok\n";
  }
  return s;
}

Json Call(const std::string& id, const std::string& path) {
  return Json::array(
      {Json{{"id", id},
            {"type", "function"},
            {"function",
             {{"name", "read_file"}, {"arguments", agent::DumpJson(Json{{"path", path}})}}}}});
}

// store_bench's messages: user, assistant with a call, tool result, assistant text.
Json Message(int i) {
  switch (i % 4) {
    case 0:
      return Json{{"role", "user"},
                  {"content", "Please look at src/module_" + std::to_string(i) +
                                  ".cc and tell me why the \"limit\" check fails when the "
                                  "count reaches the configured maximum; then fix it."}};
    case 1:
      return Json{{"role", "assistant"},
                  {"content", "I will read the file first."},
                  {"tool_calls", Call("call_" + std::to_string(i) + "_0",
                                      "src/module_" + std::to_string(i) + ".cc")}};
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

agent::Transcript Make(int messages) {
  Json t = Json::array();
  t.push_back(
      Json{{"role", "system"}, {"content", std::string(2000, 's') + " You are a coding agent."}});
  for (int i = 1; i < messages; ++i) t.push_back(Message(i));
  return *agent::Transcript::FromJson(std::move(t));
}

// Six tools of the size of the daemon's.
Json Tools() {
  Json tools = Json::array();
  for (const char* name : {"read_file", "write_file", "edit_file", "bash", "grep", "glob"}) {
    tools.push_back({{"type", "function"},
                     {"function",
                      {{"name", name},
                       {"description", std::string(600, 'd')},
                       {"parameters",
                        {{"type", "object"},
                         {"properties",
                          {{"path", {{"type", "string"}, {"description", std::string(120, 'p')}}},
                           {"text", {{"type", "string"}, {"description", std::string(120, 't')}}}}},
                         {"required", Json::array({"path"})}}}}}});
  }
  return tools;
}

void BM_StepRequest(benchmark::State& state) {
  const bool cached = state.range(0) != 0;
  const size_t n = static_cast<size_t>(state.range(1));
  agent::Transcript t = Make(static_cast<int>(n));
  llm::RequestCache cache;
  llm::ModelRequest req;
  req.settings = agent::ModelSettings{"http://127.0.0.1:1/v1", "k", "bench", "openai", ""};
  req.tools = Tools();
  size_t bytes = 0, chars = 0;
  for (auto _ : state) {
    // The reply and its tool result, as the session appends them.
    Json reply = {{"role", "assistant"}, {"content", "Reading."}, {"tool_calls", Call("s", "a.c")}};
    (void)t.AppendAssistant(std::move(reply));
    (void)t.AppendToolResult("s", FileBody(7));
    chars += t.CharCount();  // the compaction threshold, checked each step
    benchmark::DoNotOptimize(cached ? t.HasPending() : t.ValidateForRequest().ok());
    if (cached) {
      req.prepared = std::make_shared<const llm::PreparedMessages>(
          cache.Prepare(t, llm::Provider::kOpenAi, {}));
    } else {
      req.messages = t.messages();
    }
    absl::StatusOr<llm::WireRequest> wire = llm::BuildWireRequest(req);
    bytes = wire.ok() ? wire->body.size() : 0;
    benchmark::DoNotOptimize(wire);
    // Back to N messages now and then, not part of a step: a session's steps only append
    // (what the cache is built for), so between two cuts each step is measured as one.
    if (t.size() >= n + 64) {
      state.PauseTiming();
      t.TruncateTo(n);
      if (cached) (void)cache.Prepare(t, llm::Provider::kOpenAi, {});
      state.ResumeTiming();
    }
  }
  benchmark::DoNotOptimize(chars);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_StepRequest)
    ->ArgNames({"cached", "messages"})
    ->ArgsProduct({{1, 0}, {100, 1000, 10000}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
