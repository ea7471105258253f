#include "daemon/tools/tool_args.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "daemon/tools/text_util.h"

namespace agent::daemon::tools {
namespace {

constexpr size_t kExcerptBytes = 80;

std::string Prefix(std::string_view tool) {
  return tool.empty() ? "" : absl::StrCat(AbslView(tool), ": ");
}

absl::Status WrongType(std::string_view tool, std::string_view field, std::string_view want,
                       const Json& got) {
  return absl::InvalidArgumentError(absl::StrCat(Prefix(tool), "argument \"", AbslView(field),
                                                 "\" must be ", AbslView(want), ", got ",
                                                 got.type_name()));
}

const Json* FindField(const Json& args, std::string_view field) {
  if (!args.is_object()) return nullptr;
  auto it = args.find(field);
  if (it == args.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

absl::StatusOr<Json> ParseToolArguments(std::string_view raw) {
  absl::string_view stripped = absl::StripAsciiWhitespace(AbslView(raw));
  std::string_view trimmed(stripped.data(), stripped.size());
  if (trimmed.empty()) return Json::object();
  Json parsed = Json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    std::string excerpt(Utf8Prefix(trimmed, kExcerptBytes));
    if (trimmed.size() > kExcerptBytes) absl::StrAppend(&excerpt, "…");
    return absl::InvalidArgumentError(absl::StrCat("arguments are not valid JSON: ", excerpt));
  }
  // vLLM sends `null` for a call without arguments.
  if (parsed.is_null()) return Json::object();
  if (parsed.is_string()) {
    Json inner = Json::parse(parsed.get_ref<const std::string&>(), nullptr, false);
    if (!inner.is_discarded() && inner.is_object()) return inner;
  }
  if (!parsed.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("arguments must be a JSON object, got ", parsed.type_name()));
  }
  return parsed;
}

absl::StatusOr<std::string> RequireString(const Json& args, std::string_view field,
                                          std::string_view tool) {
  const Json* v = FindField(args, field);
  if (v == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(tool), "missing required argument \"", AbslView(field), "\""));
  }
  if (!v->is_string()) return WrongType(tool, field, "a string", *v);
  return v->get<std::string>();
}

absl::StatusOr<std::optional<std::string>> OptionalString(const Json& args, std::string_view field,
                                                          std::string_view tool) {
  const Json* v = FindField(args, field);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(tool, field, "a string", *v);
  return std::optional<std::string>(v->get<std::string>());
}

absl::StatusOr<std::optional<int64_t>> OptionalInt(const Json& args, std::string_view field,
                                                   std::string_view tool) {
  const Json* v = FindField(args, field);
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_number_unsigned()) {  // before is_number_integer, which is true for it too
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return WrongType(tool, field, "an integer", *v);
    return std::optional<int64_t>(static_cast<int64_t>(u));
  }
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  return WrongType(tool, field, "an integer", *v);
}

absl::StatusOr<std::optional<bool>> OptionalBool(const Json& args, std::string_view field,
                                                 std::string_view tool) {
  const Json* v = FindField(args, field);
  if (v == nullptr) return std::optional<bool>();
  if (v->is_boolean()) return std::optional<bool>(v->get<bool>());
  return WrongType(tool, field, "a boolean", *v);
}

}  // namespace agent::daemon::tools
