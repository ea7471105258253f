#include "client/event_stream.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

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

EventStream::EventStream(v1::AgentDaemon::Stub& stub, const v1::AttachRequest& req,
                         Mailbox& mailbox, int id) {
  reader_ = stub.Attach(&ctx_, req);
  thread_ = std::thread([this, &mailbox, id] {
    v1::Event e;
    while (reader_->Read(&e)) mailbox.PostEvent(e, id);
    mailbox.PostEnd(reader_->Finish(), id);
  });
}

EventStream::~EventStream() {
  ctx_.TryCancel();
  thread_.join();
}

}  // namespace agent::client
