// Text deltas through the real agentd to N attached clients, beside a bare gRPC stream of the
// same Event messages to N clients on the same machine.
//
// Method. Every figure is taken with one clock (CLOCK_MONOTONIC) in this one process:
//   - This program is the model. A small HTTP/1.1 server on 127.0.0.1 answers the daemon's
//     chat completions request with an OpenAI SSE stream of K text deltas. Each delta's text is
//     exactly kBlock bytes: the monotonic time at which the delta was written to the socket,
//     in 20 digits, then "tok ". The scripted Python server cannot do this (it cannot stamp the
//     send time, and at these rates it would be the bottleneck), so the daemon's pipeline is
//     what is measured: curl, SSE parser, delta merger, session, event log, fan-out, gRPC.
//   - This program is also the N clients: N threads, each with its own channel (its own
//     connection, as N `agent attach` processes have), reading Attach. On arrival of a
//     TextDelta it takes the time and, for every kBlock-byte block of the text (a lagging
//     client gets several deltas coalesced into one message, by design), records
//     latency = arrival - stamp.
//   - The bare baseline is a gRPC callback server in this process on its own Unix socket
//     whose Attach streams the same Event messages (same fields, same sizes: seq, epoch,
//     unix_ms, a TextDelta of kBlock bytes), produced by one thread and fanned out to every
//     attached client through a queue per client with one write in flight (the daemon's
//     write discipline, without its coalescing). The same client threads read it.
// Two runs per case:
//   - blast: all K deltas as fast as the transport takes them. Throughput = N*K deltas /
//     (last delta's arrival at the slowest client - first delta's send). messages/s counts
//     gRPC messages, lower than deltas/s when coalescing merged deltas.
//   - paced: K deltas at a fixed rate (default 1000/s, above any model's token rate), so the
//     latency is the pipeline's and not the queueing of a burst. p50/p99 over every delta of
//     every client.
// Output: one JSON object per line per (target, clients, mode), for run_bench.sh's table.
//
//   fanout_bench --socket AGENTD_SOCKET --workdir DIR [--clients 1,50] [--blast 20000,4000]
//                [--paced 1000] [--rate 1000]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/v1/agent.grpc.pb.h"
#include "common/protocol.h"
#include "grpcpp/grpcpp.h"

namespace {

namespace v1 = agent::v1;
using EventPtr = std::shared_ptr<const v1::Event>;

constexpr size_t kBlock = 24;  // 20 digits of send time + "tok "

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SleepUntilNs(int64_t t) {
  timespec ts{static_cast<time_t>(t / 1000000000), static_cast<long>(t % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

std::string Stamp(int64_t t) { return absl::StrFormat("%020d", t) + "tok "; }

bool WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// ---- the model: OpenAI chat completions, streamed --------------------------------------

class FakeModel {
 public:
  ~FakeModel() { Stop(); }

  bool Start() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return false;
    }
    port_ = ntohs(a.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
    return true;
  }

  void Stop() {
    if (listen_fd_ < 0) return;
    ::shutdown(listen_fd_, SHUT_RDWR);
    {
      absl::MutexLock l(&mu_);
      stopping_ = true;
      for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);
    }
    accept_thread_.join();
    for (std::thread& t : conn_threads_) t.join();
    ::close(listen_fd_);
    listen_fd_ = -1;
  }

  int port() const { return port_; }

  // What the next request is answered with: `deltas` deltas, at `rate` per second (0: as
  // fast as the socket takes them).
  void SetPlan(int deltas, int rate) {
    absl::MutexLock l(&mu_);
    deltas_ = deltas;
    rate_ = rate;
    first_send_ns_ = 0;
  }
  int64_t first_send_ns() {
    absl::MutexLock l(&mu_);
    return first_send_ns_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        return;  // shut down
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      absl::MutexLock l(&mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      conns_.push_back(fd);
      conn_threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // Reads one request (headers, then Content-Length bytes of body); false at EOF or error.
  static bool ReadRequest(int fd, std::string& buf, std::string* head) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      char tmp[16384];
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
    }
    *head = buf.substr(0, end);
    std::string lower = *head;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    size_t body_len = 0;
    if (size_t p = lower.find("content-length:"); p != std::string::npos) {
      body_len = std::strtoul(lower.c_str() + p + 15, nullptr, 10);
    }
    if (lower.find("expect: 100-continue") != std::string::npos &&
        !WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) {
      return false;
    }
    buf.erase(0, end + 4);
    while (buf.size() < body_len) {
      char tmp[16384];
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
    }
    buf.erase(0, body_len);
    return true;
  }

  static std::string Chunk(const std::string& data) {
    return absl::StrFormat("%X\r\n", data.size()) + data + "\r\n";
  }
  static std::string DeltaEvent(const std::string& text) {
    return absl::StrCat(
        "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":"
        "1700000000,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"",
        text, "\"},\"finish_reason\":null}]}\n\n");
  }

  void Serve(int fd) {
    std::string buf, head;
    while (ReadRequest(fd, buf, &head)) {
      int deltas, rate;
      {
        absl::MutexLock l(&mu_);
        deltas = deltas_;
        rate = rate_;
      }
      if (head.find("/chat/completions") == std::string::npos) {
        if (!WriteAll(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")) break;
        continue;
      }
      std::string start =
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
          "chunked\r\n\r\n" +
          Chunk(
              "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":"
              "1700000000,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
              "\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
      if (!WriteAll(fd, start)) break;
      bool ok = true;
      if (rate <= 0) {
        // Batches of 64 deltas per HTTP chunk, stamped just before their write.
        for (int i = 0; ok && i < deltas; i += 64) {
          std::string events;
          int64_t t = NowNs();
          if (i == 0) RecordFirst(t);
          for (int j = i; j < std::min(deltas, i + 64); ++j) events += DeltaEvent(Stamp(t));
          ok = WriteAll(fd, Chunk(events));
        }
      } else {
        const int64_t t0 = NowNs();
        const int64_t step = 1000000000LL / rate;
        for (int i = 0; ok && i < deltas; ++i) {
          SleepUntilNs(t0 + i * step);
          int64_t t = NowNs();
          if (i == 0) RecordFirst(t);
          ok = WriteAll(fd, Chunk(DeltaEvent(Stamp(t))));
        }
      }
      ok = ok && WriteAll(fd, Chunk("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion"
                                    ".chunk\",\"created\":1700000000,\"model\":\"bench\","
                                    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
                                    "\"stop\"}]}\n\n") +
                                  Chunk("data: [DONE]\n\n") + "0\r\n\r\n");
      if (!ok) break;
    }
    absl::MutexLock l(&mu_);
    conns_.erase(std::remove(conns_.begin(), conns_.end(), fd), conns_.end());
    ::close(fd);
  }

  void RecordFirst(int64_t t) {
    absl::MutexLock l(&mu_);
    first_send_ns_ = t;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int> conns_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> conn_threads_;  // touched by the accept thread, then by Stop
  int deltas_ ABSL_GUARDED_BY(mu_) = 0;
  int rate_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t first_send_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

// ---- the bare baseline: Attach streaming the same Events ---------------------------------

class BareReactor : public grpc::ServerWriteReactor<v1::Event> {
 public:
  BareReactor(class BareService* service) : service_(service) {}
  void Enqueue(const EventPtr& e) ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock l(&mu_);
      if (finished_) return;
      if (writing_) {
        queue_.push_back(e);
        return;
      }
      writing_ = true;
      current_ = e;
    }
    StartWrite(e.get());
  }
  void OnWriteDone(bool ok) override {
    EventPtr next;
    {
      absl::MutexLock l(&mu_);
      current_.reset();
      if (!ok || cancelled_) {
        writing_ = false;
        if (!TakeFinishLocked()) return;
      } else if (queue_.empty()) {
        writing_ = false;
        return;
      } else {
        next = std::move(queue_.front());
        queue_.pop_front();
        current_ = next;
      }
    }
    if (next) {
      StartWrite(next.get());
    } else {
      Finish(grpc::Status::CANCELLED);
    }
  }
  void OnCancel() override {
    {
      absl::MutexLock l(&mu_);
      cancelled_ = true;
      // A write in flight finishes the stream from OnWriteDone.
      if (writing_ || !TakeFinishLocked()) return;
    }
    Finish(grpc::Status::CANCELLED);
  }
  void OnDone() override;

 private:
  // True once: the caller then calls Finish, outside the lock.
  bool TakeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return false;
    finished_ = true;
    return true;
  }
  class BareService* service_;
  absl::Mutex mu_;
  std::deque<EventPtr> queue_ ABSL_GUARDED_BY(mu_);
  EventPtr current_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

class BareService : public v1::AgentDaemon::CallbackService {
 public:
  grpc::ServerWriteReactor<v1::Event>* Attach(grpc::CallbackServerContext*,
                                              const v1::AttachRequest*) override {
    auto* r = new BareReactor(this);
    v1::Event snap;
    snap.set_seq(0);
    snap.mutable_snapshot()->set_state(v1::SESSION_STATE_IDLE);
    r->Enqueue(std::make_shared<const v1::Event>(std::move(snap)));
    absl::MutexLock l(&mu_);
    reactors_.push_back(r);
    return r;
  }
  void Remove(BareReactor* r) {
    absl::MutexLock l(&mu_);
    reactors_.erase(std::remove(reactors_.begin(), reactors_.end(), r), reactors_.end());
  }
  // Delivers to every attached client, the way the daemon's event log does: under one lock.
  void Publish(const EventPtr& e) {
    absl::MutexLock l(&mu_);
    for (BareReactor* r : reactors_) r->Enqueue(e);
  }

 private:
  absl::Mutex mu_;
  std::vector<BareReactor*> reactors_ ABSL_GUARDED_BY(mu_);
};

void BareReactor::OnDone() {
  service_->Remove(this);
  delete this;
}

// ---- the clients --------------------------------------------------------------------------

struct ClientResult {
  int64_t last_text_ns = 0;
  int64_t messages = 0;  // TextDelta messages
  int64_t deltas = 0;    // kBlock blocks in them
  int64_t resyncs = 0;   // snapshots after the first
  std::vector<int64_t> latency_ns;
  std::string error;
};

// Counts clients that have their first event (the snapshot).
class Gate {
 public:
  void Arrive() {
    absl::MutexLock l(&mu_);
    ++n_;
  }
  bool WaitFor(int n, absl::Duration timeout) {
    absl::MutexLock l(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return n_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }

 private:
  absl::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};

std::shared_ptr<grpc::Channel> NewChannel(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(agent::kMaxMessageBytes);
  // A connection of its own, as a separate client process would have.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

// Reads one Attach stream until TurnEnded (or its end), recording every delta's latency.
void RunClient(const std::string& socket, const std::string& session_id, int index, Gate* gate,
               ClientResult* out) {
  auto stub = v1::AgentDaemon::NewStub(NewChannel(socket));
  grpc::ClientContext ctx;
  v1::AttachRequest req;
  req.set_session_id(session_id);
  req.set_client_name(absl::StrCat("bench-", index));
  req.set_read_only(true);
  req.set_protocol_version(agent::kProtocolVersion);
  auto reader = stub->Attach(&ctx, req);
  v1::Event e;
  bool first = true;
  while (reader->Read(&e)) {
    const int64_t now = NowNs();
    if (e.has_text_delta()) {
      const std::string& t = e.text_delta().text();
      ++out->messages;
      out->last_text_ns = now;
      for (size_t off = 0; off + kBlock <= t.size(); off += kBlock) {
        int64_t sent = 0;
        if (absl::SimpleAtoi(absl::string_view(t.data() + off, 20), &sent)) {
          out->latency_ns.push_back(now - sent);
          ++out->deltas;
        }
      }
    } else if (e.has_snapshot()) {
      if (first) {
        gate->Arrive();
      } else {
        ++out->resyncs;
        out->last_text_ns = now;
      }
    } else if (e.has_turn_ended()) {
      if (e.turn_ended().outcome() != v1::TURN_OUTCOME_DONE) {
        out->error = "turn ended with: " + e.turn_ended().error();
      }
      break;
    }
    first = false;
  }
  ctx.TryCancel();
  grpc::Status s = reader->Finish();
  if (first && out->error.empty()) out->error = "no snapshot: " + s.error_message();
}

struct CaseResult {
  std::string target, mode;
  int clients = 0, deltas = 0;
  double seconds = 0, deltas_per_s = 0, messages_per_s = 0, p50_us = 0, p99_us = 0, max_us = 0;
  int64_t resyncs = 0, missing = 0;
  std::string error;
};

double Percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return static_cast<double>(v[k]) / 1000.0;
}

CaseResult Summarise(std::vector<ClientResult>& results, int64_t t_start, int k) {
  CaseResult c;
  int64_t last = 0, messages = 0, delivered = 0;
  std::vector<int64_t> lat;
  for (ClientResult& r : results) {
    if (!r.error.empty() && c.error.empty()) c.error = r.error;
    last = std::max(last, r.last_text_ns);
    messages += r.messages;
    delivered += r.deltas;
    c.resyncs += r.resyncs;
    lat.insert(lat.end(), r.latency_ns.begin(), r.latency_ns.end());
  }
  // Deltas a resync snapshot covered instead of TextDeltas are delivered too, only late.
  c.missing = static_cast<int64_t>(results.size()) * k - delivered;
  c.seconds = static_cast<double>(last - t_start) / 1e9;
  if (c.seconds > 0) {
    c.deltas_per_s = static_cast<double>(results.size()) * k / c.seconds;
    c.messages_per_s = static_cast<double>(messages) / c.seconds;
  }
  c.p50_us = Percentile(lat, 0.50);
  c.p99_us = Percentile(lat, 0.99);
  if (!lat.empty())
    c.max_us = static_cast<double>(*std::max_element(lat.begin(), lat.end())) / 1000.0;
  return c;
}

void Print(const CaseResult& c) {
  std::printf(
      "{\"target\":\"%s\",\"mode\":\"%s\",\"clients\":%d,\"deltas\":%d,\"seconds\":%.4f,"
      "\"deltas_per_s\":%.0f,\"messages_per_s\":%.0f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
      "\"max_us\":%.1f,\"resyncs\":%lld,\"missing\":%lld,\"error\":\"%s\"}\n",
      c.target.c_str(), c.mode.c_str(), c.clients, c.deltas, c.seconds, c.deltas_per_s,
      c.messages_per_s, c.p50_us, c.p99_us, c.max_us, static_cast<long long>(c.resyncs),
      static_cast<long long>(c.missing), c.error.c_str());
  std::fflush(stdout);
}

std::vector<std::thread> StartClients(const std::string& socket, const std::string& session, int n,
                                      Gate* gate, std::vector<ClientResult>* results) {
  results->assign(static_cast<size_t>(n), ClientResult{});
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back(RunClient, socket, session, i, gate, &(*results)[static_cast<size_t>(i)]);
  }
  return threads;
}

CaseResult RunDaemonCase(v1::AgentDaemon::Stub& stub, FakeModel& model, const std::string& socket,
                         const std::string& workdir, int clients, int k, int rate) {
  CaseResult fail;
  fail.target = "daemon";
  fail.mode = rate > 0 ? "paced" : "blast";
  fail.clients = clients;
  fail.deltas = k;
  v1::CreateSessionRequest creq;
  creq.set_workdir(workdir);
  creq.set_title("fanout bench");
  creq.set_policy(v1::POLICY_MODE_YES);
  creq.mutable_model()->set_base_url(absl::StrCat("http://127.0.0.1:", model.port(), "/v1"));
  creq.mutable_model()->set_model("bench");
  creq.mutable_model()->set_api_key("bench-key-not-secret");
  creq.mutable_model()->set_provider("openai");
  v1::Session session;
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub.CreateSession(&ctx, creq, &session);
    if (!s.ok()) {
      fail.error = "CreateSession: " + s.error_message();
      return fail;
    }
  }
  Gate gate;
  std::vector<ClientResult> results;
  std::vector<std::thread> threads = StartClients(socket, session.id(), clients, &gate, &results);
  if (!gate.WaitFor(clients, absl::Seconds(30))) fail.error = "clients did not attach";
  if (fail.error.empty()) {
    model.SetPlan(k, rate);
    v1::SendPromptRequest p;
    p.set_session_id(session.id());
    p.set_text("stream");
    p.set_client_name("bench");
    v1::SendPromptResponse presp;
    grpc::ClientContext ctx;
    grpc::Status s = stub.SendPrompt(&ctx, p, &presp);
    if (!s.ok()) fail.error = "SendPrompt: " + s.error_message();
  }
  if (!fail.error.empty()) {
    // The clients end when the daemon removes the session.
    grpc::ClientContext ctx;
    v1::DeleteSessionRequest d;
    d.set_session_id(session.id());
    v1::DeleteSessionResponse dr;
    (void)stub.DeleteSession(&ctx, d, &dr);
  }
  for (std::thread& t : threads) t.join();
  if (!fail.error.empty()) return fail;
  CaseResult c = Summarise(results, model.first_send_ns(), k);
  c.target = fail.target;
  c.mode = fail.mode;
  c.clients = clients;
  c.deltas = k;
  grpc::ClientContext ctx;
  v1::DeleteSessionRequest d;
  d.set_session_id(session.id());
  v1::DeleteSessionResponse dr;
  (void)stub.DeleteSession(&ctx, d, &dr);
  return c;
}

CaseResult RunBareCase(BareService& service, const std::string& socket, int clients, int k,
                       int rate) {
  Gate gate;
  std::vector<ClientResult> results;
  std::vector<std::thread> threads = StartClients(socket, "bare", clients, &gate, &results);
  CaseResult c;
  bool attached = gate.WaitFor(clients, absl::Seconds(30));
  const std::string epoch = absl::StrFormat("%x-%d", absl::ToUnixMillis(absl::Now()), ::getpid());
  const int64_t t0 = NowNs();
  const int64_t step = rate > 0 ? 1000000000LL / rate : 0;
  for (int i = 0; attached && i < k; ++i) {
    if (rate > 0) SleepUntilNs(t0 + i * step);
    int64_t t = NowNs();
    auto e = std::make_shared<v1::Event>();
    e->set_seq(static_cast<uint64_t>(i + 10));
    e->set_epoch(epoch);
    e->set_unix_ms(absl::ToUnixMillis(absl::Now()));
    e->mutable_text_delta()->set_text(Stamp(t));
    service.Publish(e);
  }
  auto end = std::make_shared<v1::Event>();
  end->mutable_turn_ended()->set_outcome(v1::TURN_OUTCOME_DONE);
  service.Publish(end);
  for (std::thread& t : threads) t.join();
  c = Summarise(results, t0, k);
  if (!attached && c.error.empty()) c.error = "clients did not attach";
  c.target = "bare";
  c.mode = rate > 0 ? "paced" : "blast";
  c.clients = clients;
  c.deltas = k;
  return c;
}

std::vector<int> Ints(const std::string& s) {
  std::vector<int> out;
  for (absl::string_view p : absl::StrSplit(s, ',')) {
    int v;
    if (absl::SimpleAtoi(p, &v)) out.push_back(v);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket, workdir, clients_arg = "1,50", blast_arg = "20000,4000";
  int paced = 1000, rate = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--socket")
      socket = v;
    else if (k == "--workdir")
      workdir = v;
    else if (k == "--clients")
      clients_arg = v;
    else if (k == "--blast")
      blast_arg = v;
    else if (k == "--paced")
      paced = std::atoi(v.c_str());
    else if (k == "--rate")
      rate = std::atoi(v.c_str());
  }
  std::vector<int> clients = Ints(clients_arg), blast = Ints(blast_arg);
  if (socket.empty() || workdir.empty() || clients.empty() || blast.size() != clients.size()) {
    std::fprintf(stderr,
                 "usage: fanout_bench --socket AGENTD_SOCKET --workdir DIR [--clients 1,50] "
                 "[--blast 20000,4000] [--paced 1000] [--rate 1000]\n");
    return 2;
  }

  FakeModel model;
  if (!model.Start()) {
    std::fprintf(stderr, "fanout_bench: cannot listen on 127.0.0.1\n");
    return 1;
  }
  BareService bare;
  std::string bare_socket = workdir + "/bare.sock";
  ::unlink(bare_socket.c_str());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + bare_socket, grpc::InsecureServerCredentials());
  builder.SetMaxSendMessageSize(agent::kMaxMessageBytes);
  builder.RegisterService(&bare);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "fanout_bench: cannot serve on %s\n", bare_socket.c_str());
    return 1;
  }

  auto stub = v1::AgentDaemon::NewStub(NewChannel(socket));
  for (size_t i = 0; i < clients.size(); ++i) {
    Print(RunBareCase(bare, bare_socket, clients[i], blast[i], 0));
    Print(RunDaemonCase(*stub, model, socket, workdir, clients[i], blast[i], 0));
    Print(RunBareCase(bare, bare_socket, clients[i], paced, rate));
    Print(RunDaemonCase(*stub, model, socket, workdir, clients[i], paced, rate));
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  model.Stop();
  ::unlink(bare_socket.c_str());
  return 0;
}
