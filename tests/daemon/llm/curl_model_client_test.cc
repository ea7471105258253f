// CurlModelClient against the scripted model server (tests/model_server/scripted_model.py),
// started per test on 127.0.0.1 with a free port and stopped in teardown.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/transcript.h"
#include "common/utf8.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/request_cache.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/llm/stream_assembler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/llm/stream_test_util.h"

extern char** environ;

namespace agent::daemon::llm {
namespace {

using ::agent::daemon::llm::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kStartTimeoutMs = 20000;

// One scripted model server process and its temp dir.
class ScriptedServer {
 public:
  // Starts the server with {"replies": replies}; empty port() when it did not come up.
  explicit ScriptedServer(const Json& replies) {
    char tmpl[] = "/tmp/llm-curl-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    const std::string script = dir_ + "/script.json";
    std::ofstream(script) << DumpJson(Json{{"replies", replies}});
    log_ = dir_ + "/requests.jsonl";

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    out_fd_ = fds[0];
    const std::string server =
        std::string(AGENT_SOURCE_DIR) + "/tests/model_server/scripted_model.py";
    std::vector<std::string> args = {"/usr/bin/python3", server, "--script", script, "--log", log_};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      pid_ = -1;
      return;
    }
    port_ = ReadPort();
  }

  ~ScriptedServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);  // the server exits at once on SIGTERM, even mid-stream
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  const std::string& port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + port_ + "/v1"; }

  // One JSON object per model request the server received.
  std::vector<Json> Requests() const {
    std::vector<Json> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) out.push_back(Json::parse(line));
    }
    return out;
  }

 private:
  // The server prints "PORT <n>\n" once it listens.
  std::string ReadPort() {
    std::string line;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kStartTimeoutMs);
    while (line.find('\n') == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{out_fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return "";
      char buf[64];
      const ssize_t n = read(out_fd_, buf, sizeof buf);
      if (n <= 0) return "";
      line.append(buf, static_cast<size_t>(n));
    }
    if (line.rfind("PORT ", 0) != 0) return "";
    return line.substr(5, line.find('\n') - 5);
  }

  std::string dir_;
  std::string log_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string port_;
};

struct Retry {
  int attempt;
  int64_t delay_ms;
  std::string reason;
};

// Records what the transport tells it; optionally sets a cancel flag on the first text.
class Sink : public StreamSink {
 public:
  explicit Sink(std::atomic<bool>* cancel_on_text = nullptr) : cancel_(cancel_on_text) {}
  void OnText(std::string_view t) override {
    text.append(t);
    if (cancel_ != nullptr) cancel_->store(true);
  }
  void OnReasoning(std::string_view t) override { reasoning.append(t); }
  void OnToolCallStarted(std::string_view id, std::string_view name) override {
    started.push_back(std::string(id) + "|" + std::string(name));
  }
  void OnRetry(int attempt, int, int64_t delay_ms, std::string_view reason) override {
    retries.push_back(Retry{attempt, delay_ms, std::string(reason)});
  }

  std::string text;
  std::string reasoning;
  std::vector<std::string> started;
  std::vector<Retry> retries;

 private:
  std::atomic<bool>* cancel_;
};

class CurlModelClientTest : public ::testing::Test {
 protected:
  // Starts a server for `replies`; the test stops if it did not come up.
  void Serve(const Json& replies) {
    server_ = std::make_unique<ScriptedServer>(replies);
    ASSERT_FALSE(server_->port().empty()) << "scripted model server did not start";
  }

  absl::StatusOr<ModelReply> Complete(Sink* sink, const std::atomic<bool>* cancelled = nullptr,
                                      const std::string& provider = "openai") {
    ModelRequest request;
    request.settings = ModelSettings{server_->base_url(), "test-key", "scripted", provider, ""};
    request.messages = Json::array({{{"role", "user"}, {"content", "hi"}}});
    return client_->Complete(request, sink, cancelled);
  }

  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<ModelClient> client_ = MakeCurlModelClient(
      TransportOptions{/*connect_timeout_ms=*/5000, /*idle_timeout_ms=*/20000, /*max_attempts=*/3});
};

TEST_F(CurlModelClientTest, TextReply) {
  Serve(Json::array({{{"text", "Hello, wörld 😀"}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->content, "Hello, wörld 😀");
  EXPECT_EQ(sink.text, "Hello, wörld 😀");
  EXPECT_EQ(reply->finish_reason, "stop");
  ASSERT_TRUE(reply->usage.has_value());
  const std::vector<Json> requests = server_->Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(requests[0]["has_auth"], true);
  EXPECT_EQ(requests[0]["body"]["stream"], true);
}

// A loopback port with nothing listening: bound to get a free number, then closed.
int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(CurlModelClientRefused, LoopbackWithNothingListeningFailsAtOnce) {
  const int port = FreeLoopbackPort();
  ASSERT_NE(port, 0);
  std::unique_ptr<ModelClient> client = MakeCurlModelClient(TransportOptions{5000, 20000, 5});
  ModelRequest request;
  const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  request.settings = ModelSettings{base, "", "scripted", "openai", ""};
  request.messages = Json::array({{{"role", "user"}, {"content", "hi"}}});
  Sink sink;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ModelReply> reply = client->Complete(request, &sink, nullptr);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(reply.status(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(std::string(reply.status().message()), HasSubstr("nothing listens on " + base));
  EXPECT_TRUE(sink.retries.empty());
  EXPECT_LT(took, std::chrono::milliseconds(1000));
}

TEST_F(CurlModelClientTest, ToolCall) {
  Serve(Json::array(
      {{{"tool_calls", {{{"name", "read_file"}, {"arguments", {{"path", "a.txt"}}}}}}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->tool_calls.size(), 1u);
  EXPECT_EQ(reply->tool_calls[0].id, "call_1_0");
  EXPECT_EQ(reply->tool_calls[0].name, "read_file");
  EXPECT_EQ(Json::parse(reply->tool_calls[0].arguments), Json({{"path", "a.txt"}}));
  EXPECT_EQ(reply->finish_reason, "tool_calls");
  EXPECT_THAT(sink.started, ElementsAre("call_1_0|read_file"));
}

TEST_F(CurlModelClientTest, RateLimitIsRetriedThenSucceeds) {
  Serve(Json::array({{{"status", 429},
                      {"headers", {{"retry-after-ms", "20"}}},
                      {"body", {{"error", {{"message", "slow down"}, {"type", "rate_limit"}}}}}},
                     {{"text", "ok"}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->content, "ok");
  ASSERT_EQ(sink.retries.size(), 1u);
  EXPECT_EQ(sink.retries[0].attempt, 1);
  EXPECT_EQ(sink.retries[0].delay_ms, 20);
  EXPECT_THAT(sink.retries[0].reason, HasSubstr("API 429: slow down"));
  EXPECT_EQ(server_->Requests().size(), 2u);
}

TEST_F(CurlModelClientTest, BadRequestFailsAtOnceWithTheServersMessage) {
  Serve(Json::array(
      {{{"status", 400}, {"body", {{"error", {{"message", "messages.0: something is wrong"}}}}}},
       {{"text", "must not be used"}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink);
  EXPECT_THAT(reply.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(reply.status().message(), "API 400: messages.0: something is wrong");
  EXPECT_TRUE(sink.retries.empty());
  EXPECT_EQ(server_->Requests().size(), 1u);
}

TEST_F(CurlModelClientTest, CancelMidStreamReturnsPromptlyAndTheNextRequestWorks) {
  Serve(Json::array({{{"text", std::string(200, 'a')}, {"chunk_size", 1}, {"delay_ms", 20}},
                     {{"text", "next"}}}));
  std::atomic<bool> cancelled{false};
  Sink sink(&cancelled);  // cancels as soon as the first text arrives
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ModelReply> reply = Complete(&sink, &cancelled);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(reply.status(), StatusIs(absl::StatusCode::kCancelled));
  EXPECT_LT(elapsed, std::chrono::seconds(3));  // the whole answer would take 4 s
  EXPECT_LT(sink.text.size(), 200u);

  Sink next;
  absl::StatusOr<ModelReply> again = Complete(&next);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->content, "next");
}

TEST_F(CurlModelClientTest, AnthropicProviderComesFromTheSetting) {
  Serve(Json::array({{{"reasoning", "hmm"}, {"text", "Hi from Claude"}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink, nullptr, "anthropic");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->content, "Hi from Claude");
  EXPECT_EQ(reply->reasoning, "hmm");
  const std::vector<Json> requests = server_->Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/messages");
}

// Security item 8: invalid UTF-8 from the server arrives as U+FFFD and the turn still ends.
TEST_F(CurlModelClientTest, RawInvalidBytesArriveAsReplacementCharacters) {
  for (const char* provider : {"openai", "anthropic", "openai-responses"}) {
    Serve(Json::array({{{"text", "before "}, {"random_bytes", 300}}}));
    Sink sink;
    absl::StatusOr<ModelReply> reply = Complete(&sink, nullptr, provider);
    ASSERT_TRUE(reply.ok()) << provider << ": " << reply.status();
    EXPECT_THAT(reply->content, StartsWith("before ")) << provider;
    EXPECT_TRUE(IsValidUtf8(reply->content)) << provider;
    EXPECT_THAT(reply->content, HasSubstr(std::string(kReplacementChar))) << provider;
    EXPECT_EQ(sink.text, reply->content) << provider;
    EXPECT_EQ(reply->finish_reason, "stop") << provider;
  }
}

// The Responses transport through the same attempt loop: an in-stream rate limit before any
// output is retried, then the reply (reasoning item, call with fragmented arguments) assembles.
TEST_F(CurlModelClientTest, ResponsesRetriesAnInStreamRateLimitThenAssembles) {
  Serve(Json::array({{{"text", "x"},
                      {"error_in_stream", {{"code", "rate_limit_exceeded"}}},
                      {"error_after_chunks", 2}},
                     {{"reasoning", "plan"},
                      {"signature", "ENC"},
                      {"text", "ok"},
                      {"tool_calls", Json::array({{{"name", "read_file"},
                                                   {"id", "call_1"},
                                                   {"arguments", {{"path", "a.txt"}}}}})}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink, nullptr, "openai-responses");
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(sink.retries.size(), 1u);
  EXPECT_EQ(reply->content, "ok");
  EXPECT_EQ(reply->reasoning, "plan");
  ASSERT_EQ(reply->tool_calls.size(), 1u);
  EXPECT_EQ(reply->tool_calls[0].id, "call_1");
  EXPECT_EQ(reply->tool_calls[0].arguments, "{\"path\":\"a.txt\"}");
  EXPECT_EQ(reply->finish_reason, "tool_calls");
  EXPECT_EQ(reply->provider_fields["openai_reasoning"][0]["encrypted_content"], "ENC");
  const std::vector<Json> requests = server_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0]["path"], "/v1/responses");
  EXPECT_EQ(requests[0]["body"]["store"], false);
}

// A Responses stream cut after text was shown fails loudly and is not retried.
TEST_F(CurlModelClientTest, ResponsesResetAfterOutputIsDataLoss) {
  Serve(Json::array({{{"text", "abcdefgh"}, {"chunk_size", 2}, {"reset_after_chunks", 6}},
                     {{"text", "must not be used"}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink, nullptr, "openai-responses");
  EXPECT_THAT(reply.status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_FALSE(sink.text.empty());
  EXPECT_EQ(server_->Requests().size(), 1u);
}

// Security item 9: one SSE event over kMaxSseEventBytes ends the request, without a retry.
TEST_F(CurlModelClientTest, EventOverTheSseCapFailsWithoutRetry) {
  const size_t kib = 1024;
  Serve(Json::array({{{"text", std::string(kib, 'x')},
                      {"text_times", (kMaxSseEventBytes / kib) + 1},
                      {"chunk_size", kMaxSseEventBytes + kib}},
                     {{"text", "must not be used"}}}));
  Sink sink;
  absl::StatusOr<ModelReply> reply = Complete(&sink);
  EXPECT_THAT(reply.status(), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(std::string(reply.status().message()), HasSubstr("kMaxSseEventBytes"));
  EXPECT_THAT(std::string(reply.status().message()), HasSubstr("8 MiB"));
  EXPECT_TRUE(sink.retries.empty());
  EXPECT_EQ(server_->Requests().size(), 1u);
}

// Security item 9: a reply over the reply cap (in events under the SSE cap) ends the request,
// without a retry, even though output had started; and the transfer is dropped at once, not
// read on (here the server stalls after the cap, which would cost the 20 s idle timeout). A
// 1 MiB cap instead of the default kMaxReplyBytes keeps the test fast; the assembler tests
// check the default.
TEST_F(CurlModelClientTest, ReplyOverTheReplyCapFailsAtOnceWithoutRetry) {
  TransportOptions options;
  options.idle_timeout_ms = 20000;
  options.max_reply_bytes = size_t{1} << 20;
  client_ = MakeCurlModelClient(options);
  Serve(Json::array({{{"text", std::string(1024, 'y')},
                      {"text_times", 4 * 1024},
                      {"chunk_size", 64 * 1024},
                      {"stall_after_chunks", 30}},
                     {{"text", "must not be used"}}}));
  Sink sink;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ModelReply> reply = Complete(&sink);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_THAT(reply.status(), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(std::string(reply.status().message()), HasSubstr("kMaxReplyBytes"));
  EXPECT_THAT(std::string(reply.status().message()), HasSubstr("1 MiB"));
  EXPECT_EQ(sink.text.size(), size_t{1} << 20);  // up to the cap, then nothing more
  EXPECT_TRUE(sink.retries.empty());
  EXPECT_EQ(server_->Requests().size(), 1u);
}

// A session's request, sent from the cache's pieces (megabytes of kept text, no copy): the
// server receives it whole, the first time and again when a 429 makes the transport resend it.
TEST_F(CurlModelClientTest, APreparedBodyOfManyPiecesArrivesWholeEachAttempt) {
  Serve(Json::array({{{"status", 429},
                      {"headers", {{"retry-after-ms", "10"}}},
                      {"body", {{"error", {{"message", "slow down"}}}}}},
                     {{"text", "ok"}}}));
  Transcript t;
  ASSERT_TRUE(t.AppendSystem("sys").ok());
  RequestCache cache;
  ModelRequest request;
  request.settings = ModelSettings{server_->base_url(), "test-key", "scripted", "openai", ""};
  // Laid out over several steps, so the text spans arenas and the body several pieces.
  const std::string line(5000, 'x');
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(t.AppendUser("u" + std::to_string(i) + " " + line).ok());
    ASSERT_TRUE(t.AppendAssistant({{"role", "assistant"}, {"content", "a"}}).ok());
    if (i % 20 == 0) (void)cache.Prepare(t, Provider::kOpenAi, {});
  }
  request.prepared =
      std::make_shared<const PreparedMessages>(cache.Prepare(t, Provider::kOpenAi, {}));
  ASSERT_GT(request.prepared->messages.pieces(), 1u);
  Sink sink;
  absl::StatusOr<ModelReply> reply = client_->Complete(request, &sink, nullptr);
  ASSERT_TRUE(reply.ok()) << reply.status();
  const std::vector<Json> requests = server_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const Json& r : requests) {
    ASSERT_EQ(r["body"]["messages"].size(), t.size());
    EXPECT_EQ(r["body"]["messages"].back()["content"], "a");
    EXPECT_EQ(r["body"]["messages"][3]["content"], "u1 " + line);
  }
}

}  // namespace
}  // namespace agent::daemon::llm
