// Throughput of the model stream pipeline (SseParser + assembler) over large synthetic
// streams fed in 4 KiB reads, as libcurl would hand them over. Reports MB/s
// (SetBytesProcessed) and deltas per second (SetItemsProcessed), whose inverse is the cost of
// one delta.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "daemon/llm/anthropic_stream.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/openai_stream.h"
#include "daemon/llm/sse_parser.h"

namespace {

using agent::Json;
using namespace agent::daemon::llm;

class NullSink : public StreamSink {
 public:
  void OnText(std::string_view t) override { bytes += t.size(); }
  void OnReasoning(std::string_view t) override { bytes += t.size(); }
  void OnToolCallStarted(std::string_view, std::string_view) override { ++calls; }
  void OnRetry(int, int, int64_t, std::string_view) override {}
  size_t bytes = 0;
  size_t calls = 0;
};

std::string Event(const Json& j) { return "data: " + agent::DumpJson(j) + "\n\n"; }

Json Chunk(const Json& delta, const Json& finish = nullptr) {
  return {{"id", "chatcmpl-bench"},
          {"object", "chat.completion.chunk"},
          {"created", 1700000000},
          {"model", "bench-model"},
          {"choices",
           {{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", finish}}}}};
}

// `deltas` text deltas of a few tokens each (some multi-byte), then 4 tool calls whose
// arguments come in `deltas / 4` fragments in total.
std::string OpenAiStream(int deltas) {
  static const char* kWords[] = {"the ", "quick ", "brown ", "fox ", "日本 ", "→ ", "jumps "};
  std::string s = Event(Chunk({{"role", "assistant"}, {"content", ""}}));
  for (int i = 0; i < deltas; ++i) s += Event(Chunk({{"content", kWords[i % 7]}}));
  const int arg_frags = deltas / 4;
  for (int c = 0; c < 4; ++c) {
    s += Event(Chunk({{"tool_calls",
                       {{{"index", c},
                         {"id", "call_" + std::to_string(c)},
                         {"type", "function"},
                         {"function", {{"name", "read_file"}, {"arguments", ""}}}}}}}));
    for (int i = 0; i < arg_frags / 4; ++i) {
      s += Event(
          Chunk({{"tool_calls", {{{"index", c}, {"function", {{"arguments", "{\"p\":1}"}}}}}}}));
    }
  }
  s += Event(Chunk(Json::object(), "tool_calls"));
  s += "data: [DONE]\n\n";
  return s;
}

std::string AnthropicStream(int deltas) {
  auto ev = [](const char* name, const Json& j) {
    return std::string("event: ") + name + "\ndata: " + agent::DumpJson(j) + "\n\n";
  };
  std::string s = ev("message_start",
                     {{"type", "message_start"}, {"message", {{"usage", {{"input_tokens", 10}}}}}});
  s += ev("content_block_start", {{"type", "content_block_start"},
                                  {"index", 0},
                                  {"content_block", {{"type", "text"}, {"text", ""}}}});
  for (int i = 0; i < deltas; ++i) {
    s += ev("content_block_delta", {{"type", "content_block_delta"},
                                    {"index", 0},
                                    {"delta", {{"type", "text_delta"}, {"text", "word ☕ "}}}});
  }
  s += ev("message_delta", {{"type", "message_delta"},
                            {"delta", {{"stop_reason", "end_turn"}}},
                            {"usage", {{"output_tokens", deltas}}}});
  s += ev("message_stop", {{"type", "message_stop"}});
  return s;
}

size_t CountEvents(std::string_view s) {
  size_t n = 0;
  for (size_t pos = s.find("\n\n"); pos != std::string_view::npos; pos = s.find("\n\n", pos + 2)) {
    ++n;
  }
  return n;
}

template <typename Assembler>
void Run(benchmark::State& state, const std::string& stream) {
  const size_t events = CountEvents(stream);
  constexpr size_t kRead = 4096;
  for (auto _ : state) {
    NullSink sink;
    SseParser parser;
    Assembler assembler(&sink);
    std::vector<SseEvent> out;
    for (size_t pos = 0; pos < stream.size(); pos += kRead) {
      parser.Feed(std::string_view(stream).substr(pos, kRead), &out);
      for (const SseEvent& ev : out) benchmark::DoNotOptimize(assembler.OnEvent(ev));
      out.clear();
    }
    parser.Finish(&out);
    auto reply = assembler.Finish();
    if (!reply.ok()) state.SkipWithError("stream did not assemble");
    benchmark::DoNotOptimize(reply);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}

void BM_OpenAiParseAndAssemble(benchmark::State& state) {
  static const std::string stream = OpenAiStream(static_cast<int>(state.range(0)));
  Run<OpenAiStreamAssembler>(state, stream);
}
BENCHMARK(BM_OpenAiParseAndAssemble)->Arg(20000);

void BM_AnthropicParseAndAssemble(benchmark::State& state) {
  static const std::string stream = AnthropicStream(static_cast<int>(state.range(0)));
  Run<AnthropicStreamAssembler>(state, stream);
}
BENCHMARK(BM_AnthropicParseAndAssemble)->Arg(20000);

// The framing layer alone.
void BM_SseParserOnly(benchmark::State& state) {
  static const std::string stream = OpenAiStream(20000);
  const size_t events = CountEvents(stream);
  for (auto _ : state) {
    SseParser parser;
    std::vector<SseEvent> out;
    for (size_t pos = 0; pos < stream.size(); pos += 4096) {
      parser.Feed(std::string_view(stream).substr(pos, 4096), &out);
      out.clear();
    }
    parser.Finish(&out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}
BENCHMARK(BM_SseParserOnly);

}  // namespace

BENCHMARK_MAIN();
