// The libcurl transport behind ModelClient: one easy handle per session (so the connection
// is kept alive between requests), driven through a multi handle so that a Cancel or an idle
// stream is noticed within one poll interval instead of at libcurl's next timeout.
//
// Retry policy (WIRE.md §6, decisions in retry_policy.h): HTTP errors that may clear, and
// failures before any output reached the user, are retried with backoff and reported to the
// sink; anything after output was shown fails loudly and is never retried.
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/llm/anthropic_convert.h"
#include "daemon/llm/anthropic_stream.h"
#include "daemon/llm/curl_library.h"
#include "daemon/llm/error_text.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/openai_stream.h"
#include "daemon/llm/request_builder.h"
#include "daemon/llm/retry_policy.h"
#include "daemon/llm/sse_parser.h"

namespace agent::daemon::llm {
namespace {

// How often the transfer loop looks at the cancel flag and the idle clock.
constexpr int kPollMs = 20;
constexpr int kAnthropicMaxTokens = 8192;

using Clock = std::chrono::steady_clock;

// The state of one HTTP attempt, shared with libcurl's callbacks.
struct Attempt {
  bool anthropic = false;
  StreamSink* sink = nullptr;
  SseParser parser;
  std::unique_ptr<OpenAiStreamAssembler> openai;
  std::unique_ptr<AnthropicStreamAssembler> claude;
  const CurlLibrary* curl = nullptr;
  CURL* easy = nullptr;
  long status = 0;
  bool streaming = false;  // status 200 and an event stream: bytes go to the parser
  std::string error_body;  // non-200 bodies, capped
  std::vector<std::pair<std::string, std::string>> headers;
  absl::Status stream_error;  // first error from the assembler
  Clock::time_point last_byte = Clock::now();
  std::vector<SseEvent> events;

  bool OutputStarted() const {
    return anthropic ? claude->OutputStarted() : openai->OutputStarted();
  }
  bool Complete() const { return anthropic ? claude->Complete() : openai->Complete(); }

  void Consume(std::vector<SseEvent>& evs) {
    for (const SseEvent& ev : evs) {
      if (!stream_error.ok()) break;
      absl::Status s = anthropic ? claude->OnEvent(ev) : openai->OnEvent(ev);
      if (!s.ok()) stream_error = s;
    }
    evs.clear();
  }
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  std::string_view line(data, size * n);
  a->last_byte = Clock::now();
  if (line.rfind("HTTP/", 0) == 0) {
    a->headers.clear();  // a new response (after 100-continue or a redirect)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = absl::AsciiStrToLower(absl::string_view(line.data(), colon));
    std::string value(absl::StripAsciiWhitespace(
        absl::string_view(line.data() + colon + 1, line.size() - colon - 1)));
    a->headers.emplace_back(std::move(name), std::move(value));
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  size_t len = size * n;
  a->last_byte = Clock::now();
  if (a->status == 0) {
    a->curl->easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &a->status);
    std::string type;
    for (auto& [k, v] : a->headers) {
      if (k == "content-type") type = absl::AsciiStrToLower(v);
    }
    // An error before the stream starts comes as a plain JSON body, even with stream:true.
    a->streaming = a->status == 200 && type.rfind("application/json", 0) != 0;
  }
  if (!a->streaming) {
    if (a->error_body.size() < 64 * 1024) a->error_body.append(data, len);
    return len;
  }
  a->parser.Feed(std::string_view(data, len), &a->events);
  a->Consume(a->events);
  return len;
}

absl::Status StatusForHttp(int status, const std::string& message) {
  std::string text = absl::StrCat("API ", status, ": ", message);
  switch (status) {
    case 400:
    case 413:
    case 422:
      return absl::InvalidArgumentError(text);
    case 401:
      return absl::UnauthenticatedError(text);
    case 402:
    case 403:
      return absl::PermissionDeniedError(text);
    case 404:
      return absl::NotFoundError(text);
    case 429:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::UnavailableError(text);
  }
}

class CurlModelClient : public ModelClient {
 public:
  explicit CurlModelClient(const TransportOptions& options) : options_(options) {
    std::random_device rd;
    rng_.seed(rd());
  }
  ~CurlModelClient() override {
    if (curl_ == nullptr) return;
    curl_->multi_cleanup(multi_);
    curl_->easy_cleanup(easy_);
  }

  absl::StatusOr<ModelReply> Complete(const ModelRequest& request, StreamSink* sink,
                                      const std::atomic<bool>* cancelled) override {
    const ModelSettings& m = request.settings;
    if (m.base_url.empty()) {
      return absl::FailedPreconditionError(
          "no model endpoint configured: set AGENT_BASE_URL (an OpenAI-compatible URL such as "
          "https://api.openai.com/v1 or http://localhost:11434/v1) and AGENT_API_KEY");
    }
    if (m.model.empty()) {
      return absl::FailedPreconditionError("no model named: set AGENT_MODEL");
    }
    bool cloud = absl::StrContains(m.base_url, "api.openai.com") ||
                 absl::StrContains(m.base_url, "anthropic.com");
    if (cloud && m.api_key.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("no API key: set AGENT_API_KEY (or OPENAI_API_KEY) for ", m.base_url));
    }
    bool anthropic = m.provider == "anthropic";
    std::string url = m.base_url + (anthropic ? "/messages" : "/chat/completions");
    // DeepSeek's thinking models want their reasoning back inside a tool loop (WIRE.md 8);
    // other servers reject or ignore the field, so it is sent only there.
    OpenAiRequestOptions openai_options;
    openai_options.send_reasoning_content = absl::StrContains(m.base_url, "deepseek");
    Json body = anthropic ? BuildAnthropicRequest(m.model, request.messages, request.tools,
                                                  kAnthropicMaxTokens, true)
                          : BuildOpenAiRequest(m.model, request.messages, request.tools, true,
                                               openai_options);
    std::string payload = DumpJson(body);
    if (absl::Status s = OpenHandles(); !s.ok()) return s;

    int max_attempts = std::max(1, options_.max_attempts);
    std::string last_reason;
    for (int attempt = 1;; ++attempt) {
      Attempt a;
      a.anthropic = anthropic;
      a.sink = sink;
      a.openai = std::make_unique<OpenAiStreamAssembler>(sink);
      a.claude = std::make_unique<AnthropicStreamAssembler>(sink);
      a.curl = curl_;
      a.easy = easy_;
      CURLcode code = Perform(url, m, payload, &a, cancelled);
      if (cancelled != nullptr && *cancelled) return absl::CancelledError("cancelled");

      absl::Status failure;
      bool retryable = false;
      int64_t delay_ms = 0;
      if (code != CURLE_OK && !a.streaming && a.error_body.empty()) {
        // Nothing came back: the server is unreachable, or went silent before answering.
        failure = absl::UnavailableError(
            absl::StrCat(code == CURLE_OPERATION_TIMEDOUT ? "no answer from " : "cannot reach ",
                         url, ": ", error_buf_[0] ? error_buf_ : curl_->easy_strerror(code)));
        retryable = true;
        delay_ms = BackoffMs(attempt, rng_());
      } else if (!a.streaming) {
        HttpFailure f{static_cast<int>(a.status), a.error_body, a.headers};
        if (a.status == 200) {
          failure = absl::UnavailableError("the server answered with JSON instead of a stream: " +
                                           OneLineTruncated(a.error_body));
        } else {
          RetryDecision d = DecideRetry(f, attempt, absl::Now(), rng_());
          failure = StatusForHttp(static_cast<int>(a.status),
                                  ExtractErrorMessage(static_cast<int>(a.status), a.error_body));
          retryable = d.retry;
          delay_ms = d.delay_ms;
          last_reason = d.reason;
        }
      } else {
        std::vector<SseEvent> rest;
        a.parser.Finish(&rest);
        a.Consume(rest);
        if (a.stream_error.ok() && code != CURLE_OK && !a.Complete()) {
          a.stream_error = absl::UnavailableError(absl::StrCat(
              "the stream broke: ", error_buf_[0] ? error_buf_ : curl_->easy_strerror(code)));
        }
        if (a.stream_error.ok()) {
          auto reply = anthropic ? a.claude->Finish() : a.openai->Finish();
          if (reply.ok()) return reply;
          a.stream_error = reply.status();
        }
        if (a.OutputStarted()) {
          // The user saw part of this answer: a silent retry would show a different one.
          return absl::DataLossError(
              absl::StrCat("the reply broke off after it had started: ", a.stream_error.message()));
        }
        failure = a.stream_error;
        retryable = absl::IsUnavailable(failure) || absl::IsResourceExhausted(failure);
        delay_ms = BackoffMs(attempt, rng_());
      }
      std::string reason = last_reason.empty() || a.status == 0 || a.streaming
                               ? std::string(failure.message())
                               : last_reason;
      last_reason.clear();
      if (!retryable) return failure;
      if (attempt >= max_attempts) {
        return absl::Status(failure.code(), absl::StrCat("gave up after ", attempt,
                                                         " attempts: ", failure.message()));
      }
      if (sink != nullptr)
        sink->OnRetry(attempt, max_attempts - 1, delay_ms, OneLineTruncated(reason));
      if (!Wait(delay_ms, cancelled)) return absl::CancelledError("cancelled");
    }
  }

 private:
  // The handles are made on the first request, which is when libcurl is loaded.
  absl::Status OpenHandles() {
    if (curl_ != nullptr) return absl::OkStatus();
    absl::StatusOr<const CurlLibrary*> lib = LoadCurl();
    if (!lib.ok()) return lib.status();
    easy_ = (*lib)->easy_init();
    multi_ = (*lib)->multi_init();
    if (easy_ == nullptr || multi_ == nullptr) {
      if (easy_ != nullptr) (*lib)->easy_cleanup(easy_);
      if (multi_ != nullptr) (*lib)->multi_cleanup(multi_);
      return absl::ResourceExhaustedError("libcurl could not make a transfer handle");
    }
    curl_ = *lib;
    return absl::OkStatus();
  }

  // Sleeps for `ms`, waking early for a cancel; false when cancelled.
  static bool Wait(int64_t ms, const std::atomic<bool>* cancelled) {
    auto until = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < until) {
      if (cancelled != nullptr && *cancelled) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    }
    return cancelled == nullptr || !*cancelled;
  }

  CURLcode Perform(const std::string& url, const ModelSettings& m, const std::string& payload,
                   Attempt* a, const std::atomic<bool>* cancelled) {
    curl_->easy_reset(easy_);
    error_buf_[0] = '\0';
    curl_slist* headers = nullptr;
    headers = curl_->slist_append(headers, "Content-Type: application/json");
    headers = curl_->slist_append(headers, "Accept: text/event-stream");
    std::string auth;
    if (m.provider == "anthropic") {
      auth = "x-api-key: " + m.api_key;
      headers = curl_->slist_append(headers, "anthropic-version: 2023-06-01");
    } else if (!m.api_key.empty()) {
      auth = "Authorization: Bearer " + m.api_key;
    }
    if (!auth.empty()) headers = curl_->slist_append(headers, auth.c_str());
    curl_->easy_setopt(easy_, CURLOPT_URL, url.c_str());
    curl_->easy_setopt(easy_, CURLOPT_HTTPHEADER, headers);
    curl_->easy_setopt(easy_, CURLOPT_POSTFIELDS, payload.data());
    curl_->easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
    curl_->easy_setopt(easy_, CURLOPT_WRITEFUNCTION, OnBody);
    curl_->easy_setopt(easy_, CURLOPT_WRITEDATA, a);
    curl_->easy_setopt(easy_, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_->easy_setopt(easy_, CURLOPT_HEADERDATA, a);
    curl_->easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_buf_);
    curl_->easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS,
                       static_cast<long>(options_.connect_timeout_ms));
    curl_->easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_->easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_->easy_setopt(easy_, CURLOPT_ACCEPT_ENCODING, "");
    curl_->easy_setopt(easy_, CURLOPT_USERAGENT, "agentd");
    // Never send the key anywhere else: no redirects.
    curl_->easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 0L);

    curl_->multi_add_handle(multi_, easy_);
    CURLcode result = CURLE_OK;
    a->last_byte = Clock::now();
    bool aborted = false;
    for (;;) {
      int running = 0;
      curl_->multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_->multi_info_read(multi_, &left)) {
        if (msg->msg == CURLMSG_DONE) result = msg->data.result;
      }
      if (running == 0) break;
      if (cancelled != nullptr && *cancelled) {
        aborted = true;
        break;
      }
      if (Clock::now() - a->last_byte > std::chrono::milliseconds(options_.idle_timeout_ms)) {
        result = CURLE_OPERATION_TIMEDOUT;
        std::snprintf(error_buf_, sizeof error_buf_, "no data for %d ms", options_.idle_timeout_ms);
        aborted = true;
        break;
      }
      curl_->multi_poll(multi_, nullptr, 0, kPollMs, nullptr);
    }
    curl_->multi_remove_handle(multi_, easy_);
    curl_->slist_free_all(headers);
    if (a->status == 0) curl_->easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &a->status);
    if (aborted && result == CURLE_OK) result = CURLE_ABORTED_BY_CALLBACK;
    return result;
  }

  TransportOptions options_;
  const CurlLibrary* curl_ = nullptr;
  CURL* easy_ = nullptr;
  CURLM* multi_ = nullptr;
  char error_buf_[CURL_ERROR_SIZE] = {0};
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<ModelClient> MakeCurlModelClient(const TransportOptions& options) {
  return std::make_unique<CurlModelClient>(options);
}

}  // namespace agent::daemon::llm
