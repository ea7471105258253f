#include "daemon/llm/model_list.h"

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "daemon/llm/curl_library.h"
#include "daemon/llm/error_text.h"
#include "daemon/llm/failure_policy.h"
#include "daemon/llm/provider.h"
#include "daemon/llm/retry_policy.h"

namespace agent::daemon::llm {
namespace {

// A model list is small; anything longer is not one.
constexpr size_t kMaxBodyBytes = 4 << 20;

struct Transfer {
  std::string body;
  bool too_big = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (t->body.size() + len > kMaxBodyBytes) {
    t->too_big = true;
    return 0;  // aborts the transfer
  }
  t->body.append(data, len);
  return len;
}

// Runs the configured handle to its end; the transfer's result code.
CURLcode Run(const CurlLibrary& curl, CURLM* multi, CURL* easy) {
  curl.multi_add_handle(multi, easy);
  CURLcode result = CURLE_OK;
  // Bounded by CURLOPT_TIMEOUT_MS: libcurl ends the transfer, and with it this loop.
  for (;;) {
    int running = 0;
    curl.multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl.multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) result = msg->data.result;
    }
    if (running == 0) break;
    curl.multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  curl.multi_remove_handle(multi, easy);
  return result;
}

std::string Describe(const std::string& url, CURLcode code, long os_errno, const char* error,
                     const CurlLibrary& curl) {
  const std::string why = error[0] != '\0' ? error : curl.easy_strerror(code);
  if (code == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED && IsLoopbackUrl(url)) {
    return absl::StrCat("nothing listens on ", url, ": ", why);
  }
  return absl::StrCat("cannot list the models at ", url, ": ", why);
}

}  // namespace

std::vector<std::string> ParseModelIds(std::string_view body) {
  std::vector<std::string> ids;
  absl::StatusOr<Json> j = ParseJson(std::string(body));
  if (!j.ok() || !j->is_object()) return ids;
  for (const char* list : {"data", "models"}) {
    auto it = j->find(list);
    if (it == j->end() || !it->is_array()) continue;
    for (const Json& m : *it) {
      if (!m.is_object()) continue;
      std::string id = GetString(m, "id");
      if (id.empty()) id = GetString(m, "name");
      if (!id.empty()) ids.push_back(std::move(id));
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

ModelList ListProviderModels(const ModelSettings& settings, int connect_timeout_ms,
                             int timeout_ms) {
  ModelList out;
  if (settings.base_url.empty()) {
    out.message = "no model endpoint configured: set AGENT_BASE_URL";
    return out;
  }
  absl::StatusOr<Provider> provider = ParseProvider(settings.provider);
  if (!provider.ok()) {
    out.message = std::string(provider.status().message());
    return out;
  }
  absl::StatusOr<const CurlLibrary*> lib = LoadCurl();
  if (!lib.ok()) {
    out.message = std::string(lib.status().message());
    return out;
  }
  const CurlLibrary& curl = **lib;
  std::string url = settings.base_url + "/models";
  std::vector<std::string> headers = {"Accept: application/json"};
  if (*provider == Provider::kAnthropic) {
    url += "?limit=1000";
    headers.push_back("anthropic-version: 2023-06-01");
    if (!settings.api_key.empty()) headers.push_back("x-api-key: " + settings.api_key);
  } else if (!settings.api_key.empty()) {
    headers.push_back("Authorization: Bearer " + settings.api_key);
  }
  CURL* easy = curl.easy_init();
  CURLM* multi = curl.multi_init();
  if (easy == nullptr || multi == nullptr) {
    if (easy != nullptr) curl.easy_cleanup(easy);
    if (multi != nullptr) curl.multi_cleanup(multi);
    out.message = "libcurl could not make a transfer handle";
    return out;
  }
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl.slist_append(list, h.c_str());
  Transfer t;
  char error[CURL_ERROR_SIZE] = {0};
  curl.easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl.easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  curl.easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  curl.easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl.easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  curl.easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
  curl.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_ms));
  curl.easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
  curl.easy_setopt(easy, CURLOPT_USERAGENT, "agentd");
  curl.easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);  // the key goes to base_url only
  const CURLcode code = Run(curl, multi, easy);
  long status = 0;
  long os_errno = 0;
  curl.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl.easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
  curl.slist_free_all(list);
  curl.multi_cleanup(multi);
  curl.easy_cleanup(easy);

  if (t.too_big) {
    out.message =
        absl::StrCat(url, " sent more than ", kMaxBodyBytes >> 20, " MiB: not a model list");
  } else if (code != CURLE_OK) {
    out.message = Describe(url, code, os_errno, error, curl);
  } else if (status == 404) {
    out.message = absl::StrCat("the provider has no model list (GET ", url, ": 404)");
  } else if (status != 200) {
    out.message = absl::StrCat("GET ", url, ": API ", status, ": ",
                               ExtractErrorMessage(static_cast<int>(status), t.body));
  } else {
    out.models = ParseModelIds(t.body);
    if (out.models.empty()) {
      out.message = absl::StrCat("the provider lists no models (GET ", url, ")");
    }
  }
  return out;
}

}  // namespace agent::daemon::llm
