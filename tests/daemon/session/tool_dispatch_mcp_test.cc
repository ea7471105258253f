// ToolDispatch with gated tools that may run concurrently (MCP tools annotated readOnlyHint).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/mutex.h"
#include "daemon/session/tool_dispatch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

using ::testing::ElementsAre;

// Gated but concurrent; waits (bounded) until `peers` calls run at once.
class ReadOnlyGatedTool : public tools::Tool {
 public:
  explicit ReadOnlyGatedTool(int peers) : peers_(peers) {}
  std::string_view Name() const override { return "mcp__s__look"; }
  Json Schema() const override { return Json::object(); }
  bool Gated() const override { return true; }
  bool Concurrent() const override { return true; }
  tools::ToolOutcome Run(const Json&, tools::ToolContext&) const override {
    agent::MutexLock l(&mu_);
    ++arrived_;
    cv_.SignalAll();
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (arrived_ < peers_ && absl::Now() < deadline) {
      cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    return {arrived_ >= peers_ ? "together" : "alone", false};
  }

 private:
  int peers_;
  mutable agent::Mutex mu_;
  mutable agent::CondVar cv_;
  mutable int arrived_ ABSL_GUARDED_BY(mu_) = 0;
};

class Host : public ToolCallHost {
 public:
  void CallReady(const llm::ToolCall&) override {}
  std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call, const Json&) override {
    // Approvals are asked one at a time, on the turn thread.
    EXPECT_EQ(std::this_thread::get_id(), turn_thread);
    EXPECT_EQ(++asking, 1);
    authorized.push_back(call.id);
    --asking;
    if (call.id == refuse) return tools::ToolOutcome{"refused", true};
    return std::nullopt;
  }
  tools::ToolContext MakeToolContext(const std::string&) override { return {}; }
  void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                     const std::vector<tools::ToolOutcome>& outcomes) override {
    batches.push_back(outcomes.size());
    for (size_t k = 0; k < outcomes.size(); ++k) {
      results.push_back(calls[first + k].id + ": " + outcomes[k].content);
    }
  }
  std::thread::id turn_thread = std::this_thread::get_id();
  std::atomic<int> asking{0};
  std::string refuse;
  std::vector<std::string> authorized, results;
  std::vector<size_t> batches;
};

llm::ToolCall Call(std::string id) {
  llm::ToolCall c;
  c.id = std::move(id);
  c.name = "mcp__s__look";
  c.arguments = "{}";
  return c;
}

TEST(ToolDispatchMcpTest, GatedReadOnlyCallsAreAuthorisedInOrderThenRunTogether) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<ReadOnlyGatedTool>(2));
  Host host;
  std::atomic<bool> cancelled{false};
  ToolDispatch(&registry, &host, &cancelled).Run({Call("a"), Call("b")}, false);
  EXPECT_THAT(host.authorized, ElementsAre("a", "b"));
  EXPECT_THAT(host.batches, ElementsAre(2u));
  EXPECT_THAT(host.results, ElementsAre("a: together", "b: together"));
}

TEST(ToolDispatchMcpTest, ARefusedCallOfTheBatchIsAnsweredAndTheOthersRun) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<ReadOnlyGatedTool>(2));
  Host host;
  host.refuse = "b";
  std::atomic<bool> cancelled{false};
  ToolDispatch(&registry, &host, &cancelled).Run({Call("a"), Call("b"), Call("c")}, false);
  EXPECT_THAT(host.authorized, ElementsAre("a", "b", "c"));
  EXPECT_THAT(host.results, ElementsAre("a: together", "b: refused", "c: together"));
}

}  // namespace
}  // namespace agent::daemon
