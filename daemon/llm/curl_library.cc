#include "daemon/llm/curl_library.h"

#include <dlfcn.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace agent::daemon::llm {
namespace {

// The soname of libcurl's ABI 4, which Debian's libcurl4 package provides.
constexpr char kSoname[] = "libcurl.so.4";

template <typename F>
bool Resolve(void* handle, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(::dlsym(handle, name));
  if (*out == nullptr) absl::StrAppend(missing, missing->empty() ? "" : ", ", name);
  return *out != nullptr;
}

absl::StatusOr<const CurlLibrary*> Open() {
  // RTLD_LOCAL: its symbols stay out of the process's global scope.
  void* handle = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", kSoname,
                     " (install the libcurl4 package): ", why != nullptr ? why : "unknown error"));
  }
  static CurlLibrary lib;
  std::string missing;
  Resolve(handle, "curl_global_init", &lib.global_init, &missing);
  Resolve(handle, "curl_easy_init", &lib.easy_init, &missing);
  Resolve(handle, "curl_easy_cleanup", &lib.easy_cleanup, &missing);
  Resolve(handle, "curl_easy_reset", &lib.easy_reset, &missing);
  Resolve(handle, "curl_easy_setopt", &lib.easy_setopt, &missing);
  Resolve(handle, "curl_easy_getinfo", &lib.easy_getinfo, &missing);
  Resolve(handle, "curl_easy_strerror", &lib.easy_strerror, &missing);
  Resolve(handle, "curl_multi_init", &lib.multi_init, &missing);
  Resolve(handle, "curl_multi_cleanup", &lib.multi_cleanup, &missing);
  Resolve(handle, "curl_multi_add_handle", &lib.multi_add_handle, &missing);
  Resolve(handle, "curl_multi_remove_handle", &lib.multi_remove_handle, &missing);
  Resolve(handle, "curl_multi_perform", &lib.multi_perform, &missing);
  Resolve(handle, "curl_multi_poll", &lib.multi_poll, &missing);
  Resolve(handle, "curl_multi_info_read", &lib.multi_info_read, &missing);
  Resolve(handle, "curl_slist_append", &lib.slist_append, &missing);
  Resolve(handle, "curl_slist_free_all", &lib.slist_free_all, &missing);
  if (!missing.empty()) {
    // curl_multi_poll came with 7.66; Debian 12 has 7.88.
    return absl::FailedPreconditionError(absl::StrCat(kSoname, " is too old: it lacks ", missing));
  }
  if (CURLcode code = lib.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return absl::InternalError(absl::StrCat("curl_global_init failed: ", lib.easy_strerror(code)));
  }
  return &lib;  // the handle stays open for the life of the process
}

}  // namespace

absl::StatusOr<const CurlLibrary*> LoadCurl() {
  static const absl::StatusOr<const CurlLibrary*> lib = Open();
  return lib;
}

}  // namespace agent::daemon::llm
