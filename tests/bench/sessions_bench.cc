// Many sessions at once: N sessions of one running agentd, each running an S-step task
// (S-1 read_file calls, then text) concurrently, each watched by one attached client.
//
// Method. One clock (CLOCK_MONOTONIC) in this one process:
//   - This program is the model: an HTTP/1.1 server on 127.0.0.1 (a thread per connection,
//     so it is not the bottleneck) that answers each chat completions request by counting
//     the tool results in the body: fewer than S-1, a read_file call; else the final text.
//     Every answer starts with one text delta holding the monotonic time at which it is
//     written to the socket (20 digits, then "tok ").
//   - This program is also the clients: one thread and one connection per session, reading
//     Attach; on a TextDelta it takes the time, latency = arrival - stamp (the path: curl,
//     SSE parser, session, event log, fan-out, gRPC over the Unix socket).
//   - agentd's CPU (utime + stime of /proc/PID/stat) is read before the prompts and after
//     every TurnEnded; a sampler reads Threads and VmRSS of /proc/PID/status every 10 ms.
//     "Threads idle" is read once the turns ended and the count settled (bounded poll).
// Output: one JSON object per line per N, for run_bench.py's table.
//
//   sessions_bench --socket AGENTD_SOCKET --pid AGENTD_PID --workdir DIR [--sessions 1,10,100]
//                  [--steps 50]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/v1/agent.grpc.pb.h"
#include "common/protocol.h"
#include "grpcpp/grpcpp.h"

namespace {

namespace v1 = agent::v1;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// ---- the model ---------------------------------------------------------------------------

class StepModel {
 public:
  explicit StepModel(int steps) : steps_(steps) {}
  ~StepModel() { Stop(); }

  bool Start() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 256) != 0 ||
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
  int64_t requests() const { return requests_.load(); }

 private:
  void AcceptLoop() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        return;
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

  // One request's head and body; false at EOF or error.
  static bool ReadRequest(int fd, std::string& buf, std::string* head, std::string* body) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      char tmp[65536];
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
      char tmp[65536];
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
    }
    *body = buf.substr(0, body_len);
    buf.erase(0, body_len);
    return true;
  }

  static std::string Chunk(const std::string& data) {
    return absl::StrFormat("%X\r\n", data.size()) + data + "\r\n";
  }
  static std::string Event(const std::string& delta, const std::string& finish) {
    return Chunk(absl::StrCat(
        "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":"
        "1700000000,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":",
        delta, ",\"finish_reason\":", finish, "}]}\n\n"));
  }

  void Serve(int fd) {
    std::string buf, head, body;
    while (ReadRequest(fd, buf, &head, &body)) {
      if (head.find("/chat/completions") == std::string::npos) {
        if (!WriteAll(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")) break;
        continue;
      }
      const int n = static_cast<int>(requests_.fetch_add(1));
      const bool call = static_cast<int>(Count(body, "\"role\":\"tool\"")) < steps_ - 1;
      std::string rest;
      if (call) {
        rest = Event(absl::StrCat("{\"tool_calls\":[{\"index\":0,\"id\":\"call_", n,
                                  "\",\"type\":\"function\",\"function\":{\"name\":\"read_file\","
                                  "\"arguments\":\"{\\\"path\\\":\\\"small.txt\\\"}\"}}]}"),
                     "null") +
               Event("{}", "\"tool_calls\"");
      } else {
        rest = Event("{\"content\":\" done\"}", "null") + Event("{}", "\"stop\"");
      }
      rest += Chunk("data: [DONE]\n\n") + "0\r\n\r\n";
      const std::string start =
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
          "chunked\r\n\r\n" +
          Event("{\"role\":\"assistant\",\"content\":\"\"}", "null");
      // The stamp is taken last, just before its write.
      if (!WriteAll(fd, start) ||
          !WriteAll(fd, Event(absl::StrCat("{\"content\":\"", absl::StrFormat("%020d", NowNs()),
                                           "tok \"}"),
                              "null")) ||
          !WriteAll(fd, rest)) {
        break;
      }
    }
    absl::MutexLock l(&mu_);
    conns_.erase(std::remove(conns_.begin(), conns_.end(), fd), conns_.end());
    ::close(fd);
  }

  const int steps_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int64_t> requests_{0};
  std::thread accept_thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int> conns_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> conn_threads_;  // the accept thread's, then Stop's
};

// ---- agentd from /proc ---------------------------------------------------------------------

double CpuMs(int pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/stat"));
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t p = s.rfind(')');
  if (p == std::string::npos) return -1;
  std::istringstream in(s.substr(p + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) stime = std::atoll(field.c_str());
  }
  return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

struct ProcStatus {
  int threads = 0;
  double rss_mb = 0;
};

ProcStatus Status(int pid) {
  ProcStatus st;
  std::ifstream f(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Threads:", 0) == 0) st.threads = std::atoi(line.c_str() + 8);
    if (line.rfind("VmRSS:", 0) == 0) st.rss_mb = std::atof(line.c_str() + 6) / 1024.0;
  }
  return st;
}

// Peak Threads and VmRSS while running.
class Sampler {
 public:
  explicit Sampler(int pid) : pid_(pid), thread_([this] { Loop(); }) {}
  ~Sampler() {
    stop_ = true;
    thread_.join();
  }
  ProcStatus peak() {
    absl::MutexLock l(&mu_);
    return peak_;
  }

 private:
  void Loop() {
    while (!stop_) {
      ProcStatus s = Status(pid_);
      {
        absl::MutexLock l(&mu_);
        peak_.threads = std::max(peak_.threads, s.threads);
        peak_.rss_mb = std::max(peak_.rss_mb, s.rss_mb);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  const int pid_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  ProcStatus peak_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// ---- the sessions and their clients --------------------------------------------------------

std::shared_ptr<grpc::Channel> NewChannel(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(agent::kMaxMessageBytes);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection each, as processes have
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

struct ClientResult {
  std::vector<int64_t> latency_ns;
  int64_t end_ns = 0;
  std::string error;
};

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

void RunClient(const std::string& socket, const std::string& session_id, Gate* gate,
               ClientResult* out) {
  auto stub = v1::AgentDaemon::NewStub(NewChannel(socket));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
  v1::AttachRequest req;
  req.set_session_id(session_id);
  req.set_client_name("watcher");
  req.set_read_only(true);
  req.set_protocol_version(agent::kProtocolVersion);
  auto reader = stub->Attach(&ctx, req);
  v1::Event e;
  bool first = true;
  while (reader->Read(&e)) {
    const int64_t now = NowNs();
    if (e.has_snapshot() && first) gate->Arrive();
    first = false;
    if (e.has_text_delta()) {
      const std::string& t = e.text_delta().text();
      // Coalesced deltas: the stamp is the first 20 digits of a "tok " block.
      for (size_t p = t.find("tok "); p != std::string::npos; p = t.find("tok ", p + 4)) {
        int64_t sent = 0;
        if (p >= 20 && absl::SimpleAtoi(absl::string_view(t.data() + p - 20, 20), &sent)) {
          out->latency_ns.push_back(now - sent);
        }
      }
    } else if (e.has_turn_ended()) {
      out->end_ns = now;
      if (e.turn_ended().outcome() != v1::TURN_OUTCOME_DONE) {
        out->error = "turn ended with: " + e.turn_ended().error();
      }
      break;
    }
  }
  ctx.TryCancel();
  grpc::Status s = reader->Finish();
  if (first && out->error.empty()) out->error = "no snapshot: " + s.error_message();
  if (out->end_ns == 0 && out->error.empty()) out->error = "stream ended: " + s.error_message();
}

double Percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return static_cast<double>(v[k]) / 1000.0;
}

struct Options {
  std::string socket, workdir;
  int pid = 0, steps = 50;
};

std::string CreateSessions(v1::AgentDaemon::Stub& stub, const Options& o, int port, int n,
                           std::vector<std::string>* ids) {
  for (int i = 0; i < n; ++i) {
    v1::CreateSessionRequest c;
    c.set_workdir(o.workdir);
    c.set_title(absl::StrCat("sessions bench ", i));
    c.set_policy(v1::POLICY_MODE_YES);
    c.set_max_steps(o.steps + 5);
    c.mutable_model()->set_base_url(absl::StrCat("http://127.0.0.1:", port, "/v1"));
    c.mutable_model()->set_model("bench");
    c.mutable_model()->set_api_key("bench-key-not-secret");
    c.mutable_model()->set_provider("openai");
    v1::Session s;
    grpc::ClientContext ctx;
    grpc::Status st = stub.CreateSession(&ctx, c, &s);
    if (!st.ok()) return "CreateSession: " + st.error_message();
    ids->push_back(s.id());
  }
  return "";
}

void DeleteSessions(v1::AgentDaemon::Stub& stub, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    grpc::ClientContext ctx;
    v1::DeleteSessionRequest d;
    d.set_session_id(id);
    v1::DeleteSessionResponse r;
    (void)stub.DeleteSession(&ctx, d, &r);
  }
}

// Threads once the count stops falling (turn threads ending), at most 3 s.
int SettledThreads(int pid) {
  int last = Status(pid).threads;
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int now = Status(pid).threads;
    if (now == last) return now;
    last = now;
  }
  return last;
}

std::string SendPrompts(v1::AgentDaemon::Stub& stub, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    v1::SendPromptRequest p;
    p.set_session_id(id);
    p.set_text("read small.txt again and again");
    p.set_client_name("driver");
    v1::SendPromptResponse r;
    grpc::ClientContext ctx;
    grpc::Status s = stub.SendPrompt(&ctx, p, &r);
    if (!s.ok()) return "SendPrompt: " + s.error_message();
  }
  return "";
}

void RunCase(v1::AgentDaemon::Stub& stub, StepModel& model, const Options& o, int n) {
  std::vector<std::string> ids;
  const int threads_before = SettledThreads(o.pid);
  const double rss_before = Status(o.pid).rss_mb;
  std::string error = CreateSessions(stub, o, model.port(), n, &ids);
  Gate gate;
  std::vector<ClientResult> results(ids.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < ids.size(); ++i) {
    clients.emplace_back(RunClient, o.socket, ids[i], &gate, &results[i]);
  }
  if (error.empty() && !gate.WaitFor(n, absl::Seconds(60))) error = "clients did not attach";
  const int threads_attached = Status(o.pid).threads;
  const int64_t requests0 = model.requests();
  const double cpu0 = CpuMs(o.pid);
  const int64_t t0 = NowNs();
  double cpu1 = cpu0;
  ProcStatus peak;
  {
    Sampler sampler(o.pid);
    if (error.empty()) error = SendPrompts(stub, ids);
    if (!error.empty()) DeleteSessions(stub, ids);  // ends the clients' streams
    for (std::thread& t : clients) t.join();
    cpu1 = CpuMs(o.pid);
    peak = sampler.peak();
  }
  int64_t t1 = t0;
  std::vector<int64_t> lat;
  for (ClientResult& r : results) {
    if (!r.error.empty() && error.empty()) error = r.error;
    t1 = std::max(t1, r.end_ns);
    lat.insert(lat.end(), r.latency_ns.begin(), r.latency_ns.end());
  }
  const int64_t steps = model.requests() - requests0;
  const int threads_idle = SettledThreads(o.pid);
  const double rss_loaded = Status(o.pid).rss_mb;
  DeleteSessions(stub, ids);
  if (error.empty() && steps != static_cast<int64_t>(n) * o.steps) {
    error = absl::StrCat(steps, " model requests, not ", n * o.steps);
  }
  std::printf(
      "{\"sessions\":%d,\"steps\":%lld,\"seconds\":%.3f,\"cpu_ms_per_step\":%.4f,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f,\"samples\":%zu,\"threads_before\":%d,"
      "\"threads_attached\":%d,\"threads_peak\":%d,\"threads_idle\":%d,\"rss_before_mb\":%.2f,"
      "\"rss_peak_mb\":%.2f,\"rss_loaded_mb\":%.2f,\"error\":\"%s\"}\n",
      n, static_cast<long long>(steps), static_cast<double>(t1 - t0) / 1e9,
      steps > 0 ? (cpu1 - cpu0) / static_cast<double>(steps) : 0.0, Percentile(lat, 0.5),
      Percentile(lat, 0.99), lat.size(), threads_before, threads_attached, peak.threads,
      threads_idle, rss_before, peak.rss_mb, rss_loaded, error.c_str());
  std::fflush(stdout);
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
  Options o;
  std::string sessions_arg = "1,10,100";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--socket")
      o.socket = v;
    else if (k == "--workdir")
      o.workdir = v;
    else if (k == "--pid")
      o.pid = std::atoi(v.c_str());
    else if (k == "--sessions")
      sessions_arg = v;
    else if (k == "--steps")
      o.steps = std::atoi(v.c_str());
  }
  std::vector<int> sessions = Ints(sessions_arg);
  if (o.socket.empty() || o.workdir.empty() || o.pid <= 0 || sessions.empty() || o.steps < 1) {
    std::fprintf(stderr,
                 "usage: sessions_bench --socket AGENTD_SOCKET --pid AGENTD_PID --workdir DIR "
                 "[--sessions 1,10,100] [--steps 50]\n");
    return 2;
  }
  StepModel model(o.steps);
  if (!model.Start()) {
    std::fprintf(stderr, "sessions_bench: cannot listen on 127.0.0.1\n");
    return 1;
  }
  auto stub = v1::AgentDaemon::NewStub(NewChannel(o.socket));
  for (int n : sessions) RunCase(*stub, model, o, n);
  model.Stop();
  return 0;
}
