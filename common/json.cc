#include "common/json.h"

#include "absl/strings/str_cat.h"

namespace agent {

std::optional<JsonSyntaxError> FindJsonSyntaxError(std::string_view text) {
  // A sax that accepts every value and records the error: no exceptions, no document built.
  struct Locator : nlohmann::json_sax<Json> {
    std::optional<size_t> bytes_read;
    std::string what;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t pos, const std::string&,
                     const nlohmann::detail::exception& ex) override {
      bytes_read = pos;
      what = ex.what();
      return false;
    }
  } locator;
  Json::sax_parse(text, &locator, nlohmann::detail::input_format_t::json, /*strict=*/true);
  if (!locator.bytes_read.has_value()) return std::nullopt;
  // `[json.exception.parse_error.101] parse error at line 1, column 2: syntax error …`: the
  // part after the position is the problem.
  std::string_view problem = locator.what;
  if (const size_t column = problem.find("column "); column != std::string_view::npos) {
    if (const size_t colon = problem.find(": ", column); colon != std::string_view::npos) {
      problem.remove_prefix(colon + 2);
    }
  }
  // The parser reports how many bytes it read; the offending one is the last of them.
  const size_t read = *locator.bytes_read;
  return JsonSyntaxError{read > 0 ? read - 1 : 0, std::string(problem)};
}

absl::StatusOr<Json> ParseJson(std::string_view text) {
  // nlohmann's reader takes a NUL byte for the end of its input, so "{}\0junk" would parse;
  // JSON never holds a raw NUL (inside a string it must be escaped).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON (at byte ", nul + 1, ")"));
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    const std::optional<JsonSyntaxError> error = FindJsonSyntaxError(text);
    const size_t byte = error.has_value() ? error->offset + 1 : 0;
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON (at byte ", byte, ")"));
  }
  return j;
}

std::string DumpJson(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string GetString(const Json& obj, std::string_view key, std::string_view fallback) {
  if (!obj.is_object()) return std::string(fallback);
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::string(fallback);
  return it->get<std::string>();
}

int64_t GetInt(const Json& obj, std::string_view key, int64_t fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return fallback;
  return it->get<int64_t>();
}

bool GetBool(const Json& obj, std::string_view key, bool fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) return fallback;
  return it->get<bool>();
}

}  // namespace agent
