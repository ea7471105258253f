#include "daemon/llm/error_text.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace agent::daemon::llm {
namespace {

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool IsTransientKind(std::string_view kind) {
  const std::string k = Lower(kind);
  if (k.find("quota") != std::string::npos || k.find("insufficient") != std::string::npos ||
      k.find("spend_limit") != std::string::npos) {
    return false;
  }
  static constexpr std::array<std::string_view, 12> kTransient = {"server_error",
                                                                  "api_error",
                                                                  "overloaded_error",
                                                                  "overloaded",
                                                                  "internal_error",
                                                                  "internal_server_error",
                                                                  "internalservererror",
                                                                  "service_unavailable",
                                                                  "serviceunavailableerror",
                                                                  "timeout",
                                                                  "rate_limit_error",
                                                                  "rate_limit_exceeded"};
  return std::find(kTransient.begin(), kTransient.end(), k) != kTransient.end();
}

bool IsTransientCode(const Json& v) {
  if (!v.is_number_integer()) return false;
  const int64_t code = v.get<int64_t>();
  return code >= 500 || code == 429 || code == 408;
}

}  // namespace

std::string OneLineTruncated(std::string_view text, size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars * 4));
  size_t chars = 0;
  bool pending_space = false;
  size_t i = 0;
  while (i < text.size() && chars < max_chars) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (IsSpace(c)) {
      pending_space = !out.empty();
      ++i;
      continue;
    }
    if (pending_space) {
      out.push_back(' ');
      pending_space = false;
      if (++chars == max_chars) break;
    }
    const Utf8Unit u = Utf8UnitAt(text, i);
    if (u.valid) {
      out.append(text.substr(i, u.len));
    } else {
      out.append(kReplacementChar);
    }
    i += u.len;
    ++chars;
  }
  return out;
}

absl::Status InStreamErrorStatus(const Json& event_json, std::string_view raw_data) {
  std::string message;
  bool transient = false;
  const Json* err = nullptr;
  if (event_json.is_object()) {
    auto it = event_json.find("error");
    if (it != event_json.end() && it->is_object()) {
      err = &*it;
    } else if (it != event_json.end() && it->is_string()) {
      message = it->get<std::string>();
    } else {
      err = &event_json;  // vLLM: the error fields sit at the top level
    }
  }
  if (err != nullptr) {
    message = GetString(*err, "message");
    for (const char* key : {"type", "code"}) {
      auto f = err->find(key);
      if (f == err->end()) continue;
      if (f->is_string() && IsTransientKind(f->get<std::string>())) transient = true;
      if (IsTransientCode(*f)) transient = true;
    }
    if (IsTransientCode(err->value("status", Json()))) transient = true;
  } else if (event_json.is_discarded() || !event_json.is_structured()) {
    message = std::string(raw_data);  // `event: error` with plain text data
  }
  message = OneLineTruncated(message);
  if (message.empty()) message = "An error occurred during streaming";
  return transient ? absl::UnavailableError(message) : absl::InvalidArgumentError(message);
}

absl::Status CapExceededError(std::string_view what, size_t cap, std::string_view cap_name) {
  constexpr size_t kMiB = size_t{1} << 20;
  const std::string size =
      cap % kMiB == 0 ? absl::StrCat(cap / kMiB, " MiB") : absl::StrCat(cap, " bytes");
  return absl::ResourceExhaustedError(
      absl::StrCat(std::string(what), " is over the ", size, " cap (", std::string(cap_name), ")"));
}

}  // namespace agent::daemon::llm
