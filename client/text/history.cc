#include "client/text/history.h"

#include "absl/strings/str_cat.h"
#include "client/input/custom_commands.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"

namespace agent::client {
namespace {

std::string StringField(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

// A message's content: a string, or a list's text parts with "[image]" for each image.
std::string ContentField(const rapidjson::Value& m) {
  auto it = m.FindMember("content");
  if (it == m.MemberEnd() || !it->value.IsArray()) return StringField(m, "content");
  std::string out;
  for (const rapidjson::Value& part : it->value.GetArray()) {
    if (!part.IsObject()) continue;
    const std::string piece =
        StringField(part, "type") == "image_url" ? "[image]" : StringField(part, "text");
    if (!out.empty() && !piece.empty()) out += '\n';
    out += piece;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<HistoryMessage>> ParseHistory(std::string_view transcript_json) {
  // In situ: strings are decoded in this copy instead of being copied out one by one. No
  // encoding check: the text is a protobuf string, whose UTF-8 protobuf has checked.
  std::string buffer(transcript_json);
  rapidjson::Document doc;
  doc.ParseInsitu(buffer.data());
  if (doc.HasParseError()) {
    return absl::InvalidArgumentError(
        absl::StrCat("transcript JSON at byte ", doc.GetErrorOffset(), ": ",
                     rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsArray()) return absl::InvalidArgumentError("transcript JSON is not an array");
  std::vector<HistoryMessage> out;
  out.reserve(doc.Size());
  for (const rapidjson::Value& m : doc.GetArray()) {
    if (!m.IsObject()) continue;
    HistoryMessage h;
    h.role = StringField(m, "role");
    h.content = ContentField(m);
    if (h.role == "user") h.content = TypedPart(h.content);  // not the files @mentions attached
    auto calls = m.FindMember("tool_calls");
    if (calls != m.MemberEnd() && calls->value.IsArray()) {
      for (const rapidjson::Value& c : calls->value.GetArray()) {
        if (!c.IsObject()) continue;
        auto fn = c.FindMember("function");
        if (fn == c.MemberEnd() || !fn->value.IsObject()) {
          h.calls.push_back({});
          continue;
        }
        h.calls.push_back({StringField(fn->value, "name"), StringField(fn->value, "arguments")});
      }
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace agent::client
