// CommandRunner against an in-process stand-in for agentd on a Unix socket: each slash
// command makes its call and says what the view should do next.
#include "client/view/command_runner.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;

class FakeDaemon final : public v1::AgentDaemon::Service {
 public:
  grpc::Status SetPolicy(grpc::ServerContext*, const v1::SetPolicyRequest* req,
                         v1::SetPolicyResponse*) override {
    absl::MutexLock l(&mu_);
    policy_ = *req;
    return grpc::Status::OK;
  }
  grpc::Status ForkSession(grpc::ServerContext*, const v1::ForkSessionRequest* req,
                           v1::Session* out) override {
    if (req->session_id() != "s-original") return grpc::Status(grpc::StatusCode::NOT_FOUND, "no");
    out->set_id("s-forked-1234");
    return grpc::Status::OK;
  }
  grpc::Status Approve(grpc::ServerContext*, const v1::ApproveRequest* req,
                       v1::ApproveResponse*) override {
    absl::MutexLock l(&mu_);
    approve_ = *req;
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "answered already");
  }
  v1::SetPolicyRequest policy() {
    absl::MutexLock l(&mu_);
    return policy_;
  }
  v1::ApproveRequest approve() {
    absl::MutexLock l(&mu_);
    return approve_;
  }

 private:
  absl::Mutex mu_;
  v1::SetPolicyRequest policy_ ABSL_GUARDED_BY(mu_);
  v1::ApproveRequest approve_ ABSL_GUARDED_BY(mu_);
};

class CommandRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agt-cr-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + dir_ + "/s.sock", grpc::InsecureServerCredentials());
    b.RegisterService(&daemon_);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::AgentDaemon::NewStub(
        grpc::CreateChannel("unix:" + dir_ + "/s.sock", grpc::InsecureChannelCredentials()));
    options_.client_name = "agent-1";
    runner_ = std::make_unique<CommandRunner>(*stub_, options_, mailbox_);
    turn_.session_id = "s-original";
  }
  void TearDown() override {
    runner_.reset();
    server_->Shutdown();
    (void)std::system(("rm -rf " + dir_).c_str());
  }
  CommandRunner::Outcome Run(const std::string& line) {
    return runner_->Run(*ParseSlashCommand(line), turn_, renderer_);
  }

  std::string dir_;
  FakeDaemon daemon_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::AgentDaemon::Stub> stub_;
  ClientOptions options_;
  Mailbox mailbox_;
  std::unique_ptr<CommandRunner> runner_;
  TurnState turn_;
  Renderer renderer_{RenderOptions{}};
};

TEST_F(CommandRunnerTest, ModelSetsThePolicyAndTheStatusModel) {
  CommandRunner::Outcome out = Run("/model gpt-test");
  EXPECT_EQ(daemon_.policy().session_id(), "s-original");
  EXPECT_EQ(daemon_.policy().model(), "gpt-test");
  EXPECT_EQ(turn_.model, "gpt-test");
  EXPECT_THAT(out.text, HasSubstr("model gpt-test from the next request"));
  EXPECT_TRUE(out.attach_to.empty());
  EXPECT_FALSE(out.detach);
}

TEST_F(CommandRunnerTest, ForkSwitchesToTheCopyAndForgetsTheOldTurns) {
  turn_.turns_waiting = 1;
  turn_.echoed.push_back({"hi", false});
  CommandRunner::Outcome out = Run("/fork");
  EXPECT_EQ(out.attach_to, "s-forked-1234");
  EXPECT_EQ(turn_.session_id, "s-forked-1234");
  EXPECT_EQ(turn_.turns_waiting, 0);
  EXPECT_TRUE(turn_.echoed.empty());
  EXPECT_THAT(out.text, HasSubstr("forked s-origin → s-forked"));
}

TEST_F(CommandRunnerTest, AFailedCallIsAnErrorLineAndChangesNothing) {
  turn_.session_id = "s-unknown";
  CommandRunner::Outcome out = Run("/fork");
  EXPECT_EQ(out.text, "error: no\n");
  EXPECT_TRUE(out.attach_to.empty());
  EXPECT_EQ(turn_.session_id, "s-unknown");
}

TEST_F(CommandRunnerTest, DetachMissingArgumentsAndUnknownCommandsMakeNoCall) {
  CommandRunner::Outcome out = Run("/detach");
  EXPECT_TRUE(out.detach);
  EXPECT_THAT(out.text, HasSubstr("agent attach s-origin"));
  EXPECT_THAT(Run("/allow").text, HasSubstr("/allow needs a rule"));
  EXPECT_THAT(Run("/nope").text, HasSubstr("unknown command /nope"));
  EXPECT_EQ(daemon_.policy().session_id(), "");
}

TEST_F(CommandRunnerTest, ApproveCarriesTheDecisionAndTheDaemonsAnswer) {
  grpc::Status s = runner_->Approve("s-original", "call-1", v1::DECISION_DENY, "why not");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  v1::ApproveRequest req = daemon_.approve();
  EXPECT_EQ(req.call_id(), "call-1");
  EXPECT_EQ(req.client_name(), "agent-1");
  EXPECT_EQ(req.decision(), v1::DECISION_DENY);
  EXPECT_EQ(req.reason(), "why not");
}

}  // namespace
}  // namespace agent::client
