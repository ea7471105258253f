#include "daemon/session/tool_dispatch.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace agent::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A read-only tool that waits until `peers` calls of it run at once (bounded), so a test can
// tell concurrent calls from sequential ones without timing them.
class RendezvousTool : public tools::Tool {
 public:
  explicit RendezvousTool(int peers) : peers_(peers) {}
  std::string_view Name() const override { return "meet"; }
  Json Schema() const override { return Json::object(); }
  bool Gated() const override { return false; }
  tools::ToolOutcome Run(const Json& args, tools::ToolContext&) const override {
    agent::MutexLock l(&mu_);
    ++arrived_;
    cv_.SignalAll();
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (arrived_ < peers_ && absl::Now() < deadline) {
      cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    return {absl::StrCat("met ", args.value("n", 0), arrived_ >= peers_ ? " together" : " alone"),
            false};
  }

 private:
  int peers_;
  mutable agent::Mutex mu_;
  mutable agent::CondVar cv_;
  mutable int arrived_ ABSL_GUARDED_BY(mu_) = 0;
};

// A read-only tool that waits (bounded) for one call more than the dispatcher may run at once,
// and records how many ran at the same time: over the cap only if the cap is not kept.
class CrowdTool : public tools::Tool {
 public:
  std::string_view Name() const override { return "crowd"; }
  Json Schema() const override { return Json::object(); }
  bool Gated() const override { return false; }
  tools::ToolOutcome Run(const Json& args, tools::ToolContext&) const override {
    agent::MutexLock l(&mu_);
    ++arrived_;
    ++inside_;
    most_ = std::max(most_, inside_);
    cv_.SignalAll();
    absl::Time deadline = absl::Now() + absl::Milliseconds(300);
    while (arrived_ <= static_cast<int>(ToolDispatch::kMaxParallelCalls) &&
           absl::Now() < deadline) {
      cv_.WaitWithTimeout(&mu_, deadline - absl::Now());
    }
    --inside_;
    return {absl::StrCat(args.value("n", 0)), false};
  }
  int most() const {
    agent::MutexLock l(&mu_);
    return most_;
  }

 private:
  mutable agent::Mutex mu_;
  mutable agent::CondVar cv_;
  mutable int arrived_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int inside_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int most_ ABSL_GUARDED_BY(mu_) = 0;
};

class GatedTool : public tools::Tool {
 public:
  std::string_view Name() const override { return "change"; }
  Json Schema() const override { return Json::object(); }
  bool Gated() const override { return true; }
  tools::ToolOutcome Run(const Json&, tools::ToolContext&) const override { return {"changed"}; }
};

class RecordingHost : public ToolCallHost {
 public:
  void CallReady(const llm::ToolCall& call) override {
    agent::MutexLock l(&mu_);
    ready.push_back(call.id);
  }
  std::optional<tools::ToolOutcome> Authorize(const llm::ToolCall& call, const Json&) override {
    agent::MutexLock l(&mu_);
    authorized.push_back(call.id);
    if (refuse) return tools::ToolOutcome{"refused", true};
    return std::nullopt;
  }
  tools::ToolContext MakeToolContext(const std::string&) override { return {}; }
  void AppendResults(const std::vector<llm::ToolCall>& calls, size_t first,
                     const std::vector<tools::ToolOutcome>& outcomes) override {
    agent::MutexLock l(&mu_);
    batches.push_back(outcomes.size());
    for (size_t k = 0; k < outcomes.size(); ++k) {
      results.push_back(calls[first + k].id + ": " + outcomes[k].content);
    }
  }

  agent::Mutex mu_;
  bool refuse = false;
  std::vector<std::string> ready, authorized, results;
  std::vector<size_t> batches;
};

llm::ToolCall Call(std::string id, std::string name, std::string args = "{}") {
  llm::ToolCall c;
  c.id = std::move(id);
  c.name = std::move(name);
  c.arguments = std::move(args);
  return c;
}

TEST(ToolDispatchTest, ReadOnlyCallsRunTogetherAndAnswerInCallOrder) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<RendezvousTool>(3));
  RecordingHost host;
  std::atomic<bool> cancelled{false};
  ToolDispatch(&registry, &host, &cancelled)
      .Run({Call("a", "meet", R"({"n":1})"), Call("b", "meet", R"({"n":2})"),
            Call("c", "meet", R"({"n":3})")},
           false);
  EXPECT_THAT(host.batches, ElementsAre(3u));
  EXPECT_THAT(host.results,
              ElementsAre("a: met 1 together", "b: met 2 together", "c: met 3 together"));
}

TEST(ToolDispatchTest, AReplyOfManyCallsRunsAFewAtATimeAndAnswersAllInOrder) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<CrowdTool>());
  const auto* crowd = static_cast<const CrowdTool*>(registry.Find("crowd"));
  RecordingHost host;
  std::atomic<bool> cancelled{false};
  std::vector<llm::ToolCall> calls;
  std::vector<std::string> expected;
  for (int n = 0; n < 40; ++n) {
    calls.push_back(Call(absl::StrCat("c", n), "crowd", absl::StrCat(R"({"n":)", n, "}")));
    expected.push_back(absl::StrCat("c", n, ": ", n));
  }
  ToolDispatch(&registry, &host, &cancelled).Run(calls, false);
  EXPECT_EQ(crowd->most(), static_cast<int>(ToolDispatch::kMaxParallelCalls));
  EXPECT_EQ(host.results, expected);
}

TEST(ToolDispatchTest, AGatedCallRunsAloneAfterTheHostsVerdict) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<RendezvousTool>(1));
  registry.Add(std::make_unique<GatedTool>());
  RecordingHost host;
  std::atomic<bool> cancelled{false};
  ToolDispatch(&registry, &host, &cancelled)
      .Run({Call("a", "meet"), Call("b", "change"), Call("c", "meet")}, false);
  EXPECT_THAT(host.batches, ElementsAre(1u, 1u, 1u));
  EXPECT_THAT(host.authorized, ElementsAre("b"));
  EXPECT_THAT(host.results, ElementsAre("a: met 0 together", "b: changed", "c: met 0 together"));

  host.refuse = true;
  host.results.clear();
  ToolDispatch(&registry, &host, &cancelled).Run({Call("d", "change")}, false);
  EXPECT_THAT(host.results, ElementsAre("d: refused"));
}

TEST(ToolDispatchTest, BadCallsAreAnsweredNotRun) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<GatedTool>());
  RecordingHost host;
  std::atomic<bool> cancelled{false};
  ToolDispatch(&registry, &host, &cancelled)
      .Run({Call("a", "nope"), Call("b", "change", "{broken"), Call("c", "change")},
           /*last_truncated=*/true);
  ASSERT_EQ(host.results.size(), 3u);
  EXPECT_THAT(host.results[0], HasSubstr("Unknown tool \"nope\". Available: change."));
  EXPECT_THAT(host.results[1], HasSubstr("b: "));
  EXPECT_THAT(host.results[2], HasSubstr("cut at the output limit"));
  EXPECT_TRUE(host.authorized.empty());  // nothing reached the gate
  EXPECT_THAT(host.ready, ElementsAre("a", "b", "c"));
}

TEST(ToolDispatchTest, ACancelStopsBetweenBatches) {
  tools::ToolRegistry registry;
  registry.Add(std::make_unique<GatedTool>());
  RecordingHost host;
  std::atomic<bool> cancelled{true};
  ToolDispatch(&registry, &host, &cancelled).Run({Call("a", "change"), Call("b", "change")}, false);
  // The first call is answered "cancelled"; the rest is left for the turn loop to seal.
  EXPECT_THAT(host.results, ElementsAre("a: Not run: cancelled by the user."));
}

}  // namespace
}  // namespace agent::daemon
