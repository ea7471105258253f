#include "client/view/attention.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/json.h"
#include "common/paths.h"

namespace agent::client {

bool Attention::EnabledByConfig() {
  if (const char* v = std::getenv("AGENT_NOTIFY"); v != nullptr && *v != '\0') {
    return std::string_view(v) != "0" && std::string_view(v) != "false";
  }
  absl::StatusOr<std::string> text = ReadFileToString(ConfigDir() + "/config.json");
  if (!text.ok()) return true;
  absl::StatusOr<Json> j = ParseJson(*text);
  return !j.ok() || !j->is_object() || GetBool(*j, "notify", true);
}

std::string Attention::Filter(std::string_view input) {
  if (!enabled_) return std::string(input);
  std::string out;
  out.reserve(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    if (input.substr(i, 3) == "\x1b[I" || input.substr(i, 3) == "\x1b[O") {
      focused_ = input[i + 2] == 'I';
      i += 2;
      continue;
    }
    out += input[i];
  }
  return out;
}

std::string Attention::Alert(std::string_view body) const {
  if (!enabled_ || focused_) return "";
  std::string text;
  for (char c : body) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) text += c;  // (C1 controls are not single bytes in UTF-8)
  }
  if (text.size() > 200) {
    text.resize(200);
    // Never half a character: drop what is left of a cut multi-byte one.
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80) != 0) text.pop_back();
  }
  return absl::StrCat("\a\x1b]9;agent: ", text, "\a\x1b]777;notify;agent;", text, "\a");
}

}  // namespace agent::client
