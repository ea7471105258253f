// Fuzzes loading a session file: any bytes either fail to load with a message, or load into a
// Transcript that, once sealed, can be sent to a model; and a saved transcript loads again.
// The line-by-line load (FromFileText) must agree with parsing the whole text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/json.h"
#include "common/transcript.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto from_file = agent::Transcript::FromFileText(text);
  if (!from_file.ok() && from_file.status().message().empty()) __builtin_trap();
  auto j = agent::ParseJson(text);
  if (!j.ok()) {
    if (from_file.ok()) __builtin_trap();
    return 0;
  }
  auto t = agent::Transcript::FromJson(j->is_array() ? *j : agent::Json::object());
  if (t.ok() != from_file.ok()) __builtin_trap();
  if (t.ok() && from_file->messages() != t->messages()) __builtin_trap();
  if (from_file.ok()) {
    auto reread = agent::ParseJson(from_file->FileText());
    if (!reread.ok() || *reread != t->messages()) __builtin_trap();
  }
  if (!t.ok()) {
    if (t.status().message().empty()) __builtin_trap();
    return 0;
  }
  t->Seal("fuzz");
  if (!t->ValidateForRequest().ok()) __builtin_trap();
  auto again = agent::ParseJson(agent::DumpJson(t->messages()));
  if (!again.ok() || !agent::Transcript::FromJson(*again).ok()) __builtin_trap();
  size_t cut = t->CutPoint();
  if (cut > t->FirstCompactable()) {
    if (t->ReplacePrefix(cut, "summary").ok() && !t->ValidateForRequest().ok()) __builtin_trap();
  }
  return 0;
}
