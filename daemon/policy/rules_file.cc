// Settings files: parsing with positions, loading, merging, appending allow rules.
#include "daemon/policy/rules_file.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "daemon/policy/bash_split.h"

namespace agent::daemon::policy {
namespace {

// `line:column` (1-based) of byte `offset` of `text`.
std::string Position(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return absl::StrCat(line, ":", column);
}

absl::Status ErrorAt(std::string_view path, std::string_view text, size_t offset,
                     std::string_view problem) {
  return absl::InvalidArgumentError(std::string(path) + ":" + Position(text, offset) + ": " +
                                    std::string(problem));
}

// Where `"key"` is written as an object key, or 0.
size_t KeyOffset(std::string_view text, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\"";
  for (size_t at = text.find(quoted); at != std::string_view::npos;
       at = text.find(quoted, at + 1)) {
    size_t after = at + quoted.size();
    while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
    if (after < text.size() && text[after] == ':') return at;
  }
  return 0;
}

// The syntax error's position and description.
absl::Status JsonSyntaxErrorAt(std::string_view text, std::string_view path) {
  const JsonSyntaxError error = FindJsonSyntaxError(text).value_or(JsonSyntaxError{});
  return ErrorAt(path, text, error.offset, "invalid JSON: " + error.problem);
}

absl::Status ParseRuleList(const Json& settings, const char* key, std::string_view text,
                           std::string_view path, std::vector<Rule>* out) {
  auto it = settings.find(key);
  if (it == settings.end() || it->is_null()) return absl::OkStatus();
  const size_t key_at = KeyOffset(text, key);
  if (!it->is_array()) {
    return ErrorAt(path, text, key_at, absl::StrCat("\"", key, "\" must be an array of strings"));
  }
  size_t search_from = key_at;
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& entry = (*it)[i];
    const std::string name = absl::StrCat(key, "[", i, "]");
    if (!entry.is_string()) {
      return ErrorAt(path, text, key_at, absl::StrCat(name, " must be a string"));
    }
    // The entry as JSON usually spells it (a file may escape differently: then the key's
    // line is the best guess).
    const size_t at = text.find(DumpJson(entry), search_from);
    if (at != std::string_view::npos) search_from = at;
    absl::StatusOr<Rule> rule = ParseRule(entry.get<std::string>());
    if (!rule.ok()) {
      return ErrorAt(path, text, at == std::string_view::npos ? key_at : at,
                     absl::StrCat(name, ": ", rule.status().message()));
    }
    out->push_back(*std::move(rule));
  }
  return absl::OkStatus();
}

bool SameRule(const Rule& a, const Rule& b) { return CanonicalRule(a) == CanonicalRule(b); }

}  // namespace

std::string CanonicalRule(const Rule& rule) {
  const std::string tool = absl::AsciiStrToLower(rule.tool);
  const std::string pattern =
      tool == "bash" ? NormalizeCommandWhitespace(rule.pattern) : rule.pattern;
  return FormatRule(Rule{tool, pattern});
}

absl::StatusOr<RuleSet> ParseRulesText(std::string_view text, std::string_view path) {
  Json settings = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (settings.is_discarded()) return JsonSyntaxErrorAt(text, path);
  if (!settings.is_object()) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    return ErrorAt(path, text, first == std::string_view::npos ? 0 : first,
                   "settings must be a JSON object");
  }
  RuleSet rules;
  RETURN_IF_ERROR(ParseRuleList(settings, "allow", text, path, &rules.allow));
  RETURN_IF_ERROR(ParseRuleList(settings, "deny", text, path, &rules.deny));
  return rules;
}

absl::StatusOr<RuleSet> LoadRules(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (absl::IsNotFound(text.status())) return RuleSet{};
  if (!text.ok()) return Annotate(text.status(), path);
  return ParseRulesText(*text, path);
}

void MergeRules(const RuleSet& from, RuleSet* into) {
  auto merge = [](const std::vector<Rule>& first, std::vector<Rule>* list) {
    std::vector<Rule> merged;
    merged.reserve(first.size() + list->size());
    for (const std::vector<Rule>* source : {&first, static_cast<const std::vector<Rule>*>(list)}) {
      for (const Rule& r : *source) {
        const bool seen = std::any_of(merged.begin(), merged.end(),
                                      [&](const Rule& m) { return SameRule(m, r); });
        if (!seen) merged.push_back(r);
      }
    }
    *list = std::move(merged);
  };
  merge(from.allow, &into->allow);
  merge(from.deny, &into->deny);
}

}  // namespace agent::daemon::policy
