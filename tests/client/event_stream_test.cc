// EventStream against an in-process agentd stand-in on a Unix socket: events arrive in
// order, the daemon's end status arrives as sent, and an event the client cannot parse ends
// the stream with an error instead of a read that waits forever.
#include "client/link/event_stream.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace agent::client {
namespace {

namespace v1 = agent::v1;
using ::testing::HasSubstr;

constexpr absl::Duration kWait = absl::Seconds(20);

class FakeDaemon final : public v1::AgentDaemon::Service {
 public:
  grpc::Status Attach(grpc::ServerContext* ctx, const v1::AttachRequest* req,
                      grpc::ServerWriter<v1::Event>* writer) override {
    if (req->session_id() == "gone") return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such");
    v1::Event good;
    good.set_seq(1);
    good.mutable_text_delta()->set_text("fine");
    writer->Write(good);
    v1::Event bad;
    bad.set_seq(2);
    // Not UTF-8: a proto3 string the client refuses to parse (protobuf only logs when it
    // serializes one).
    bad.mutable_text_delta()->set_text(std::string("\xff\xfe\x80 bytes", 9));
    writer->Write(bad);
    // The stream stays open, as the daemon's does, until the client goes or the test ends.
    while (!ctx->IsCancelled() &&
           !release_.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
    }
    return grpc::Status::OK;
  }
  absl::Notification release_;
};

class EventStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agt-es-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + dir_ + "/s.sock", grpc::InsecureServerCredentials());
    b.RegisterService(&daemon_);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel("unix:" + dir_ + "/s.sock", grpc::InsecureChannelCredentials());
  }
  void TearDown() override {
    daemon_.release_.Notify();
    server_->Shutdown();
    (void)std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
  FakeDaemon daemon_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(EventStreamTest, AnEventThatDoesNotParseEndsTheStreamWithAnError) {
  Mailbox mailbox;
  v1::AttachRequest req;
  req.set_session_id("s1");
  EventStream stream(*channel_, req, mailbox, 7);
  std::optional<Mailbox::Item> first = mailbox.Next(kWait);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->kind, Mailbox::Item::kEvent);
  EXPECT_EQ(first->event.text_delta().text(), "fine");
  EXPECT_EQ(first->stream, 7);
  std::optional<Mailbox::Item> end = mailbox.Next(kWait);
  ASSERT_TRUE(end.has_value()) << "the stream neither ended nor went on after a bad event";
  ASSERT_EQ(end->kind, Mailbox::Item::kEnd);
  EXPECT_EQ(end->status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(end->status.error_message(), HasSubstr("cannot read an event from agentd"));
  EXPECT_EQ(end->stream, 7);
}

TEST_F(EventStreamTest, TheDaemonsEndStatusArrivesAsSent) {
  Mailbox mailbox;
  v1::AttachRequest req;
  req.set_session_id("gone");
  EventStream stream(*channel_, req, mailbox, 1);
  std::optional<Mailbox::Item> end = mailbox.Next(kWait);
  ASSERT_TRUE(end.has_value());
  ASSERT_EQ(end->kind, Mailbox::Item::kEnd);
  EXPECT_EQ(end->status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(end->status.error_message(), "no such");
}

}  // namespace
}  // namespace agent::client
