// libcurl, opened with dlopen on the first model request instead of linked at start-up.
//
// libcurl brings ~30 shared libraries with it (GnuTLS, Kerberos, LDAP, ...), which cost an
// idle daemon about 4 MB of resident pages and the loader a few milliseconds per start; a
// daemon that only serves `agent ls` or an attach never needs them. The table holds exactly
// the functions the transport calls, typed from <curl/curl.h>.
#ifndef AGENT_DAEMON_LLM_CURL_LIBRARY_H_
#define AGENT_DAEMON_LLM_CURL_LIBRARY_H_

#include <curl/curl.h>

#include "absl/status/statusor.h"

namespace agent::daemon::llm {

struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// Opens libcurl once per process (thread-safe), resolves the table and runs
// curl_global_init. The error names the library when it is missing or too old.
absl::StatusOr<const CurlLibrary*> LoadCurl();

}  // namespace agent::daemon::llm

#endif  // AGENT_DAEMON_LLM_CURL_LIBRARY_H_
