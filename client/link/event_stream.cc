#include "client/link/event_stream.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/sync_stream.h"

namespace agent::client {

namespace v1 = agent::v1;

Mailbox::Mailbox() { fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

Mailbox::~Mailbox() {
  if (fd_ >= 0) ::close(fd_);
}

void Mailbox::Wake() {
  uint64_t one = 1;
  ssize_t n = ::write(fd_, &one, sizeof one);
  (void)n;  // the counter only saturates after 2^64 wake-ups
}

void Mailbox::PostEvent(v1::Event e, int stream) {
  {
    absl::MutexLock l(&mu_);
    Item it{Item::kEvent, std::move(e), "", false, grpc::Status::OK, stream};
    items_.push_back(std::move(it));
  }
  Wake();
}

void Mailbox::PostNotice(std::string text, bool error) {
  {
    absl::MutexLock l(&mu_);
    items_.push_back(Item{Item::kNotice, v1::Event(), std::move(text), error, grpc::Status::OK, 0});
  }
  Wake();
}

void Mailbox::PostEnd(grpc::Status status, int stream) {
  {
    absl::MutexLock l(&mu_);
    items_.push_back(Item{Item::kEnd, v1::Event(), "", false, std::move(status), stream});
  }
  Wake();
}

std::vector<Mailbox::Item> Mailbox::Take() {
  uint64_t count;
  ssize_t n = ::read(fd_, &count, sizeof count);
  (void)n;  // EAGAIN: nothing to clear
  absl::MutexLock l(&mu_);
  std::vector<Item> out(std::make_move_iterator(items_.begin()),
                        std::make_move_iterator(items_.end()));
  items_.clear();
  return out;
}

std::optional<Mailbox::Item> Mailbox::Next(absl::Duration timeout) {
  absl::MutexLock l(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !items_.empty(); };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  if (items_.empty()) return std::nullopt;
  Item it = std::move(items_.front());
  items_.pop_front();
  return it;
}

EventStream::EventStream(grpc::ChannelInterface& channel, const v1::AttachRequest& req,
                         Mailbox& mailbox, int id) {
  // The generated stub's reader would parse for us, but a message that fails to parse then
  // looks like the end of the stream.
  static const std::string* method =
      new std::string(absl::StrCat("/", v1::AgentDaemon::service_full_name(), "/Attach"));
  grpc::internal::RpcMethod attach(method->c_str(), grpc::internal::RpcMethod::SERVER_STREAMING);
  reader_.reset(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(&channel, attach, &ctx_, req));
  thread_ = std::thread([this, &mailbox, id] {
    grpc::ByteBuffer buffer;
    while (reader_->Read(&buffer)) {
      v1::Event e;
      bool parsed;
      {
        // The error is ours to report, in one line; protobuf would log its own.
        google::protobuf::LogSilencer quiet;
        parsed = grpc::SerializationTraits<v1::Event>::Deserialize(&buffer, &e).ok();
      }
      if (!parsed) {
        ctx_.TryCancel();
        (void)reader_->Finish();
        mailbox.PostEnd(grpc::Status(grpc::StatusCode::INTERNAL,
                                     "cannot read an event from agentd (it does not parse: "
                                     "invalid UTF-8 in a text field?)"),
                        id);
        return;
      }
      mailbox.PostEvent(std::move(e), id);
    }
    mailbox.PostEnd(reader_->Finish(), id);
  });
}

EventStream::~EventStream() {
  ctx_.TryCancel();
  thread_.join();
}

}  // namespace agent::client
