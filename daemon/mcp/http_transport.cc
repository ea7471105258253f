#include "daemon/mcp/http_transport.h"

#include <curl/curl.h>

#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "daemon/llm/curl_library.h"
#include "daemon/llm/sse_parser.h"
#include "daemon/mcp/json_rpc.h"

namespace agent::daemon::mcp {

// One POST: what its callbacks collect.
struct HttpExchange {
  std::function<void(Json)> deliver;
  size_t max_bytes = kMaxMessageBytes;
  std::string content_type;
  std::string session_id;
  std::string body;  // a JSON answer, or the error text
  llm::SseParser sse;
  bool too_big = false;
};

namespace {

constexpr int kPollMs = 50;

std::string Trimmed(std::string_view s) {
  return std::string(absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size())));
}

}  // namespace

HttpTransport::HttpTransport(HttpOptions options) : options_(std::move(options)) {}

HttpTransport::~HttpTransport() { Close(); }

absl::Status HttpTransport::Start(Callbacks callbacks) {
  callbacks_ = std::move(callbacks);
  absl::StatusOr<const llm::CurlLibrary*> lib = llm::LoadCurl();
  return lib.ok() ? absl::OkStatus() : lib.status();
}

absl::Status HttpTransport::Send(const Json& message) {
  MutexLock l(&mu_);
  if (ended_ || closing_) return absl::UnavailableError("the connection is closed");
  // Threads of finished POSTs are joined here, so a long connection does not collect them.
  for (auto it = posts_.begin(); it != posts_.end();) {
    if (*it->done) {
      it->thread.join();
      it = posts_.erase(it);
    } else {
      ++it;
    }
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  posts_.push_back({std::thread([this, message, done] {
                      Post(message);
                      *done = true;
                    }),
                    done});
  return absl::OkStatus();
}

std::vector<std::string> HttpTransport::HeaderLines() {
  std::vector<std::string> lines = {"Content-Type: application/json",
                                    "Accept: application/json, text/event-stream"};
  for (const auto& [k, v] : options_.headers) lines.push_back(absl::StrCat(k, ": ", v));
  MutexLock l(&mu_);
  if (!session_id_.empty()) lines.push_back("Mcp-Session-Id: " + session_id_);
  if (!protocol_version_.empty()) lines.push_back("MCP-Protocol-Version: " + protocol_version_);
  return lines;
}

void HttpTransport::Deliver(Json message) {
  if (closing_) return;
  if (message.is_object() && message.contains("result") && message["result"].is_object() &&
      message["result"].contains("protocolVersion")) {
    MutexLock l(&mu_);
    protocol_version_ = GetString(message["result"], "protocolVersion");
  }
  MutexLock l(&deliver_mu_);
  callbacks_.on_message(std::move(message));
}

void HttpTransport::EndConnection(absl::Status why) {
  {
    MutexLock l(&mu_);
    if (ended_) return;
    ended_ = true;
  }
  MutexLock l(&deliver_mu_);
  callbacks_.on_closed(why);
}

namespace {

size_t OnHeader(char* data, size_t size, size_t n, void* p) {
  auto* x = static_cast<HttpExchange*>(p);
  std::string_view line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = absl::AsciiStrToLower(std::string(line.substr(0, colon)));
    std::string value = Trimmed(line.substr(colon + 1));
    if (name == "content-type") x->content_type = absl::AsciiStrToLower(value);
    if (name == "mcp-session-id") x->session_id = value;
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* p) {
  auto* x = static_cast<HttpExchange*>(p);
  std::string_view bytes(data, size * n);
  if (absl::StartsWith(x->content_type, "text/event-stream")) {
    std::vector<llm::SseEvent> events;
    x->sse.Feed(bytes, &events);
    if (!x->sse.status().ok()) {
      x->too_big = true;
      return 0;
    }
    for (llm::SseEvent& e : events) {
      absl::StatusOr<Json> j = ParseJson(e.data);
      if (j.ok()) x->deliver(std::move(*j));
    }
    return size * n;
  }
  if (x->body.size() + bytes.size() > x->max_bytes) {
    x->too_big = true;
    return 0;
  }
  x->body.append(bytes);
  return size * n;
}

}  // namespace

HttpTransport::Outcome HttpTransport::Perform(const Json& message, HttpExchange* x) {
  const llm::CurlLibrary* curl = *llm::LoadCurl();
  const std::string payload = DumpJson(message);
  curl_slist* headers = nullptr;
  for (const std::string& h : HeaderLines()) headers = curl->slist_append(headers, h.c_str());
  CURL* easy = curl->easy_init();
  CURLM* multi = curl->multi_init();
  char error_buf[CURL_ERROR_SIZE] = {0};
  curl->easy_setopt(easy, CURLOPT_URL, options_.url.c_str());
  curl->easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl->easy_setopt(easy, CURLOPT_POSTFIELDS, payload.data());
  curl->easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl->easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buf);
  curl->easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  curl->easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl->easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);  // headers may hold tokens
  curl->easy_setopt(easy, CURLOPT_USERAGENT, "agentd");
  curl->easy_setopt(easy, CURLOPT_HEADERFUNCTION, OnHeader);
  curl->easy_setopt(easy, CURLOPT_HEADERDATA, x);
  curl->easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl->easy_setopt(easy, CURLOPT_WRITEDATA, x);
  curl->multi_add_handle(multi, easy);
  Outcome out;
  for (;;) {
    int running = 0;
    curl->multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl->multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) out.code = msg->data.result;
    }
    if (running == 0 || closing_) break;
    curl->multi_poll(multi, nullptr, 0, kPollMs, nullptr);
  }
  curl->easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &out.status);
  if (out.code != CURLE_OK) {
    out.error =
        error_buf[0] != '\0' ? error_buf : curl->easy_strerror(static_cast<CURLcode>(out.code));
  }
  curl->multi_remove_handle(multi, easy);
  curl->easy_cleanup(easy);
  curl->multi_cleanup(multi);
  curl->slist_free_all(headers);
  return out;
}

void HttpTransport::Post(Json message) {
  const Incoming in = Classify(message);
  auto fail = [&](const std::string& why) {
    if (in.kind == Incoming::Kind::kRequest) Deliver(MakeError(in.id, -32000, why));
  };
  if (absl::StatusOr<const llm::CurlLibrary*> lib = llm::LoadCurl(); !lib.ok()) {
    return fail(std::string(lib.status().message()));
  }
  HttpExchange x;
  x.deliver = [this](Json m) { Deliver(std::move(m)); };
  x.max_bytes = options_.max_message_bytes;
  const bool is_initialize = in.method == "initialize";
  const Outcome out = Perform(message, &x);
  if (closing_) return;
  bool had_session;
  {
    MutexLock l(&mu_);
    if (!x.session_id.empty() && is_initialize) session_id_ = x.session_id;
    had_session = !session_id_.empty() && !is_initialize;
  }
  if (x.too_big) {
    return EndConnection(absl::ResourceExhaustedError("the server sent a message over the limit"));
  }
  if (out.code != CURLE_OK) return fail(absl::StrCat("HTTP transport: ", out.error));
  if (out.status == 404 && had_session) {
    return EndConnection(absl::UnavailableError("the server ended the MCP session (HTTP 404)"));
  }
  if (out.status >= 400) {
    return fail(absl::StrCat("HTTP ", out.status, ": ", ToValidUtf8(x.body.substr(0, 300))));
  }
  if (!absl::StartsWith(x.content_type, "application/json") || x.body.empty()) return;
  absl::StatusOr<Json> j = ParseJson(x.body);
  if (!j.ok() || !(j->is_object() || j->is_array())) {
    return EndConnection(absl::DataLossError("the server answered with malformed JSON-RPC"));
  }
  if (j->is_array()) {
    for (Json& m : *j) Deliver(std::move(m));
  } else {
    Deliver(std::move(*j));
  }
}

void HttpTransport::Close() {
  closing_ = true;
  std::list<PostThread> posts;
  {
    MutexLock l(&mu_);
    posts.swap(posts_);
  }
  for (PostThread& p : posts) {
    if (p.thread.joinable()) p.thread.join();
  }
  EndConnection(absl::CancelledError("closed by the daemon"));
}

}  // namespace agent::daemon::mcp
