#include "daemon/mcp/tool_shape.h"

#include <cctype>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/mcp_server_name.h"
#include "common/utf8.h"

namespace agent::daemon::mcp {
namespace {

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// At most `max` bytes of `s`, never cutting a UTF-8 character.
std::string CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(std::string(s.substr(0, end)), "…");
}

std::string DescribeBlock(const Json& block) {
  const std::string type = GetString(block, "type");
  if (type == "text") return GetString(block, "text");
  if (type == "image" || type == "audio") {
    return absl::StrFormat("[%s content: %s, %d bytes of base64, not shown]", type,
                           GetString(block, "mimeType", "unknown type"),
                           GetString(block, "data").size());
  }
  if (type == "resource_link") {
    return absl::StrCat("[resource link: ", GetString(block, "uri"),
                        block.contains("name") ? " (" + GetString(block, "name") + ")" : "", "]");
  }
  if (type == "resource" && block.contains("resource") && block["resource"].is_object()) {
    const Json& r = block["resource"];
    std::string head =
        absl::StrCat("[resource ", GetString(r, "uri"), " ", GetString(r, "mimeType"), "]");
    if (r.contains("text")) return absl::StrCat(head, "\n", GetString(r, "text"));
    return absl::StrCat(head, " (binary, not shown)");
  }
  return absl::StrCat("[", type.empty() ? "unknown" : type, " content, not shown]");
}

}  // namespace

bool ValidServerName(std::string_view name) { return ValidMcpServerName(name); }

std::string ModelToolName(std::string_view server, std::string_view tool) {
  std::string name = absl::StrCat("mcp__", std::string(server), "__");
  for (char c : tool) name.push_back(NameChar(c) ? c : '_');
  if (name.size() <= kMaxToolNameBytes) return name;
  const std::string suffix =
      absl::StrFormat("_%08x", Fnv1a(absl::StrCat(std::string(server), "/", std::string(tool))));
  name.resize(kMaxToolNameBytes - suffix.size());
  return name + suffix;
}

Json SanitizeSchema(const Json& schema) {
  const Json any = {{"type", "object"}, {"properties", Json::object()}};
  if (!schema.is_object() || DumpJson(schema).size() > kMaxSchemaBytes) return any;
  Json out = schema;
  for (const char* key : {"$schema", "$id", "oneOf", "anyOf", "allOf", "not", "enum", "const"}) {
    out.erase(key);
  }
  out["type"] = "object";
  if (!out.contains("properties") || !out["properties"].is_object()) {
    out["properties"] = Json::object();
  }
  if (out.contains("required") && !out["required"].is_array()) out.erase("required");
  return out;
}

Json FunctionSchema(const std::string& name, const std::string& description, const Json& schema) {
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", CutUtf8(ToValidUtf8(description), kMaxDescriptionBytes)},
            {"parameters", SanitizeSchema(schema)}}}};
}

RenderedResult RenderCallResult(const Json& result) {
  RenderedResult out;
  out.is_error = GetBool(result, "isError");
  if (auto content = result.find("content"); content != result.end() && content->is_array()) {
    for (const Json& block : *content) {
      if (!block.is_object()) continue;
      if (!out.text.empty()) out.text += "\n";
      out.text += DescribeBlock(block);
    }
  }
  if (out.text.empty()) {
    if (auto s = result.find("structuredContent"); s != result.end()) out.text = DumpJson(*s);
  }
  if (out.text.empty())
    out.text = out.is_error ? "(the tool failed without a message)" : "(no output)";
  out.text = ToValidUtf8(out.text);
  return out;
}

}  // namespace agent::daemon::mcp
