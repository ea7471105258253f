#include "daemon/mcp/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
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
  std::string bad;  // why the answer cannot be read (an SSE event that is not JSON-RPC)
};

namespace {

constexpr int kPollMs = 50;

std::string Trimmed(std::string_view s) {
  return std::string(absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size())));
}

// A protocol version we would put in a header: a date-like token, nothing a header could
// be bent with.
bool HeaderSafeVersion(const std::string& v) {
  return !v.empty() && v.size() <= 32 && std::all_of(v.begin(), v.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

// True when `m` is a reply (well-formed or not) to our request `id`.
bool IsReplyTo(const Json& m, const Json& id) {
  const Incoming in = Classify(m);
  return in.kind == Incoming::Kind::kResponse && OwnRequestId(in.id).has_value() &&
         OwnRequestId(in.id) == OwnRequestId(id);
}

}  // namespace

HttpTransport::HttpTransport(HttpOptions options) : options_(std::move(options)) {}

HttpTransport::~HttpTransport() { Close(); }

absl::Status HttpTransport::Start(Callbacks callbacks) {
  MutexLock l(&deliver_mu_);  // Close may come from another thread while this starts
  if (closing_) return absl::CancelledError("closed by the daemon");
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
  MutexLock l(&deliver_mu_);
  if (callbacks_.on_message) callbacks_.on_message(std::move(message));
}

void HttpTransport::EndConnection(absl::Status why) {
  {
    MutexLock l(&mu_);
    if (ended_) return;
    ended_ = true;
  }
  MutexLock l(&deliver_mu_);
  if (callbacks_.on_closed) callbacks_.on_closed(why);  // unset when closed before Start
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
      if (e.data.empty()) continue;  // a priming event (2025-11-25): an id, no message
      absl::StatusOr<Json> j = ParseJson(e.data);
      const bool batch =
          j.ok() && j->is_array() &&
          std::all_of(j->begin(), j->end(), [](const Json& m) { return m.is_object(); });
      if (!j.ok() || !(j->is_object() || batch)) {
        x->bad = absl::StrCat("the server sent an event that is not JSON-RPC: ",
                              ToValidUtf8(std::string_view(e.data).substr(0, 120)));
        return 0;  // ends the transfer: its answer cannot be trusted to follow
      }
      if (j->is_array()) {
        for (Json& m : *j) x->deliver(std::move(m));
      } else {
        x->deliver(std::move(*j));
      }
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

namespace {

// Why a POST that carried a request ended without its answer.
std::string NoAnswer(const HttpExchange& x, long status) {
  if (absl::StartsWith(x.content_type, "text/event-stream")) {
    return "the server's event stream ended without the answer";
  }
  if (absl::StartsWith(x.content_type, "application/json")) {
    return x.body.empty() ? absl::StrCat("the server answered HTTP ", status, " with no body")
                          : "the server's JSON answer holds no reply to the request";
  }
  return absl::StrCat("the server answered HTTP ", status, " with content type \"",
                      ToValidUtf8(std::string_view(x.content_type).substr(0, 80)),
                      "\", neither application/json nor text/event-stream");
}

}  // namespace

void HttpTransport::AdoptProtocolVersion(const Json& reply) {
  auto r = reply.find("result");
  if (r == reply.end() || !r->is_object()) return;
  std::string version = GetString(*r, "protocolVersion");
  if (!HeaderSafeVersion(version)) return;  // the client refuses it and closes
  MutexLock l(&mu_);
  protocol_version_ = std::move(version);
}

void HttpTransport::Post(Json message) {
  const Incoming in = Classify(message);
  const bool is_request = in.kind == Incoming::Kind::kRequest;
  HttpExchange x;
  bool answered = false;
  auto fail = [&](const std::string& why) {
    if (is_request && !answered) Deliver(MakeError(in.id, -32000, why));
  };
  if (absl::StatusOr<const llm::CurlLibrary*> lib = llm::LoadCurl(); !lib.ok()) {
    return fail(std::string(lib.status().message()));
  }
  const bool is_initialize = is_request && in.method == "initialize";
  x.deliver = [&](Json m) {
    if (is_request && IsReplyTo(m, in.id)) {
      answered = true;
      // The version negotiated in initialize, and only there, goes into later headers.
      if (is_initialize) AdoptProtocolVersion(m);
    }
    Deliver(std::move(m));
  };
  x.max_bytes = options_.max_message_bytes;
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
  if (!x.bad.empty()) return fail(x.bad);
  if (out.code != CURLE_OK) return fail(absl::StrCat("HTTP transport: ", out.error));
  if (out.status == 404 && had_session) {
    return EndConnection(absl::UnavailableError("the server ended the MCP session (HTTP 404)"));
  }
  if (out.status >= 400) {
    return fail(absl::StrCat("HTTP ", out.status, ": ", ToValidUtf8(x.body.substr(0, 300))));
  }
  if (absl::StartsWith(x.content_type, "application/json") && !x.body.empty()) {
    absl::StatusOr<Json> j = ParseJson(x.body);
    if (!j.ok() || !(j->is_object() || j->is_array())) {
      return EndConnection(absl::DataLossError("the server answered with malformed JSON-RPC"));
    }
    if (j->is_array()) {
      for (Json& m : *j) x.deliver(std::move(m));
    } else {
      x.deliver(std::move(*j));
    }
  }
  // Nothing else can carry the answer (no GET stream, no resumption): end the call now
  // rather than at its timeout.
  fail(NoAnswer(x, out.status));
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
