// The Attach stream, read on a thread of its own into a mailbox that the UI's loop drains.
// The mailbox also carries the results of commands run off the loop's thread (a Compact
// takes as long as a summary request), and wakes the loop through an eventfd it can poll
// together with the terminal. Thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/v1/agent.grpc.pb.h"

namespace agent::client {

class Mailbox {
 public:
  Mailbox();
  ~Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Readable while anything waits; poll it beside the terminal.
  int fd() const { return fd_; }
  // `stream` tells streams apart: after a switch of session the old one's items are stale.
  void PostEvent(agent::v1::Event e, int stream);
  // A line for the UI to show (a command's result or error), from any thread.
  void PostNotice(std::string text, bool error = false);
  // The stream ended; `status` says why.
  void PostEnd(grpc::Status status, int stream);

  struct Item {
    enum Kind { kEvent, kNotice, kEnd } kind;
    agent::v1::Event event;
    std::string text;
    bool error = false;
    grpc::Status status;
    int stream = 0;
  };
  // Everything posted so far, in order (and clears the wake-up).
  std::vector<Item> Take();
  // Waits up to `timeout` for one item (the one-shot loop without a terminal).
  std::optional<Item> Next(absl::Duration timeout);

 private:
  void Wake();
  absl::Mutex mu_;
  std::deque<Item> items_ ABSL_GUARDED_BY(mu_);
  int fd_ = -1;
};

// Attach(req) on `channel`; events go to `mailbox` until the stream ends or this is
// destroyed, then one kEnd item. The messages are read as bytes and parsed here, so an
// event that does not parse (invalid UTF-8 in a string, say) is told apart from the end of
// the stream: the call is cancelled (the daemon's side is still open, and Finish would wait
// for it forever) and the end's status is INTERNAL "cannot read an event from agentd ...".
class EventStream {
 public:
  EventStream(grpc::ChannelInterface& channel, const agent::v1::AttachRequest& req,
              Mailbox& mailbox, int id);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader_;
  std::thread thread_;
};

}  // namespace agent::client
