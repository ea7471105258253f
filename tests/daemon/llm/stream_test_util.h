// Test helpers for the stream assemblers: a sink that records what it was told, a canonical
// JSON form of a reply (or its error), and a runner that feeds bytes through SseParser and an
// assembler at chosen split points.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/json.h"
#include "daemon/llm/model_types.h"
#include "daemon/llm/sse_parser.h"
#include "gmock/gmock.h"
#include "tests/fakes/status_matchers.h"

namespace agent::daemon::llm::testing {

using ::agent::testing::StatusIs;

class RecordingSink : public StreamSink {
 public:
  void OnText(std::string_view text) override {
    text_.append(text);
    ++text_calls_;
  }
  void OnReasoning(std::string_view text) override { reasoning_.append(text); }
  void OnToolCallStarted(std::string_view id, std::string_view name) override {
    started_.push_back(std::string(id) + "|" + std::string(name));
  }
  void OnRetry(int, int, int64_t, std::string_view) override {}

  const std::string& text() const { return text_; }
  const std::string& reasoning() const { return reasoning_; }
  const std::vector<std::string>& started() const { return started_; }
  int text_calls() const { return text_calls_; }

 private:
  std::string text_;
  std::string reasoning_;
  std::vector<std::string> started_;
  int text_calls_ = 0;
};

// {"content","reasoning","refusal","finish_reason","tool_calls":[{"id","name","arguments",
// "extra"}],"usage":{...}|null,"provider_fields"} or {"error":{"code","message"}}.
inline Json ReplyToJson(const absl::StatusOr<ModelReply>& reply) {
  if (!reply.ok()) {
    return {{"error",
             {{"code", absl::StatusCodeToString(reply.status().code())},
              {"message", std::string(reply.status().message())}}}};
  }
  Json calls = Json::array();
  for (const ToolCall& c : reply->tool_calls) {
    calls.push_back(
        {{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}, {"extra", c.extra}});
  }
  Json usage = nullptr;
  if (reply->usage) {
    usage = {{"prompt_tokens", reply->usage->prompt_tokens},
             {"completion_tokens", reply->usage->completion_tokens}};
  }
  return {{"content", reply->content},
          {"reasoning", reply->reasoning},
          {"refusal", reply->refusal},
          {"finish_reason", reply->finish_reason},
          {"tool_calls", calls},
          {"usage", usage},
          {"provider_fields", reply->provider_fields}};
}

struct StreamRun {
  Json reply;  // ReplyToJson of Finish(), or of the first OnEvent error
  std::string sink_text;
  std::string sink_reasoning;
  std::vector<std::string> sink_started;
  bool output_started = false;
  bool partial_at_end = false;
  size_t events = 0;
};

// Feeds `bytes` split at `cuts` (ascending offsets) through a parser and an Assembler.
template <typename Assembler>
StreamRun RunStream(std::string_view bytes, const std::vector<size_t>& cuts) {
  RecordingSink sink;
  Assembler assembler(&sink);
  SseParser parser;
  StreamRun run;
  absl::Status error;
  std::vector<SseEvent> events;
  auto drain = [&] {
    for (const SseEvent& ev : events) {
      ++run.events;
      if (error.ok()) error = assembler.OnEvent(ev);
    }
    events.clear();
  };
  size_t pos = 0;
  for (size_t cut : cuts) {
    if (cut <= pos || cut >= bytes.size()) continue;
    parser.Feed(bytes.substr(pos, cut - pos), &events);
    drain();
    pos = cut;
  }
  parser.Feed(bytes.substr(pos), &events);
  drain();
  parser.Finish(&events);
  drain();
  run.partial_at_end = parser.HasPartialEvent();
  run.reply = error.ok() ? ReplyToJson(assembler.Finish()) : ReplyToJson(error);
  run.sink_text = sink.text();
  run.sink_reasoning = sink.reasoning();
  run.sink_started = sink.started();
  run.output_started = assembler.OutputStarted();
  return run;
}

}  // namespace agent::daemon::llm::testing
