// The lines the renderer draws for who cancelled a turn and for a call the policy denied.
#include "absl/time/clock.h"
#include "client/view/renderer.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;

std::string Cancelled(const std::string& by) {
  RenderOptions o;
  o.own_client = "me";
  Renderer r(o);
  RenderState st = r.NewState();
  v1::Event e;
  e.mutable_turn_ended()->set_outcome(v1::TURN_OUTCOME_CANCELLED);
  e.mutable_turn_ended()->set_cancelled_by(by);
  return r.Render(e, absl::Now(), st);
}

TEST(TurnEndRenderTest, CancelledSaysWhichClientCancelled) {
  EXPECT_EQ(Cancelled("agent-42@pts/3"), "[cancelled by agent-42@pts/3]\n");
  EXPECT_EQ(Cancelled("me"), "[cancelled by you]\n");
  EXPECT_EQ(Cancelled(""), "[cancelled]\n");  // the daemon (stopping) cancelled it
}

TEST(TurnEndRenderTest, ACallDeniedByThePolicySaysSo) {
  Renderer r(RenderOptions{});
  RenderState st = r.NewState();
  v1::Event e;
  e.mutable_tool_result()->set_content("Denied by a permission rule of this project.");
  e.mutable_tool_result()->set_denied_by_policy(true);
  std::string out = r.Render(e, absl::Now(), st);
  EXPECT_NE(out.find("denied by the policy"), std::string::npos) << out;
  e.mutable_tool_result()->set_denied_by_policy(false);
  out = r.Render(e, absl::Now(), st);
  EXPECT_EQ(out.find("denied by the policy"), std::string::npos) << out;
}

}  // namespace
}  // namespace agent::client
