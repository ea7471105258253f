#include "daemon/tools/tool_helpers.h"

#include "common/utf8.h"

namespace agent::daemon::tools {

Json FunctionSchema(std::string_view name, std::string_view description, Json properties,
                    std::initializer_list<std::string_view> required) {
  Json req = Json::array();
  for (std::string_view r : required) req.push_back(std::string(r));
  Json parameters = {
      {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!req.empty()) parameters["required"] = std::move(req);
  return Json{{"type", "function"},
              {"function",
               {{"name", std::string(name)},
                {"description", std::string(description)},
                {"parameters", std::move(parameters)}}}};
}

Json Property(std::string_view type, std::string_view description) {
  Json p = {{"type", std::string(type)}};
  if (!description.empty()) p["description"] = std::string(description);
  return p;
}

ToolOutcome DeclaredTool::Answer(absl::StatusOr<std::string> text) {
  if (!text.ok()) return ErrorOutcome(text.status());
  return TextOutcome(*std::move(text));
}

ToolOutcome DeclaredTool::Answer(absl::StatusOr<ToolOutcome> outcome) {
  if (!outcome.ok()) return ErrorOutcome(outcome.status());
  return *std::move(outcome);
}

ToolOutcome ErrorOutcome(const absl::Status& status) {
  const absl::string_view m = status.message();
  return ToolOutcome{ToValidUtf8(std::string_view(m.data(), m.size())), /*is_error=*/true};
}

ToolOutcome TextOutcome(std::string text) {
  MakeValidUtf8(&text);
  return ToolOutcome{std::move(text), /*is_error=*/false};
}

}  // namespace agent::daemon::tools
