// The libcurl transport behind ModelClient: one easy handle per session (so the connection
// is kept alive between requests), driven through a multi handle so that a Cancel or an idle
// stream is noticed within one poll interval instead of at libcurl's next timeout.
//
// What differs between providers is decided once per request (provider.h); what to do after
// a failed attempt is failure_policy.h. This file only moves bytes: it feeds the body to
// SseParser and the events to the StreamAssembler, and abandons a transfer as soon as the
// stream failed (an in-stream error, a cap) so that a server cannot keep us reading.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/llm/curl_library.h"
#include "daemon/llm/failure_policy.h"
#include "daemon/llm/model_client.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/llm/stream_assembler.h"

namespace agent::daemon::llm {
namespace {

// How often the transfer loop looks at the cancel flag and the idle clock while nothing comes:
// each wake-up costs the daemon CPU while a model thinks over a long session's request
// (Complete's contract: a cancel ends it within 100 ms).
constexpr int kPollMs = 50;
// How much of a non-stream (error) body is kept; the transfer stops there.
constexpr size_t kMaxErrorBodyBytes = 64 * 1024;

using Clock = std::chrono::steady_clock;

// The state of one HTTP attempt, shared with libcurl's callbacks.
struct Attempt {
  Attempt(std::unique_ptr<StreamAssembler> a, size_t max_event_bytes, const CurlLibrary* c, CURL* e,
          const RequestBody& body)
      : assembler(std::move(a)),
        parser(ParserOptions(max_event_bytes)),
        curl(c),
        easy(e),
        body_reader(body) {}

  static SseParser::Options ParserOptions(size_t max_event_bytes) {
    SseParser::Options o;
    o.max_event_bytes = max_event_bytes;
    return o;
  }

  std::unique_ptr<StreamAssembler> assembler;
  SseParser parser;
  const CurlLibrary* curl;
  CURL* easy;
  long status = 0;
  bool streaming = false;  // status 200 and an event stream: bytes go to the parser
  std::string error_body;  // non-200 bodies, capped
  std::vector<std::pair<std::string, std::string>> headers;
  absl::Status stream_error;  // first error from the parser or the assembler
  Clock::time_point last_byte = Clock::now();
  std::vector<SseEvent> events;
  RequestBody::Reader body_reader;  // the request body, sent from its pieces without a copy

  // Hands the parsed events to the assembler; false once the stream has failed.
  bool Consume() {
    for (const SseEvent& ev : events) {
      if (!stream_error.ok()) break;
      absl::Status s = assembler->OnEvent(ev);
      if (!s.ok()) stream_error = s;
    }
    events.clear();
    // The events completed before a cap was hit count; then the cap ends the stream.
    if (stream_error.ok() && !parser.status().ok()) stream_error = parser.status();
    return stream_error.ok();
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

// libcurl asks for the request body's next bytes.
size_t ReadBody(char* out, size_t size, size_t n, void* user) {
  return static_cast<Attempt*>(user)->body_reader.Read(out, size * n);
}

// libcurl rewinds the body (to send it again on a reused connection that closed).
int SeekBody(void* user, curl_off_t offset, int origin) {
  if (origin != SEEK_SET || offset < 0) return CURL_SEEKFUNC_CANTSEEK;
  return static_cast<Attempt*>(user)->body_reader.Seek(static_cast<size_t>(offset))
             ? CURL_SEEKFUNC_OK
             : CURL_SEEKFUNC_FAIL;
}

// Returning less than `len` makes libcurl abort the transfer (CURLE_WRITE_ERROR).
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
    if (a->error_body.size() >= kMaxErrorBodyBytes) return 0;  // enough to show the error
    a->error_body.append(data, std::min(len, kMaxErrorBodyBytes - a->error_body.size()));
    return len;
  }
  a->parser.Feed(std::string_view(data, len), &a->events);
  return a->Consume() ? len : 0;
}

// Ends the stream of a finished transfer: the reply, or why there is none.
absl::StatusOr<ModelReply> FinishStream(Attempt& a, bool transfer_failed,
                                        std::string_view transfer_error) {
  a.parser.Finish(&a.events);
  a.Consume();
  if (a.stream_error.ok() && transfer_failed && !a.assembler->Complete()) {
    a.stream_error =
        absl::UnavailableError(absl::StrCat("the stream broke: ", std::string(transfer_error)));
  }
  if (!a.stream_error.ok()) return a.stream_error;
  return a.assembler->Finish();
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
    absl::StatusOr<WireRequest> wire = BuildWireRequest(request);
    if (!wire.ok()) return wire.status();
    if (absl::Status s = OpenHandles(); !s.ok()) return s;
    active_ = options_;
    if (request.connect_timeout_ms > 0) active_.connect_timeout_ms = request.connect_timeout_ms;
    if (request.idle_timeout_ms > 0) active_.idle_timeout_ms = request.idle_timeout_ms;
    if (request.max_attempts > 0) active_.max_attempts = request.max_attempts;

    const int max_attempts = std::max(1, active_.max_attempts);
    for (int attempt = 1;; ++attempt) {
      Attempt a(MakeStreamAssembler(wire->provider, sink, options_.max_reply_bytes, wire->model),
                options_.max_event_bytes, curl_, easy_, wire->body);
      const CURLcode code = Perform(*wire, &a, cancelled);
      if (cancelled != nullptr && *cancelled) return absl::CancelledError("cancelled");

      AttemptOutcome outcome;
      outcome.transport_error = code != CURLE_OK;
      outcome.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      outcome.connection_refused = code == CURLE_COULDNT_CONNECT && OsErrno() == ECONNREFUSED;
      outcome.transport_message = error_buf_[0] ? error_buf_ : curl_->easy_strerror(code);
      outcome.http_status = static_cast<int>(a.status);
      outcome.streamed = a.streaming;
      if (a.streaming) {
        absl::StatusOr<ModelReply> reply =
            FinishStream(a, outcome.transport_error, outcome.transport_message);
        if (reply.ok()) return reply;
        outcome.stream_error = reply.status();
        outcome.output_started = a.assembler->OutputStarted();
      }
      outcome.body = std::move(a.error_body);
      outcome.headers = std::move(a.headers);

      const FailureDecision d = ClassifyFailure(outcome, wire->url, attempt, absl::Now(), rng_());
      if (d.action != FailureAction::kRetry) return d.status;
      if (attempt >= max_attempts) {
        return absl::Status(d.status.code(), absl::StrCat("gave up after ", attempt,
                                                          " attempts: ", d.status.message()));
      }
      if (sink != nullptr) sink->OnRetry(attempt, max_attempts - 1, d.delay_ms, d.reason);
      if (!Wait(d.delay_ms, cancelled)) return absl::CancelledError("cancelled");
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

  // The errno of the last connect, as libcurl saw it.
  long OsErrno() const {
    long err = 0;
    curl_->easy_getinfo(easy_, CURLINFO_OS_ERRNO, &err);
    return err;
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

  // Sets up the easy handle for one attempt; the returned header list is the caller's to free
  // after the transfer.
  curl_slist* Configure(const WireRequest& wire, Attempt* a) {
    curl_->easy_reset(easy_);
    error_buf_[0] = '\0';
    curl_slist* headers = nullptr;
    for (const std::string& h : wire.headers) headers = curl_->slist_append(headers, h.c_str());
    // No "Expect: 100-continue" for a large body: a round trip (or a second's wait) per step.
    headers = curl_->slist_append(headers, "Expect:");
    curl_->easy_setopt(easy_, CURLOPT_URL, wire.url.c_str());
    curl_->easy_setopt(easy_, CURLOPT_HTTPHEADER, headers);
    // The body read from its pieces (RequestBody), its size known up front.
    curl_->easy_setopt(easy_, CURLOPT_POST, 1L);
    curl_->easy_setopt(easy_, CURLOPT_READFUNCTION, ReadBody);
    curl_->easy_setopt(easy_, CURLOPT_READDATA, a);
    curl_->easy_setopt(easy_, CURLOPT_SEEKFUNCTION, SeekBody);
    curl_->easy_setopt(easy_, CURLOPT_SEEKDATA, a);
    curl_->easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(wire.body.size()));
    curl_->easy_setopt(easy_, CURLOPT_WRITEFUNCTION, OnBody);
    curl_->easy_setopt(easy_, CURLOPT_WRITEDATA, a);
    curl_->easy_setopt(easy_, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_->easy_setopt(easy_, CURLOPT_HEADERDATA, a);
    curl_->easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_buf_);
    curl_->easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS,
                       static_cast<long>(active_.connect_timeout_ms));
    curl_->easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_->easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_->easy_setopt(easy_, CURLOPT_ACCEPT_ENCODING, "");
    curl_->easy_setopt(easy_, CURLOPT_USERAGENT, "agentd");
    // Never send the key anywhere else: no redirects.
    curl_->easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 0L);
    return headers;
  }

  // Runs one attempt to its end, a cancel, or the idle timeout.
  CURLcode Perform(const WireRequest& wire, Attempt* a, const std::atomic<bool>* cancelled) {
    curl_slist* headers = Configure(wire, a);
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
      if (Clock::now() - a->last_byte > std::chrono::milliseconds(active_.idle_timeout_ms)) {
        result = CURLE_OPERATION_TIMEDOUT;
        std::snprintf(error_buf_, sizeof error_buf_, "no data for %d ms", active_.idle_timeout_ms);
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
  TransportOptions active_;  // options_ with the current request's settings over them
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
