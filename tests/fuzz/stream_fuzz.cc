// libFuzzer target for the model stream pipeline: SseParser, OpenAiStreamAssembler,
// AnthropicStreamAssembler and ResponsesStreamAssembler. Invariants checked (a violation
// traps):
// - nothing crashes or hangs, whatever the bytes;
// - the parser gives the same events, and each assembler the same reply or error and the same
//   sink calls, when the input is fed whole and when it is fed in pieces (split points derived
//   from the input, so a failure reproduces from the file alone);
// - the assemblers also survive the raw input as one event's data (the merger fuzzed without
//   the framing in between);
// - every text that leaves the pipeline is valid UTF-8: event fields, sink calls, reply fields;
// - with a small SSE cap, whole and split input stop at the same event with the same error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/utf8.h"
#include "daemon/llm/anthropic_stream.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/openai_stream.h"
#include "daemon/llm/responses_stream.h"
#include "daemon/llm/sse_parser.h"

namespace {

using agent::IsValidUtf8;
using agent::Json;
using namespace agent::daemon::llm;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

class Sink : public StreamSink {
 public:
  void OnText(std::string_view t) override {
    Check(IsValidUtf8(t));
    log += "T";
    log.append(t);
  }
  void OnReasoning(std::string_view t) override {
    Check(IsValidUtf8(t));
    log += "R";
    log.append(t);
  }
  void OnToolCallStarted(std::string_view id, std::string_view name) override {
    Check(IsValidUtf8(id) && IsValidUtf8(name));
    log += "C";
    log.append(id);
    log += "|";
    log.append(name);
  }
  void OnRetry(int, int, int64_t, std::string_view) override {}
  std::string log;
};

std::string Canonical(const absl::StatusOr<ModelReply>& r) {
  if (!r.ok()) return "error " + r.status().ToString();
  Check(IsValidUtf8(r->content) && IsValidUtf8(r->reasoning) && IsValidUtf8(r->refusal) &&
        IsValidUtf8(r->finish_reason));
  Json calls = Json::array();
  for (const ToolCall& c : r->tool_calls) {
    Check(IsValidUtf8(c.id) && IsValidUtf8(c.name) && IsValidUtf8(c.arguments));
    calls.push_back({c.id, c.name, c.arguments, c.extra});
  }
  Json j = {r->content,
            r->reasoning,
            r->refusal,
            r->finish_reason,
            calls,
            r->provider_fields,
            r->usage ? Json({r->usage->prompt_tokens, r->usage->completion_tokens}) : Json()};
  return agent::DumpJson(j);
}

template <typename Assembler>
std::string Assemble(const std::vector<SseEvent>& events) {
  Sink sink;
  Assembler a(&sink);
  absl::Status error;
  for (const SseEvent& ev : events) {
    error = a.OnEvent(ev);
    if (!error.ok()) break;
  }
  const bool complete = a.Complete();
  const bool started = a.OutputStarted();
  std::string out = error.ok() ? Canonical(a.Finish()) : Canonical(error);
  return out + (complete ? " complete " : " incomplete ") + (started ? "started " : "") + sink.log;
}

std::vector<SseEvent> Parse(std::string_view input, const std::vector<size_t>& cuts, bool* partial,
                            size_t max_event_bytes = kMaxSseEventBytes,
                            std::string* status = nullptr) {
  SseParser::Options options;
  options.max_event_bytes = max_event_bytes;
  SseParser parser(options);
  std::vector<SseEvent> events;
  size_t pos = 0;
  for (size_t cut : cuts) {
    parser.Feed(input.substr(pos, cut - pos), &events);
    pos = cut;
  }
  parser.Feed(input.substr(pos), &events);
  parser.Finish(&events);
  *partial = parser.HasPartialEvent();
  if (status != nullptr) *status = parser.status().ToString();
  for (const SseEvent& ev : events) {
    Check(IsValidUtf8(ev.event) && IsValidUtf8(ev.data) && IsValidUtf8(ev.id));
  }
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // Split points from an FNV hash of the input: increasing, inside (0, size).
  std::vector<size_t> cuts;
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : input) h = (h ^ c) * 1099511628211ULL;
  for (size_t pos = 0; size > 1;) {
    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    pos += 1 + (h >> 33) % 17;  // pieces of 1..17 bytes: every kind of boundary gets hit
    if (pos >= size) break;
    cuts.push_back(pos);
  }

  bool partial_whole = false;
  bool partial_split = false;
  const std::vector<SseEvent> whole = Parse(input, {}, &partial_whole);
  const std::vector<SseEvent> split = Parse(input, cuts, &partial_split);
  Check(whole == split);
  Check(partial_whole == partial_split);

  // A small cap, so that fuzzed inputs reach it: the same events and error for any split.
  std::string status_whole;
  std::string status_split;
  const size_t cap = 48;
  Check(Parse(input, {}, &partial_whole, cap, &status_whole) ==
        Parse(input, cuts, &partial_split, cap, &status_split));
  Check(status_whole == status_split);

  Check(Assemble<OpenAiStreamAssembler>(whole) == Assemble<OpenAiStreamAssembler>(split));
  Check(Assemble<AnthropicStreamAssembler>(whole) == Assemble<AnthropicStreamAssembler>(split));
  Check(Assemble<ResponsesStreamAssembler>(whole) == Assemble<ResponsesStreamAssembler>(split));

  // The merger on its own: the raw bytes as one event, plain and as an Anthropic-style event.
  const std::vector<SseEvent> raw = {SseEvent{"", std::string(input), ""}};
  Assemble<OpenAiStreamAssembler>(raw);
  Assemble<AnthropicStreamAssembler>(raw);
  Assemble<ResponsesStreamAssembler>(raw);
  return 0;
}
